#!/usr/bin/env bash
# tfm eval --by-length and tfm perplexity --by-position/--by-length (docs/STUDY.md): on a tiny model
# trained from tests/fixtures/tok_train.txt with a tokenizer made by tfm tokenize (stored by
# tfm init --tokenizer, so the test counts source tokens with the same one), each bucket's line
# count, BLEU, chrF2 and length ratio equal tfm bleu on that bucket's lines alone; the loss per
# position sums to the file's total loss and its token counts to the file's tokens; bad flags fail.
source "$(dirname "$0")/lib.sh"
export OMP_NUM_THREADS=2
tiny_corpus "$WORK/c" || { finish by_length; exit 1; }
T=$TFM
"$T" tokenize --train --input "$WORK/c/train.en,$WORK/c/train.es" --vocab-size 400 --save-model "$WORK/tok.model" \
  2> /dev/null || bad "tokenize --train"
"$T" init --tokenizer "$WORK/tok.model" --d-model 32 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 --d-ff 64 \
  --norm-first 1 --tie-embeddings 1 --save "$WORK/init.st" 2> /dev/null || bad "init --tokenizer"
expect_fail "init --tokenizer with --src-vocab" 2 "--src-vocab and --tokenizer exclude each other" \
  "$T" init --tokenizer "$WORK/tok.model" --src-vocab 50 --save "$WORK/x.st"
"$T" train --data "$WORK/c" --init "$WORK/init.st" --steps 60 --batch-tokens 1500 --warmup 20 --lr 2 --dropout 0 \
  --save "$WORK/m.st" > /dev/null 2>&1 || bad "train"
head -40 "$WORK/c/valid.en" > "$WORK/src.en"
"$T" eval --model "$WORK/m.st" --src "$WORK/src.en" --ref "$WORK/c/valid.es" --output "$WORK/hyp" > /dev/null 2>&1 ||
  bad "eval --output"
# references that share part of each hypothesis (so every bucket's BLEU is neither 0 nor 100): the
# hypothesis's words from the second on, then words of the real reference
paste -d '\t' "$WORK/hyp" "$WORK/c/valid.es" |
  awk -F '\t' '{ n = split($1, h, " "); m = split($2, r, " "); s = ""
                 for (i = 2; i <= n && i <= 12; i++) s = s h[i] " "
                 for (i = 1; i <= m && i <= NR % 7 + 3; i++) s = s r[i] " "
                 print s }' > "$WORK/ref"
"$T" eval --model "$WORK/m.st" --src "$WORK/src.en" --ref "$WORK/ref" --by-length --buckets 30,45,60 \
  --csv "$WORK/bl.csv" --output "$WORK/hyp2" > "$WORK/eval.out" 2> "$WORK/eval.err" || bad "eval --by-length: $(cat "$WORK/eval.err")"
cmp -s "$WORK/hyp" "$WORK/hyp2" && ok || bad "decoding is not deterministic: the two runs' hypotheses differ"
grep -q "^by source length" "$WORK/eval.out" && ok || bad "no by-length table on stdout"
[ "$(wc -l < "$WORK/bl.csv")" -eq 5 ] && ok || bad "bl.csv: $(wc -l < "$WORK/bl.csv") lines, want header + 4 buckets"
# the lengths, independently: the same tokenizer's ids per source line
"$T" tokenize --encode --tokenizer "$WORK/tok.model" --input "$WORK/src.en" --output "$WORK/src.ids" 2> /dev/null
awk '{ print NF }' "$WORK/src.ids" > "$WORK/len"
nonempty=0
while IFS=, read -r label lo hi lines bleu chrf ratio _; do
  [ "$label" = bucket ] && continue
  [ "$hi" = inf ] && hi=1000000
  awk -v lo="$lo" -v hi="$hi" '{ if ($1 >= lo && $1 <= hi) print NR }' "$WORK/len" > "$WORK/rows"
  n=$(wc -l < "$WORK/rows")
  [ "$n" = "$lines" ] && ok || bad "bucket $label: $lines lines in the CSV, $n by the tokenizer"
  [ "$n" -gt 0 ] || continue
  nonempty=$((nonempty + 1))
  awk 'NR == FNR { want[$1] = 1; next } FNR in want' "$WORK/rows" "$WORK/hyp" > "$WORK/b.hyp"
  awk 'NR == FNR { want[$1] = 1; next } FNR in want' "$WORK/rows" "$WORK/ref" > "$WORK/b.ref"
  out=$("$T" bleu --hyp "$WORK/b.hyp" --ref "$WORK/b.ref")
  want_bleu=$(sed -n 's/^BLEU = \([0-9.]*\).*/\1/p' <<< "$out")
  want_chrf=$(sed -n 's/^chrF2 = \([0-9.]*\).*/\1/p' <<< "$out")
  want_ratio=$(sed -n 's/.*ratio = \([0-9.]*\).*/\1/p' <<< "$out")
  awk -v a="$bleu" -v b="$want_bleu" -v c="$chrf" -v d="$want_chrf" -v e="$ratio" -v f="$want_ratio" \
    'BEGIN { exit !((a - b) ^ 2 < 0.0001 && (c - d) ^ 2 < 0.0001 && (e - f) ^ 2 < 0.000001) }' && ok ||
    bad "bucket $label: BLEU/chrF2/ratio $bleu/$chrf/$ratio, tfm bleu on its lines: $want_bleu/$want_chrf/$want_ratio"
  awk -v a="$bleu" 'BEGIN { exit !(a > 0 && a < 100) }' && ok || bad "bucket $label: BLEU $bleu is trivial"
