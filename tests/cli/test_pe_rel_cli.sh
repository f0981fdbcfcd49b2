#!/usr/bin/env bash
# `tfm train --data ... --pe X` for the relative encodings t5, alibi, rope (both pairings) on the
# tiny fixture corpus of test_translate_cli.sh (no corpus needed): a few steps train, the
# checkpoint records the encoding and its options (and T5's tables under the stack prefixes),
# the model translates with one output line per input line (greedy and beam), t5 resumes bit for
# bit (its tables have Adam moments too), and options of another encoding or impossible sizes are
# refused before anything is written.
source "$(dirname "$0")/lib.sh"

SL=$WORK/small
tiny_corpus "$SL"

MODEL=(--d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 --n-dec-layers 2 --vocab-size 500 --max-len 64)
TRAIN=(--batch-tokens 600 --warmup 4 --eval-every 4 --log-every 4 --seed 3)
printf 'In the beginning God created the heavens and the earth.\n\nJesus wept.\n' > "$WORK/in.txt"

# header: the safetensors JSON header of a checkpoint (8-byte length, then the header)
header() { head -c 65536 "$1" | tail -c +9 | tr -d '\0' | head -c 60000; }

for variant in "t5" "alibi" "rope" "rope half"; do
  set -- $variant
  pe=$1
  extra=()
  [ "${2:-}" = half ] && extra=(--rope-pairing half)
  tag=$pe${2:+-$2}
  M=$WORK/$tag.safetensors
  if "$TFM" train --data "$SL" --save "$M" --steps 8 "${MODEL[@]}" "${TRAIN[@]}" --pe "$pe" "${extra[@]}" \
       2> "$WORK/$tag.log"; then ok
  else
    bad "$tag: train --data --pe $pe failed: $(tail -3 "$WORK/$tag.log")"
    continue
  fi
  grep -q "validation loss" "$WORK/$tag.log" && ok || bad "$tag: no validation loss reported"
  h=$(header "$M")
  grep -q "\"pe\":\"$pe\"" <<< "$h" && ok || bad "$tag: the checkpoint does not record pe=$pe"
  if [ "$pe" = rope ]; then
    grep -q "\"rope_pairing\":\"${2:-interleaved}\"" <<< "$h" && ok || bad "$tag: rope_pairing not recorded"
  fi
  if [ "$pe" = t5 ]; then
    grep -qF '"transformer.encoder.relative_attention_bias.weight":{"shape":[32,2]' <<< "$h" && \
      grep -qF '"transformer.decoder.relative_attention_bias.weight":{"shape":[32,2]' <<< "$h" && ok \
      || bad "t5: the stacks' relative_attention_bias tables (32, 2) are not in the checkpoint"
  else
    grep -q 'relative_attention_bias' <<< "$h" && bad "$tag: has T5 tables" || ok
  fi
  for beam in 1 4; do
    if "$TFM" translate --model "$M" --beam $beam --input "$WORK/in.txt" --output "$WORK/$tag.out" 2>/dev/null; then
      [ "$(wc -l < "$WORK/$tag.out")" -eq 3 ] && [ -z "$(sed -n 2p "$WORK/$tag.out")" ] && ok \
        || bad "$tag beam $beam: translation broke line alignment: $(cat -A "$WORK/$tag.out")"
    else bad "$tag beam $beam: translate failed"; fi
  done
done

# resume: 8 steps straight == 4, --resume, 4 more (the T5 tables' Adam moments are saved too)
T5=(--data "$SL" "${MODEL[@]}" "${TRAIN[@]}" --pe t5 --pe-buckets 16 --pe-max-distance 40)
"$TFM" train "${T5[@]}" --steps 8 --save "$WORK/straight.st" 2>/dev/null >&2 || bad "t5: straight run failed"
"$TFM" train "${T5[@]}" --steps 4 --save "$WORK/split.st" 2>/dev/null >&2 || bad "t5: first half failed"
"$TFM" train "${T5[@]}" --steps 8 --resume "$WORK/split.st" --save "$WORK/split.st" 2>/dev/null >&2 \
  || bad "t5: resume failed"
cmp -s "$WORK/straight.st" "$WORK/split.st" && ok || bad "t5: 8 steps straight != 4 + resume + 4"
h=$(header "$WORK/straight.st")
grep -q '"pe_buckets":"16"' <<< "$h" && grep -q '"pe_max_distance":"40"' <<< "$h" && ok \
  || bad "t5: pe_buckets / pe_max_distance not recorded"

# refused before anything is written
B=(--data "$SL" --save "$WORK/never.st" --steps 1 "${TRAIN[@]}")
expect_fail "alibi with a t5 option" 2 "pe_buckets (flag --pe-buckets) is not an option of position encoding 'alibi'" \
  "$TFM" train "${B[@]}" "${MODEL[@]}" --pe alibi --pe-buckets 8
expect_fail "t5 with a rope option" 2 "rope_pairing (flag --rope-pairing) is not an option of position encoding 't5'" \
  "$TFM" train "${B[@]}" "${MODEL[@]}" --pe t5 --rope-pairing half
expect_fail "t5 with an odd bucket count" 2 "pe_buckets must be even and at least 4, got 7" \
  "$TFM" train "${B[@]}" "${MODEL[@]}" --pe t5 --pe-buckets 7
expect_fail "t5 with too short a maximum distance" 2 "pe_max_distance (8) must exceed pe_buckets / 2 (16)" \
  "$TFM" train "${B[@]}" "${MODEL[@]}" --pe t5 --pe-max-distance 8
expect_fail "rope with an odd d_k" 2 "d_k = d_model / n_heads = 9 must be even" \
  "$TFM" train "${B[@]}" --d-model 18 --n-heads 2 --pe rope
expect_fail "an unknown pairing" 2 "--rope-pairing must be interleaved or half, got 'both'" \
  "$TFM" train "${B[@]}" --pe rope --rope-pairing both
[ ! -e "$WORK/never.st" ] && ok || bad "a refused run wrote its checkpoint"

finish pe_rel_cli
