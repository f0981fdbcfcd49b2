#!/usr/bin/env bash
# tfm train --arch decoder-only --text, tfm generate, tfm perplexity (docs/LM.md) on a tiny LM
# trained on 200 English verses of tests/fixtures/tok_train.txt: it learns (validation perplexity
# falls), perplexity of the validation file equals the loop's validation perplexity, generation is
# reproducible for a seed and the same with and without the KV cache, top-k 1 == temperature 0,
# --resume continues exactly, and bad input fails clearly.
source "$(dirname "$0")/lib.sh"
ROOT=${TFM_SOURCE_DIR:-.}
FIX="$ROOT/tests/fixtures/tok_train.txt"
head -200 "$FIX" > "$WORK/train.txt"
{ sed -n 201,230p "$FIX"; echo; echo "   "; } > "$WORK/valid.txt" # two blank lines: skipped
ARGS=(--arch decoder-only --text "$WORK/train.txt" --valid-text "$WORK/valid.txt" --vocab-size 500 --d-model 32
      --n-heads 2 --n-dec-layers 2 --d-ff 64 --batch-tokens 1000 --warmup 10 --lr 1 --dropout 0.1 --eval-every 10
      --seed 3)
export OMP_NUM_THREADS=2
M=$WORK/lm.st

"$TFM" train "${ARGS[@]}" --steps 40 --save "$M" > /dev/null 2> "$WORK/train.log" || bad "train: $(tail -3 "$WORK/train.log")"
grep -q "training: 200 sequences from 200 lines" "$WORK/train.log" && ok || bad "training summary: $(grep training: "$WORK/train.log")"
grep -q "validation: 30 sequences from 32 lines of 1 file(s) (2 blank skipped" "$WORK/train.log" && ok ||
  bad "validation summary: $(grep validation: "$WORK/train.log")"
grep -q "0+2 layers" "$WORK/train.log" && ok || bad "not a decoder-only model: $(grep d_model "$WORK/train.log")"
v10=$(awk '/^step 10 validation/ { print $7 }' "$WORK/train.log")
v40=$(awk '/^step 40 validation/ { print $7 }' "$WORK/train.log")
awk -v a="$v10" -v b="$v40" 'BEGIN { exit !(b < a * 0.9) }' && ok || bad "validation perplexity did not fall: $v10 -> $v40"
echo "validation perplexity: step 10 $v10, step 40 $v40"

# tfm perplexity on the validation file == the loop's validation perplexity at step 40 (this model)
ppl=$("$TFM" perplexity --model "$M" --text "$WORK/valid.txt" 2> "$WORK/ppl.log" | awk '{ print $2 }')
awk -v a="$ppl" -v b="$v40" 'BEGIN { d = a - b; exit !(d < 0.006 && d > -0.006) }' && ok ||
  bad "tfm perplexity $ppl != validation perplexity $v40"
grep -q "30 lines (2 blank skipped" "$WORK/ppl.log" && ok || bad "perplexity summary: $(cat "$WORK/ppl.log")"
ppl_small=$("$TFM" perplexity --model "$M" --text "$WORK/valid.txt" --batch-tokens 40 2> /dev/null | awk '{ print $2 }')
[ "$ppl" = "$ppl_small" ] && ok || bad "perplexity depends on the batching: $ppl vs $ppl_small"
# a huge batch budget allocates for the lines there are, not for the budget (8 GB of row pointers)
ppl_huge=$(under_vm_limit 3000000 "$TFM" perplexity --model "$M" --text "$WORK/valid.txt" --batch-tokens 2147483647 \
  2> "$WORK/ppl_huge.log" | awk '{ print $2 }')
[ "$ppl" = "$ppl_huge" ] && ok || bad "perplexity --batch-tokens 2147483647: '$ppl_huge' ($(cat "$WORK/ppl_huge.log"))"

# generation
G=("$TFM" generate --model "$M" --prompt "In the days" --max-tokens 30)
a=$("${G[@]}" --seed 5 2> /dev/null) || bad "generate failed"
b=$("${G[@]}" --seed 5 2> /dev/null)
c=$("${G[@]}" --seed 6 2> /dev/null)
d=$("${G[@]}" --seed 5 --no-kv-cache 2> /dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "the same seed gave different text: '$a' / '$b'"
[ "$a" != "$c" ] && ok || bad "seeds 5 and 6 gave the same text: '$a'"
[ "$a" = "$d" ] && ok || bad "KV cache and recompute differ: '$a' / '$d'"
case "$a" in "In the days"*) ok ;; *) bad "the output does not start with the prompt: '$a'" ;; esac
[ "$(wc -l <<< "$a")" -eq 1 ] && ok || bad "generate wrote more than one line"
g0=$("${G[@]}" --temperature 0 2> /dev/null)
k1=$("${G[@]}" --top-k 1 --temperature 1.3 --seed 9 2> /dev/null)
p0=$("${G[@]}" --top-p 0.000001 --seed 9 2> /dev/null)
[ "$g0" = "$k1" ] && [ "$g0" = "$p0" ] && ok || bad "greedy '$g0', top-k 1 '$k1', top-p 1e-6 '$p0' differ"
echo "sample: $a"

# resume: 20 steps, then --resume to 40 == 40 straight
"$TFM" train "${ARGS[@]}" --steps 20 --save "$WORK/half.st" > /dev/null 2>&1 || bad "first half failed"
"$TFM" train "${ARGS[@]}" --steps 40 --resume "$WORK/half.st" --save "$WORK/half.st" > /dev/null 2> "$WORK/res.log" ||
  bad "resume failed: $(tail -2 "$WORK/res.log")"
cmp -s "$M" "$WORK/half.st" && ok || bad "40 steps straight != 20 + resume + 20"

# bad input
expect_fail "--text without --arch decoder-only" 2 "--text trains a decoder-only model" \
  "$TFM" train --text "$WORK/train.txt" --vocab-size 500 --steps 1 --save "$WORK/x.st"
expect_fail "--data and --text" 2 "give either --data DIR" \
  "$TFM" train --data "$WORK" --text "$WORK/train.txt" --arch decoder-only --steps 1 --save "$WORK/x.st"
expect_fail "missing text file" 1 "--text: cannot read $WORK/none.txt" \
  "$TFM" train --arch decoder-only --text "$WORK/train.txt,$WORK/none.txt" --steps 1 --save "$WORK/x.st"
printf 'good line\nbad \xff byte\n' > "$WORK/bad.txt"
expect_fail "invalid UTF-8 in training text" 1 "$WORK/bad.txt:2: invalid UTF-8" \
  "$TFM" train "${ARGS[@]}" --text "$WORK/train.txt,$WORK/bad.txt" --steps 1 --init "$M" --save "$WORK/x.st"
expect_fail "invalid UTF-8 in perplexity text" 1 "line 2: " "$TFM" perplexity --model "$M" --text "$WORK/bad.txt"
echo "In the beginning" > "$WORK/one.txt"
expect_fail "translate with a decoder-only model" 1 "translate needs an encoder-decoder model" \
  "$TFM" translate --model "$M" --input "$WORK/one.txt"
expect_fail "negative temperature" 2 "temperature must be" "${G[@]}" --temperature -1
expect_fail "top-p 0" 2 "top_p must be in (0, 1]" "${G[@]}" --top-p 0
finish lm_cli