done < "$WORK/bl.csv"
[ "$nonempty" -ge 2 ] && ok || bad "only $nonempty non-empty buckets: the test needs two"
expect_fail "eval --csv without --by-length" 2 "--csv goes with --by-length" \
  "$T" eval --model "$WORK/m.st" --src "$WORK/src.en" --ref "$WORK/ref" --csv "$WORK/x.csv"
expect_fail "eval --buckets decreasing" 2 "the edges must increase" \
  "$T" eval --model "$WORK/m.st" --src "$WORK/src.en" --ref "$WORK/ref" --by-length --buckets 30,20
expect_fail "eval --buckets garbage" 2 "want increasing positive integers" \
  "$T" eval --model "$WORK/m.st" --src "$WORK/src.en" --ref "$WORK/ref" --by-length --buckets 10,x

# ---- tfm perplexity --by-position / --by-length on a tiny language model ----------------------
head -200 "$ROOT/tests/fixtures/tok_train.txt" > "$WORK/lm.txt"
{ sed -n 201,230p "$ROOT/tests/fixtures/tok_train.txt"; echo; } > "$WORK/lmv.txt"
"$T" train --arch decoder-only --text "$WORK/lm.txt" --vocab-size 400 --d-model 32 --n-heads 2 --n-dec-layers 1 \
  --d-ff 64 --max-len 96 --batch-tokens 1000 --warmup 10 --lr 1 --steps 20 --save "$WORK/lm.st" > /dev/null 2>&1 ||
  bad "train the LM"
line=$("$T" perplexity --model "$WORK/lm.st" --text "$WORK/lmv.txt" --batch-tokens 300 --by-position "$WORK/pos.csv" \
  --by-length "$WORK/len.csv" --buckets 20,40 2> "$WORK/ppl.err") || bad "perplexity --by-position: $(cat "$WORK/ppl.err")"
total=$(awk '{ print $10 }' <<< "$line")
tokens=$(awk '{ print $6 }' <<< "$line")
grep -q "cut to max_len" "$WORK/ppl.err" && ok || bad "no summary"
awk -F, -v t="$total" -v n="$tokens" 'NR > 1 { s += $3; k += $2; if ($1 != NR - 2) bad = 1 }
  END { exit !(!bad && (s - t) ^ 2 < 1e-6 && k == n) }' "$WORK/pos.csv" && ok ||
  bad "--by-position: the positions' nll/tokens do not sum to the total $total / $tokens ($(head -3 "$WORK/pos.csv"))"
awk -F, -v t="$total" -v n="$tokens" 'NR > 1 { s += $6; k += $5; l += $4 }
  END { exit !((s - t) ^ 2 < 1e-6 && k == n && l == 30) }' "$WORK/len.csv" && ok ||
  bad "--by-length: the buckets do not sum to the total $total / $tokens / 30 lines ($(cat "$WORK/len.csv"))"
# position 0's count is every line; a later position has no more lines than an earlier one
awk -F, 'NR == 2 && $2 != 30 { exit 1 } NR > 2 && $2 > prev { exit 1 } NR > 1 { prev = $2 }' "$WORK/pos.csv" && ok ||
  bad "--by-position token counts: $(head -4 "$WORK/pos.csv")"
# the per-position loss does not depend on the batching
"$T" perplexity --model "$WORK/lm.st" --text "$WORK/lmv.txt" --batch-tokens 5000 --by-position "$WORK/pos2.csv" \
  > /dev/null 2>&1
cmp -s "$WORK/pos.csv" "$WORK/pos2.csv" && ok || bad "--by-position depends on --batch-tokens"
finish by_length
