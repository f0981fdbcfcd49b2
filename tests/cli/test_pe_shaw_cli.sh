#!/usr/bin/env bash
# `--pe shaw` end to end (fast tier, no corpus needed): on the small parallel text of
# test_translate_cli.sh (tests/fixtures/tok_train.txt), `tfm train --data ... --pe shaw
# --pe-shaw-values --pe-max-distance 4` trains with dropout, saves the relative tables and the pe
# options, translates (greedy and beam 4, with and without the KV cache: the same lines), scores
# after a reload, and resumes exactly (60 steps straight == 30 + --resume + 30, bit for bit). Options
# of other encodings are refused.
source "$(dirname "$0")/lib.sh"
export OMP_NUM_THREADS=2

SL=$WORK/small
tiny_corpus "$SL"

ARGS=(--data "$SL" --pe shaw --pe-shaw-values --pe-max-distance 4 --d-model 32 --n-heads 2 --d-ff 64
      --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --warmup 10 --dropout 0.1
      --eval-every 30 --log-every 30 --max-len 64 --seed 1)
M=$WORK/m.safetensors
if "$TFM" train "${ARGS[@]}" --steps 60 --save "$M" 2> "$WORK/train.log" >/dev/null; then ok
else
  bad "train --pe shaw: $(tail -3 "$WORK/train.log")"
  finish pe_shaw_cli
fi
grep -q "validation loss" "$WORK/train.log" && ok || bad "no validation loss reported"
# the checkpoint: pe options in the metadata, one rel_k and one rel_v table (2k+1 = 9 rows, d_k 16) per layer
hdr=$(head -c 65536 "$M" | tr -d '\0')
for want in '"pe":"shaw"' '"pe_max_distance":"4"' '"pe_shaw_values":"1"' \
            '"transformer.encoder.layers.0.self_attn.rel_k.weight":{"shape":[9,16]' \
            '"transformer.encoder.layers.0.self_attn.rel_v.weight":{"shape":[9,16]' \
            '"transformer.decoder.layers.0.self_attn.rel_k.weight":{"shape":[9,16]' \
            '"transformer.decoder.layers.0.self_attn.rel_v.weight":{"shape":[9,16]'; do
  case "$hdr" in *"$want"*) ok ;; *) bad "checkpoint header lacks $want" ;; esac
done

# translate: one line per input line; the KV cache gives the recompute path's lines, greedy and beam 4
printf 'In the beginning God created the heavens and the earth.\n\nAnd God said, Let there be light: and there was light.\nJesus wept.\n' > "$WORK/in.txt"
for beam in 1 4; do
  "$TFM" translate --model "$M" --beam $beam --input "$WORK/in.txt" --output "$WORK/c$beam.txt" 2>/dev/null \
    && ok || bad "translate --beam $beam failed"
  "$TFM" translate --model "$M" --beam $beam --no-kv-cache --input "$WORK/in.txt" --output "$WORK/r$beam.txt" \
    2>/dev/null && ok || bad "translate --beam $beam --no-kv-cache failed"
  [ "$(wc -l < "$WORK/c$beam.txt")" -eq 4 ] && [ -n "$(sed -n 3p "$WORK/c$beam.txt")" ] && ok || \
    bad "beam $beam: $(cat -A "$WORK/c$beam.txt")"
  cmp -s "$WORK/c$beam.txt" "$WORK/r$beam.txt" && ok || bad "beam $beam: cached and recomputed translations differ"
done
# eval runs on the reloaded model
out=$("$TFM" eval --model "$M" --src "$SL/valid.en" --ref "$SL/valid.es" 2>/dev/null)
grep -q '^BLEU = ' <<< "$out" && ok || bad "eval printed no BLEU line: $out"

# exact resume: 60 steps straight == 30 steps, then --resume to 60
"$TFM" train "${ARGS[@]}" --steps 30 --save "$WORK/split.st" >/dev/null 2>&1 || bad "first half failed"
"$TFM" train "${ARGS[@]}" --steps 60 --resume "$WORK/split.st" --save "$WORK/split.st" >/dev/null 2>"$WORK/res.log" \
  || bad "resume failed: $(tail -2 "$WORK/res.log")"
cmp -s "$M" "$WORK/split.st" && ok || bad "60 steps straight != 30 + resume + 30 (checkpoints differ)"

# options of other encodings are refused; shaw's own options need --pe shaw
expect_fail "t5 option with shaw" 2 "pe_buckets (flag --pe-buckets) is not an option of position encoding 'shaw'" \
  "$TFM" init --pe shaw --pe-buckets 8 --save "$WORK/x.st"
expect_fail "shaw option without shaw" 2 "pe_shaw_values (flag --pe-shaw-values) is not an option of position encoding 'sinusoidal'" \
  "$TFM" init --pe-shaw-values --save "$WORK/x.st"

finish pe_shaw_cli
