#!/usr/bin/env bash
# tfm tokenize --encode/--decode --bpe: the fixture lines give exactly Hugging Face `tokenizers`' ids
# (tests/fixtures/bpe/ids.*.txt, docs/BPE.md) from tokenizer.json (GPT-2 and Llama-3 setups, the
# latter with its BOS) and from GPT-2's vocab.json,merges.txt, through a file and a pipe, one output
# line per input line; --decode gives the lines back (special tokens skipped); malformed files and
# bad flags give messages naming the file and line or key, and the right exit codes.
set -u
source "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/bpe"
D=$WORK
N=$(wc -l <"$FIX/lines.txt")

for v in gpt2 llama3; do
  "$TFM" tokenize --encode --bpe "$FIX/$v.json" --input "$FIX/lines.txt" --output "$D/ids.$v" 2>"$D/err"
  check "$v: encode exits 0 ($(cat "$D/err"))" test $? -eq 0
  head -n "$N" "$FIX/ids.$v.txt" >"$D/want.$v"
  check "$v: ids equal tokenizers' on every line" cmp -s "$D/ids.$v" "$D/want.$v"
done
check "llama3: every line starts with the BOS id 657" test "$(cut -d' ' -f1 "$D/ids.llama3" | sort -u)" = 657
"$TFM" tokenize --encode --bpe "$FIX/vocab.json,$FIX/merges.txt" <"$FIX/lines.txt" >"$D/ids.files"
check "vocab.json,merges.txt from stdin == gpt2.json" cmp -s "$D/ids.files" "$D/ids.gpt2"
check "one output line per input line" test "$(wc -l <"$D/ids.files")" -eq "$N"

"$TFM" tokenize --decode --bpe "$FIX/llama3.json" --input "$D/ids.llama3" --output "$D/back" 2>"$D/err"
check "decode exits 0 ($(cat "$D/err"))" test $? -eq 0
# the line holding <|endoftext|> and friends loses its special tokens
grep -v '<|endoftext|>' "$FIX/lines.txt" >"$D/plain"
grep -v '^0 \|^0$\| 0 \| 0$' "$D/ids.gpt2" | "$TFM" tokenize --decode --bpe "$FIX/gpt2.json" >"$D/back.gpt2"
check "decode(encode(line)) == line (lines without special tokens)" cmp -s "$D/back.gpt2" "$D/plain"
check "llama3: decoding skips the BOS, so lines come back" test "$(sed -n 1p "$D/back")" = "$(sed -n 1p "$FIX/lines.txt")"
printf '0 1 2\n\n' | "$TFM" tokenize --decode --bpe "$FIX/gpt2.json" >"$D/t"
check "decode: <|endoftext|> skipped, an empty line stays empty" test "$(tr '\n' '|' <"$D/t")" = '!"||'

printf 'fine\n\nno \xe9 here\n' >"$D/latin1.txt"
expect_fail "invalid UTF-8 names file:line" 1 "latin1.txt:3: invalid UTF-8 at byte offset 3 (byte 0xE9)" \
  "$TFM" tokenize --encode --bpe "$FIX/gpt2.json" --input "$D/latin1.txt" --output "$D/out"
check "a failed run leaves no output file" test ! -e "$D/out"
expect_fail "id outside the vocabulary" 1 "id 700 is outside the vocabulary" \
  bash -c "echo '1 700' | '$TFM' tokenize --decode --bpe '$FIX/gpt2.json'"
printf 'a b\nab\n' >"$D/merges.txt"
printf '{"a": 0, "b": 1, "ab": 2}' >"$D/vocab.json"
expect_fail "a bad merge names merges.txt:line" 1 "merges.txt:2: a merge is two tokens" \
  "$TFM" tokenize --encode --bpe "$D/vocab.json,$D/merges.txt"
printf '{"a": 0,\n "b": }' >"$D/bad.json"
expect_fail "bad JSON names file:line" 1 "bad.json:2:" "$TFM" tokenize --encode --bpe "$D/bad.json"
expect_fail "missing merges.txt" 1 "nope.txt" "$TFM" tokenize --encode --bpe "$D/vocab.json,$D/nope.txt"
expect_fail "a WordPiece tokenizer.json is refused" 1 "model.type is WordPiece" \
  "$TFM" tokenize --encode --bpe "$ROOT/tests/fixtures/wordpiece/tokenizer.novocab.json"
expect_fail "--bpe with --add-bos" 2 "--bpe F goes with --encode or --decode alone" \
  "$TFM" tokenize --encode --add-bos --bpe "$FIX/gpt2.json"
expect_fail "--bpe with --wordpiece" 2 "--bpe F goes with --encode or --decode alone" \
  "$TFM" tokenize --encode --wordpiece x --bpe "$FIX/gpt2.json"
finish bpe_cli
