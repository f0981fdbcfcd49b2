#!/usr/bin/env bash
# tfm tokenize end to end: train on the committed fixture, encode/decode through files and pipes
# with line alignment kept, pinned ids, interop with Debian's spm_encode, and every bad input
# giving a message that names the problem plus the right exit code.
set -u
source "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/tok_train.txt"
D=$WORK

M="$D/t.model"

# --- usage -------------------------------------------------------------------------------------
"$TFM" tokenize --help >"$D/help" 2>&1
check "--help exits 0" test $? -eq 0
check "--help lists the modes" grep -q -- "--decode" "$D/help"
expect_fail_re "unknown flag" 2 "unknown option '--bogus'" "$TFM" tokenize --bogus
expect_fail_re "no mode" 2 "exactly one of" "$TFM" tokenize --tokenizer "$M"
expect_fail_re "two modes" 2 "exactly one of" "$TFM" tokenize --encode --decode --tokenizer "$M"
expect_fail_re "encode without model" 2 "needs --tokenizer" "$TFM" tokenize --encode
expect_fail_re "train without output" 2 "needs --input" "$TFM" tokenize --train --input "$FIX"
expect_fail_re "non-integer vocab" 2 "expects an integer" "$TFM" tokenize --train --vocab-size many

# --- training ------------------------------------------------------------------------------------
"$TFM" tokenize --train --input "$FIX" --vocab-size 500 --save-model "$M" 2>"$D/err"
check "train exits 0 ($(cat "$D/err"))" test $? -eq 0
check "model written" test -s "$M"
check "no temporary file left" test "$(ls "$D" | grep -c tmp)" -eq 0
"$TFM" tokenize --train --input "$FIX" --vocab-size 500 --save-model "$D/t2.model" 2>/dev/null
check "training is deterministic" cmp -s "$M" "$D/t2.model"
# Two files (English half, Spanish half) = the model of their concatenation.
tiny_corpus "$D/halves"
"$TFM" tokenize --train --input "$D/halves/all.en,$D/halves/all.es" --vocab-size 500 --save-model "$D/t3.model" 2>/dev/null
check "two input files train the same model" cmp -s "$M" "$D/t3.model"

expect_fail_re "missing training file" 1 "nope\.txt: cannot open" \
    "$TFM" tokenize --train --input "$FIX,$D/nope.txt" --vocab-size 500 --save-model "$D/x.model"
check "failed training writes no model" test ! -e "$D/x.model"
expect_fail_re "vocab too large" 1 "vocab_size 8000 is more than the text supports: at most [0-9]+ pieces" \
    "$TFM" tokenize --train --input "$FIX" --vocab-size 8000 --save-model "$D/x.model"
printf 'fine\nalso fine\nno \xe9 here\n' >"$D/latin1.txt"
expect_fail_re "invalid UTF-8 in training text" 1 "latin1\.txt:3: invalid UTF-8 at byte 4" \
    "$TFM" tokenize --train --input "$D/latin1.txt" --vocab-size 300 --save-model "$D/x.model"

# --- encode / decode ------------------------------------------------------------------------------
# Input: fixture lines, empty lines (first, middle, last), other scripts, odd spacing.
{
    echo ""
    head -n 30 "$FIX"
    echo ""
    echo ""
    echo "¿Dónde está el niño? ¡Qué año!"
    echo "Καλημέρα κόσμε — Привет, мир — 你好世界 🎉"
    printf '  leading and  double spaces, tab\there \n'
    tail -n 30 "$FIX"
    echo ""
} >"$D/text.txt"
n_in=$(wc -l <"$D/text.txt")

check "encode to a file" "$TFM" tokenize --encode --tokenizer "$M" --input "$D/text.txt" --output "$D/ids.txt"
check "one id line per text line" test "$(wc -l <"$D/ids.txt")" -eq "$n_in"
check "empty lines stay empty at the same places" \
    test "$(grep -n '^$' "$D/text.txt" | cut -d: -f1 | tr '\n' ,)" = "$(grep -n '^$' "$D/ids.txt" | cut -d: -f1 | tr '\n' ,)"
check "id lines hold only ids" test "$(grep -Evc '^([0-9]+( [0-9]+)*)?$' "$D/ids.txt")" -eq 0
"$TFM" tokenize --encode --tokenizer "$M" <"$D/text.txt" >"$D/ids_pipe.txt"
check "stdin/stdout give the same ids" cmp -s "$D/ids.txt" "$D/ids_pipe.txt"
check "decode to a file" "$TFM" tokenize --decode --tokenizer "$M" --input "$D/ids.txt" --output "$D/back.txt"
check "decode(encode(text)) == text" cmp -s "$D/text.txt" "$D/back.txt"
"$TFM" tokenize --decode --tokenizer "$M" <"$D/ids.txt" >"$D/back_pipe.txt"
check "decode through a pipe" cmp -s "$D/text.txt" "$D/back_pipe.txt"

