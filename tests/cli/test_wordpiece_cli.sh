#!/usr/bin/env bash
# tfm tokenize --encode --wordpiece: the 373 fixture lines give exactly the ids of Hugging Face
# `tokenizers` (tests/fixtures/wordpiece/ids.txt, docs/WORDPIECE.md), through a file and a pipe,
# one output line per input line; --max-tokens truncates keeping [SEP]; bad inputs and flags give
# messages naming the problem (file:line for invalid UTF-8) and the right exit codes.
set -u
source "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/wordpiece"
D=$WORK

WP=(--encode --wordpiece "$FIX/vocab.txt")
"$TFM" tokenize "${WP[@]}" --max-tokens 100000 --input "$FIX/lines.txt" --output "$D/ids" 2>"$D/err"
check "encode exits 0 ($(cat "$D/err"))" test $? -eq 0
check "ids equal tokenizers' on every line" cmp -s "$D/ids" "$FIX/ids.txt"
"$TFM" tokenize "${WP[@]}" --max-tokens 100000 <"$FIX/lines.txt" >"$D/ids2"
check "stdin == --input" cmp -s "$D/ids" "$D/ids2"
check "one output line per input line" test "$(wc -l <"$D/ids")" -eq "$(wc -l <"$FIX/lines.txt")"
# vocab.txt's own limit is 512 (BERT's positions): longer lines are cut to 511 ids and [SEP]
"$TFM" tokenize "${WP[@]}" --input "$FIX/lines.txt" >"$D/ids512"
awk '{ if (NF > 512) { s = $1; for (i = 2; i < 512; i++) s = s " " $i; print s " " $NF } else print }' \
  "$FIX/ids.txt" >"$D/want512"
check "default limit 512 keeps the first 511 ids and [SEP]" cmp -s "$D/ids512" "$D/want512"
check "some fixture lines are past 512 ids" test "$(awk 'NF > 512' "$FIX/ids.txt" | wc -l)" -ge 1

printf 'hello world, hello world\n' | "$TFM" tokenize --encode --wordpiece "$FIX/vocab.txt" --max-tokens 4 >"$D/t"
check "--max-tokens 4 keeps [CLS], two ids, [SEP]" test "$(cat "$D/t")" = "101 7592 2088 102"

printf 'fine\n\nno \xe9 here\n' >"$D/latin1.txt"
expect_fail "invalid UTF-8 names file:line" 1 "latin1.txt:3: invalid UTF-8 at byte offset 3 (byte 0xE9)" \
  "$TFM" tokenize --encode --wordpiece "$FIX/vocab.txt" --input "$D/latin1.txt" --output "$D/out"
check "a failed run leaves no output file" test ! -e "$D/out"
expect_fail "missing tokenizer" 1 "nope.json" "$TFM" tokenize --encode --wordpiece "$D/nope.json"
expect_fail "--wordpiece with --decode" 2 "--wordpiece F goes with --encode only" \
  "$TFM" tokenize --decode --wordpiece "$FIX/vocab.txt"
expect_fail "--wordpiece with --add-bos" 2 "--wordpiece F goes with --encode only" \
  "$TFM" tokenize --encode --add-bos --wordpiece "$FIX/vocab.txt"
expect_fail "--max-tokens 1" 2 "0 or at least 2" "$TFM" tokenize --encode --wordpiece "$FIX/vocab.txt" --max-tokens 1
finish wordpiece_cli
