#!/usr/bin/env bash
# A decoder-only model trained on a small text (2,934 lines: tests/fixtures/tok_train.txt six
# times) with the default --vocab-size: the text supports only ~2,760 SentencePiece pieces, so the
# vocabulary is as many as it supports (up to the default 8000) instead of SentencePiece's
# "Vocabulary size too high" assertion; an explicit --vocab-size 8000 fails with one sentence
# naming the limit and the flag, exit 1.
source "$(dirname "$0")/lib.sh"
ROOT=${TFM_SOURCE_DIR:-.}
for _ in 1 2 3 4 5 6; do cat "$ROOT/tests/fixtures/tok_train.txt"; done > "$WORK/small.txt"
export OMP_NUM_THREADS=2
SMALL=(--arch decoder-only --text "$WORK/small.txt" --d-model 32 --n-heads 2 --n-dec-layers 1 --d-ff 64 --steps 1)

"$TFM" train "${SMALL[@]}" --save "$WORK/lm.st" > /dev/null 2> "$WORK/train.log" && ok ||
  bad "default --vocab-size on a small text: $(tail -2 "$WORK/train.log")"
V=$(sed -n 's/.*the vocabulary has \([0-9]*\) pieces, as many as the text supports.*/\1/p' "$WORK/train.log")
[ -n "$V" ] && [ "$V" -lt 8000 ] && [ "$V" -gt 1000 ] && ok || bad "vocabulary size note: $(grep -i vocab "$WORK/train.log")"
grep -q "vocab $V," "$WORK/train.log" && ok || bad "the model's vocabulary is not the tokenizer's $V: $(grep d_model "$WORK/train.log")"
"$TFM" generate --model "$WORK/lm.st" --prompt "In the" --max-tokens 3 --temperature 0 > /dev/null 2>&1 && ok ||
  bad "generate with the adapted vocabulary"

expect_fail "explicit --vocab-size above what the text supports" 1 \
  "vocab_size 8000 is more than the text supports: at most $V pieces (lower --vocab-size)" \
  "$TFM" train "${SMALL[@]}" --vocab-size 8000 --save "$WORK/lm2.st"
err=$("$TFM" train "${SMALL[@]}" --vocab-size 8000 --save "$WORK/lm2.st" 2>&1 > /dev/null)
grep -q "trainer_interface\|Vocabulary size too high\|\.cc(" <<< "$err" && bad "SentencePiece's assertion leaked: $err" || ok
finish lm_small_vocab