# Pinned ids (the same as tests/unit/text/test_tokenizer.c).
got=$(echo "In the beginning God created the heavens and the earth." | "$TFM" tokenize --encode --tokenizer "$M")
check "pinned English ids ($got)" test "$got" = \
    "329 264 269 310 498 323 264 325 383 371 281 267 268 293 269 305 267 337 264 262 277 269 260 263 315 400 266"

# CRLF input and a last line without a newline.
printf 'a b\r\nc' | "$TFM" tokenize --encode --tokenizer "$M" >"$D/crlf_ids.txt"
check "CRLF and unterminated last line give 2 lines" test "$(wc -l <"$D/crlf_ids.txt")" -eq 2
check "CRLF stripped" test "$(sed -n 1p "$D/crlf_ids.txt")" = "$(echo 'a b' | "$TFM" tokenize --encode --tokenizer "$M")"

# --add-bos / --add-eos (target files, docs/FORMATS.md); an empty line becomes "1 2".
printf 'Hello\n\n' | "$TFM" tokenize --encode --add-bos --add-eos --tokenizer "$M" >"$D/framed.txt"
check "BOS first and EOS last" grep -Eq '^1( [0-9]+)+ 2$' <(sed -n 1p "$D/framed.txt")
check "empty line framed" test "$(sed -n 2p "$D/framed.txt")" = "1 2"
check "decode skips BOS/EOS/pad" test "$(printf '1 %s 2 0 0\n' "$(echo Hello | "$TFM" tokenize --encode --tokenizer "$M")" |
    "$TFM" tokenize --decode --tokenizer "$M")" = "Hello"

# A byte piece spelling a line break (<0x0A>, id 4 + 10) must not split the output line.
printf 'x\n14\ny\n' | sed "s/x/$(echo A | "$TFM" tokenize --encode --tokenizer "$M")/; s/y/$(echo B | "$TFM" tokenize --encode --tokenizer "$M")/" |
    "$TFM" tokenize --decode --tokenizer "$M" >"$D/nl.txt"
check "decoded newline stays on its line ($(tr '\n' '|' <"$D/nl.txt"))" test "$(tr '\n' '|' <"$D/nl.txt")" = "A| |B|"

# Interop: Debian's spm_encode reads our model and agrees on every id.
if command -v spm_encode >/dev/null 2>&1; then
    grep -v '^$' "$D/text.txt" >"$D/nonempty.txt"
    spm_encode --model="$M" --output_format=id <"$D/nonempty.txt" >"$D/spm_ids.txt" 2>/dev/null
    check "spm_encode gives the same ids" cmp -s "$D/spm_ids.txt" <(grep -v '^$' "$D/ids.txt")
fi

# --- bad inputs -----------------------------------------------------------------------------------
expect_fail_re "missing model" 1 "nope\.model: cannot open" "$TFM" tokenize --encode --tokenizer "$D/nope.model"
echo "not a model" >"$D/garbage.model"
expect_fail_re "garbage model" 1 "garbage\.model: .*not a SentencePiece model" \
    "$TFM" tokenize --decode --tokenizer "$D/garbage.model"
expect_fail_re "missing input file" 1 "cannot open .*nope\.txt" \
    "$TFM" tokenize --encode --tokenizer "$M" --input "$D/nope.txt"

printf 'good\nalso good\nbad \xc3( here\n' >"$D/bad_utf8.txt"
expect_fail_re "invalid UTF-8 line" 1 "bad_utf8\.txt:3: .*invalid UTF-8 at byte 5" \
    "$TFM" tokenize --encode --tokenizer "$M" --input "$D/bad_utf8.txt" --output "$D/bad_out.txt"
check "no partial output file" test ! -e "$D/bad_out.txt"
check "no temporary output left" test "$(ls "$D" | grep -c 'bad_out')" -eq 0

printf '5 6 7\n8 nine 10\n' >"$D/bad_ids.txt"
expect_fail_re "non-number id" 1 "bad_ids\.txt:2: token 2 'nine' is not a token id" \
    "$TFM" tokenize --decode --tokenizer "$M" --input "$D/bad_ids.txt"
printf '5\n\n6\n7 500\n' >"$D/oov_ids.txt"
expect_fail_re "id out of vocab" 1 "oov_ids\.txt:4: token 2: id 500 is outside the vocabulary \[0, 500\)" \
    "$TFM" tokenize --decode --tokenizer "$M" --input "$D/oov_ids.txt"
expect_fail_re "negative id" 1 "<stdin>:1: token 1 '-5' is not a token id" \
    sh -c "echo '-5 6' | \"\$0\" tokenize --decode --tokenizer \"\$1\"" "$TFM" "$M"
expect_fail_re "huge id" 1 "id 99999999999999999999 is outside" \
    sh -c "echo '99999999999999999999' | \"\$0\" tokenize --decode --tokenizer \"\$1\"" "$TFM" "$M"

finish test_tokenize
