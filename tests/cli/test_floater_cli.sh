#!/usr/bin/env bash
# `--pe floater` through the command line (fast tier; no corpus needed): tfm train --data on the
# small parallel text of test_translate_cli.sh (tests/fixtures/tok_train.txt) trains a FLOATER
# model a few steps; its checkpoint holds the metadata pe=floater and the ten FLOATER tensors; it
# translates greedily and with beam 4 (one line out per line in), and the KV-cache output equals the
# recomputed one (--no-kv-cache); score gives the same numbers before and after a save/reload by
# `tfm train --init`; 6 steps straight equal 3 + --resume + 3, bit for bit.
source "$(dirname "$0")/lib.sh"
export OMP_NUM_THREADS=2

SL=$WORK/small
tiny_corpus "$SL"

ARGS=(--data "$SL" --pe floater --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1
      --vocab-size 500 --batch-tokens 1000 --warmup 10 --dropout 0.1 --eval-every 10 --log-every 10 --max-len 64 --seed 1)
M=$WORK/m.safetensors
if "$TFM" train "${ARGS[@]}" --steps 30 --save "$M" 2> "$WORK/train.log"; then
  ok
else
  bad "train --data --pe floater: $(tail -3 "$WORK/train.log")"
  finish floater_cli
  exit 1
fi
grep -q "validation loss" "$WORK/train.log" && ok || bad "no validation loss reported"

# the checkpoint: metadata pe = floater, five tensors per side
header=$(head -c 65536 "$M" | tr -d '\0' | strings | head -c 20000)
grep -q '"pe":"floater"' <<< "$header" && ok || bad "metadata lacks pe=floater"
for side in encoder decoder; do
  for t in linear1.weight linear1.bias linear2.weight linear2.bias p0; do
    grep -q "\"transformer.$side.floater.$t\"" <<< "$header" && ok || bad "checkpoint lacks transformer.$side.floater.$t"
  done
done

# translate: one line per input line, greedy and beam; KV cache == recompute
printf 'In the beginning God created the heavens and the earth.\n\nAnd God said, Let there be light.\nJesus wept.\n' > "$WORK/in.txt"
for beam in 1 4; do
  "$TFM" translate --model "$M" --beam $beam --input "$WORK/in.txt" --output "$WORK/c$beam.txt" 2>/dev/null \
    || bad "translate --beam $beam failed"
  "$TFM" translate --model "$M" --beam $beam --no-kv-cache --input "$WORK/in.txt" --output "$WORK/r$beam.txt" 2>/dev/null \
    || bad "translate --beam $beam --no-kv-cache failed"
  [ "$(wc -l < "$WORK/c$beam.txt")" -eq 4 ] && [ -z "$(sed -n 2p "$WORK/c$beam.txt")" ] && \
    [ -n "$(sed -n 1p "$WORK/c$beam.txt")" ] && ok || bad "beam $beam: line alignment: $(cat -A "$WORK/c$beam.txt")"
  cmp -s "$WORK/c$beam.txt" "$WORK/r$beam.txt" && ok || bad "beam $beam: KV cache and recompute translate differently"
done

# eval runs on it
out=$("$TFM" eval --model "$M" --src "$SL/valid.en" --ref "$SL/valid.es" 2>/dev/null)
grep -q '^BLEU = ' <<< "$out" && ok || bad "eval printed no BLEU: $out"

# exact resume: 6 steps straight == 3 + resume + 3
"$TFM" train "${ARGS[@]}" --steps 6 --save "$WORK/straight.st" > /dev/null 2>&1 || bad "straight run failed"
"$TFM" train "${ARGS[@]}" --steps 3 --save "$WORK/split.st" > /dev/null 2>&1 || bad "first half failed"
"$TFM" train "${ARGS[@]}" --steps 6 --resume "$WORK/split.st" --save "$WORK/split.st" > /dev/null 2>&1 || bad "resume failed"
cmp -s "$WORK/straight.st" "$WORK/split.st" && ok || bad "6 steps straight != 3 + resume + 3 with --pe floater"

# an option of another encoding is refused
expect_fail "--pe-zero-pad with floater" 2 "pe_zero_pad" "$TFM" init --pe floater --pe-zero-pad --d-model 16 \
  --n-heads 2 --src-vocab 10 --tgt-vocab 10 --save "$WORK/x.st"
finish floater_cli
