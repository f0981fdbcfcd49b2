#!/usr/bin/env bash
# Memory up front at the command line (docs/FUZZING.md): a run that would not fit in --max-memory
# is refused at once (exit 1, before any training or decoding, no file written) with the estimate
# and the flag to lower, in each of tfm train (id files and --data), tfm translate and tfm eval; a
# malformed --max-memory is a usage error (exit 2); a limit the run fits in changes nothing.
source "$(dirname "$0")/lib.sh"
ROOT=${TFM_SOURCE_DIR:-.}
M=$ROOT/fuzz/corpus/safetensors/resumable_tok.safetensors   # d_model 8, with a tokenizer
"$TFM" init --d-model 8 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 --d-ff 16 --src-vocab 20 --tgt-vocab 20 \
  --save "$WORK/init.st" > /dev/null 2>&1 || bad "tfm init failed"
printf '3 4 5\n6 7\n' > "$WORK/s.ids"
printf '1 8 9 2\n1 10 2\n' > "$WORK/t.ids"
mkdir -p "$WORK/d"
printf 'In the beginning.\nThe Word.\n' > "$WORK/d/train.en"
printf 'En el principio.\nEl Verbo.\n' > "$WORK/d/train.es"
printf 'In the beginning.\n' > "$WORK/src.en"
cp "$WORK/src.en" "$WORK/ref.es"

expect_fail "train (ids) over --max-memory" 1 "lower --batch-size" "$TFM" train --init "$WORK/init.st" \
  --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 5 --save "$WORK/o.st" --max-memory 1M
expect_fail_re "the refusal gives the estimate and the limit" 1 "needs about [0-9.]+ MiB of memory but --max-memory 1M allows 1.00 MiB \(parameters" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 5 --save "$WORK/o.st" \
  --max-memory 1M
[ ! -e "$WORK/o.st" ] && ok || bad "a refused run wrote its --save file"
expect_fail "train --data over --max-memory" 1 "lower --batch-tokens" "$TFM" train --data "$WORK/d" --init "$M" \
  --steps 5 --save "$WORK/o2.st" --max-memory 100K
expect_fail "translate over --max-memory" 1 "lower --batch-size, --beam or --max-len-a/--max-len-b" "$TFM" translate \
  --model "$M" --input "$WORK/src.en" --output "$WORK/out.es" --max-memory 2M
[ ! -e "$WORK/out.es" ] && ok || bad "a refused translate wrote its --output file"
expect_fail "eval over --max-memory" 1 "KV cache" "$TFM" eval --model "$M" --src "$WORK/src.en" --ref "$WORK/ref.es" \
  --beam 4 --max-memory 1M
expect_fail "bad --max-memory value" 2 "memory size '2X'" "$TFM" train --init "$WORK/init.st" \
  --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 5 --save "$WORK/o.st" --max-memory 2X
expect_fail "bad --max-memory value (translate)" 2 "--max-memory" "$TFM" translate --model "$M" --max-memory -3G
expect_ok "train fits in 1G" "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" \
  --steps 2 --save "$WORK/o.st" --max-memory 1G
expect_ok "translate fits in 1G" "$TFM" translate --model "$M" --input "$WORK/src.en" --max-memory 1G
finish memory_cli
