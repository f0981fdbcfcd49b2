#!/usr/bin/env bash
# Position encodings through the command line (docs/POSITION.md), fast tier, no corpus needed:
# `tfm init` with every sinusoidal option, none and learned writes the metadata and tensors of
# docs/POSITION.md; `tfm train --data ... --pe learned` on the small corpus of
# test_translate_cli.sh (the halves of tests/fixtures/tok_train.txt) trains, skips the pairs longer
# than max_len, and the model translates (a source longer than max_len is cut with a warning naming
# the line, never read past the learned table), scores, and trains on id files; bad flag
# combinations exit 2 with a message naming the option and the encoding.
source "$(dirname "$0")/lib.sh"
SMALL=(--d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20)

# header_has FILE TEXT: the safetensors JSON header of FILE contains TEXT
header_has() { head -c 8192 "$1" | tr -d '\0' | grep -aq -- "$2"; }

# tfm init: each variant's metadata; learned has a (max_len, d_model) table per side
expect_ok "init sinusoidal options" "$TFM" init "${SMALL[@]}" --pe-layout concat --pe-zero-pad --pe-scale \
  --save "$WORK/sin.st"
header_has "$WORK/sin.st" '"pe_layout":"concat"' && header_has "$WORK/sin.st" '"pe_zero_pad":"1"' && \
  header_has "$WORK/sin.st" '"pe_scale":"1"' && ok || bad "init: the sinusoidal options are not in the metadata"
expect_ok "init none" "$TFM" init "${SMALL[@]}" --pe none --save "$WORK/none.st"
header_has "$WORK/none.st" '"pe":"none"' && ok || bad "init --pe none: metadata"
expect_ok "init learned" "$TFM" init "${SMALL[@]}" --pe learned --max-len 40 --save "$WORK/learned.st"
header_has "$WORK/learned.st" '"transformer.encoder.pos_embed.weight":{"shape":\[40,16\]' && \
  header_has "$WORK/learned.st" '"transformer.decoder.pos_embed.weight":{"shape":\[40,16\]' && \
  header_has "$WORK/learned.st" '"pe":"learned"' && ok || bad "init --pe learned: tensors or metadata"
! header_has "$WORK/none.st" 'pos_embed' && ok || bad "init --pe none wrote a position table"

# score with a learned model: a target longer than max_len is refused, naming the line
printf '5 6 7\n' > "$WORK/s.ids"
printf '1 4 2\n' > "$WORK/t.ids"
expect_ok "score learned" "$TFM" score --model "$WORK/learned.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids"
{ printf '1'; for i in $(seq 45); do printf ' 4'; done; echo ' 2'; } > "$WORK/tlong.ids"
expect_fail "score past max_len" 1 "max_len 40" "$TFM" score --model "$WORK/learned.st" --src-ids "$WORK/s.ids" \
  --tgt-ids "$WORK/tlong.ids"
# training on id files
expect_ok "train --init learned on ids" "$TFM" train --init "$WORK/learned.st" --src-ids "$WORK/s.ids" \
  --tgt-ids "$WORK/t.ids" --steps 3 --save "$WORK/learned3.st"
header_has "$WORK/learned3.st" '"pe":"learned"' && ok || bad "train on ids lost pe learned"

# bad combinations: an option of another encoding, a value that is not one, concat with odd d_model
expect_fail "zero_pad with learned" 2 "pe_zero_pad (flag --pe-zero-pad) is not an option of position encoding 'learned'" \
  "$TFM" init "${SMALL[@]}" --pe learned --pe-zero-pad --save "$WORK/x.st"
expect_fail "layout with none" 2 "pe_layout (flag --pe-layout) is not an option of position encoding 'none'" \
  "$TFM" init "${SMALL[@]}" --pe none --pe-layout concat --save "$WORK/x.st"
expect_fail "unknown layout" 2 "--pe-layout must be interleaved, concat or tensor2tensor, got 'diagonal'" \
  "$TFM" init "${SMALL[@]}" --pe-layout diagonal --save "$WORK/x.st"
expect_fail "unknown pe" 2 "--pe must be" "$TFM" init "${SMALL[@]}" --pe wavelet --save "$WORK/x.st"
expect_fail "concat with odd d_model" 2 "pe_layout concat needs an even d_model" \
  "$TFM" init --d-model 15 --n-heads 3 --src-vocab 20 --tgt-vocab 20 --pe-layout concat --save "$WORK/x.st"
[ ! -e "$WORK/x.st" ] && ok || bad "a refused init wrote its checkpoint"

# train --data --pe learned on the small corpus, with one pair longer than max_len (skipped)
SL=$WORK/small
tiny_corpus "$SL"
{ for i in $(seq 120); do printf 'word%d ' "$i"; done; echo; } >> "$SL/train.en"
echo "palabra" >> "$SL/train.es"
expect_fail "scale with learned (train)" 2 "pe_scale (flag --pe-scale) is not an option of position encoding 'learned'" \
  "$TFM" train --data "$SL" --pe learned --pe-scale --vocab-size 500 --save "$WORK/x.st"
[ ! -e "$WORK/x.st" ] && ok || bad "a refused train wrote its checkpoint"
M=$WORK/m.safetensors
if "$TFM" train --data "$SL" --pe learned --save "$M" --steps 20 --d-model 32 --n-heads 2 --d-ff 64 \
     --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --warmup 10 --eval-every 10 \
     --log-every 10 --max-len 48 --seed 1 2> "$WORK/train.log"; then
  ok
else
  bad "train --data --pe learned: $(tail -3 "$WORK/train.log")"
  finish pe_cli
  exit 1
fi
grep -q "validation loss" "$WORK/train.log" && ok || bad "no validation loss reported"
grep -Eq "; [1-9][0-9]*: longer than max_len 48" "$WORK/train.log" && ok || \
  bad "the pair longer than max_len was not reported skipped: $(grep 'training pairs' "$WORK/train.log")"
header_has "$M" '"transformer.decoder.pos_embed.weight":{"shape":\[48,32\]' && ok || \
  bad "the trained checkpoint lacks the learned tables"

# translate: aligned output, greedy and beam; a long source is cut to max_len with a warning
{ echo "In the beginning God created the heavens and the earth."; echo; \
  for i in $(seq 150); do printf 'word%d ' "$i"; done; echo; echo "Jesus wept."; } > "$WORK/in.txt"
for beam in 1 3; do
  err=$("$TFM" translate --model "$M" --beam "$beam" --input "$WORK/in.txt" --output "$WORK/out$beam.txt" 2>&1)
  rc=$?
  no_crash "translate beam $beam" "$err"
  [ "$rc" -eq 0 ] && [ "$(wc -l < "$WORK/out$beam.txt")" -eq 4 ] && [ -z "$(sed -n 2p "$WORK/out$beam.txt")" ] && \
    ok || bad "translate --beam $beam with pe learned: exit $rc, $(wc -l < "$WORK/out$beam.txt") lines: $err"
  case "$err" in *"cut to it (first: line 3)"*) ok ;; *) bad "beam $beam: no truncation warning naming line 3: $err" ;; esac
done
# the same without the KV cache gives the same translation
"$TFM" translate --model "$M" --no-kv-cache --input "$WORK/in.txt" --output "$WORK/out_nc.txt" 2>/dev/null
cmp -s "$WORK/out1.txt" "$WORK/out_nc.txt" && ok || bad "pe learned: --no-kv-cache translates differently"

finish pe_cli
