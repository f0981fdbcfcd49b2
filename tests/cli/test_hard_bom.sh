#!/usr/bin/env bash
# Issue 33, kind 8: a UTF-8 byte order mark (EF BB BF) at the start of a text file is not text.
# Every text input of every command (they all read through the one line reader,
# tfm_line_reader_next) gives the same result with and without it: translate, eval, bleu,
# perplexity, train --data and --text (the saved model byte for byte), tokenize --encode, --decode,
# --train (the saved tokenizer), --wordpiece (and a vocab.txt that starts with a BOM), embed,
# similarity, score's id files. Before, the BOM was read as U+FEFF: line 1 translated differently
# and a perplexity changed (102.08 -> 215.82). A table: a new text input is covered by adding a row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
source "$(dirname "$0")/hard2_lib.sh"
hard2_models || { finish hard_bom; exit 1; }
D=$WORK/in
mkdir -p "$D" "$WORK/plain" "$WORK/bom"
head -5 "$WORK/corpus/valid.en" > "$D/src.txt"; head -5 "$WORK/corpus/valid.es" > "$D/ref.txt"
printf '5 6 7\n8 9\n' > "$D/s.ids"; printf '1 5 6 2\n1 7 2\n' > "$D/t.ids"
cp -r "$WORK/corpus" "$D/corpus"
cp -r "$BERT" "$D/bert"
SMALL=(--steps 2 --d-model 16 --n-heads 2 --d-ff 32 --n-dec-layers 1 --vocab-size 500 --max-len 48 --batch-tokens 600 --seed 1)

# row LABEL OUT FILE... -- CMD...: CMD runs on the files as they are, then with a BOM before each
# FILE; its standard output, and the file OUT ("-": none) it writes, must be the same both times.
row() {
  local label=$1 out=$2 f
  shift 2
  local files=()
  while [ "$1" != -- ]; do files+=("$1"); shift; done
  shift
  for f in "${files[@]}"; do cp "$f" "$f.orig"; done
  rm -f "$out"
  "$@" > "$WORK/plain/stdout" 2> "$WORK/plain/stderr" || bad "$label: failed without a BOM: $(tail -2 "$WORK/plain/stderr")"
  [ "$out" = - ] || mv "$out" "$WORK/plain/out"
  for f in "${files[@]}"; do { printf '\xef\xbb\xbf'; cat "$f.orig"; } > "$f"; done
  "$@" > "$WORK/bom/stdout" 2> "$WORK/bom/stderr" || bad "$label: failed with a BOM: $(tail -2 "$WORK/bom/stderr")"
  [ "$out" = - ] || mv "$out" "$WORK/bom/out"
  for f in "${files[@]}"; do mv "$f.orig" "$f"; done
  cmp -s "$WORK/plain/stdout" "$WORK/bom/stdout" && ok ||
    bad "$label: standard output differs with a BOM: $(diff "$WORK/plain/stdout" "$WORK/bom/stdout" | head -4 | cut -c1-200)"
  if [ "$out" != - ]; then
    cmp -s "$WORK/plain/out" "$WORK/bom/out" && ok || bad "$label: $out differs with a BOM"
  fi
}

O=$WORK/out.file
row "translate --input" "$O" "$D/src.txt" -- "$TFM" translate --model "$ED" --input "$D/src.txt" --output "$O"
row "translate (stdin)" - "$D/src.txt" -- bash -c "\"$TFM\" translate --model \"$ED\" < \"$D/src.txt\""
row "eval --src, --ref" "$O" "$D/src.txt" "$D/ref.txt" -- "$TFM" eval --model "$ED" --src "$D/src.txt" --ref "$D/ref.txt" --output "$O"
row "bleu --hyp" - "$D/src.txt" -- "$TFM" bleu --hyp "$D/src.txt" --ref "$D/ref.txt"
row "bleu --ref" - "$D/ref.txt" -- "$TFM" bleu --hyp "$D/src.txt" --ref "$D/ref.txt"
row "perplexity --text" - "$D/src.txt" -- "$TFM" perplexity --model "$LM" --text "$D/src.txt"
row "train --data (train.en, train.es)" "$O" "$D/corpus/train.en" "$D/corpus/train.es" -- \
  "$TFM" train --data "$D/corpus" --save "$O" --save-best "$WORK/best.st" "${SMALL[@]}" --n-enc-layers 1
row "train --data (valid.en, valid.es)" "$WORK/best.st" "$D/corpus/valid.en" "$D/corpus/valid.es" -- \
  "$TFM" train --data "$D/corpus" --save "$O" --save-best "$WORK/best.st" "${SMALL[@]}" --n-enc-layers 1 --eval-every 1
row "train --text, --valid-text" "$O" "$D/corpus/train.en" "$D/src.txt" -- \
  "$TFM" train --arch decoder-only --text "$D/corpus/train.en" --valid-text "$D/src.txt" --save "$O" "${SMALL[@]}"
row "tokenize --encode --input" "$O" "$D/src.txt" -- "$TFM" tokenize --encode --tokenizer "$TOK" --input "$D/src.txt" --output "$O"
row "tokenize --decode --input" "$O" "$D/s.ids" -- "$TFM" tokenize --decode --tokenizer "$TOK" --input "$D/s.ids" --output "$O"
row "tokenize --train --input" "$O" "$D/corpus/train.en" -- \
  "$TFM" tokenize --train --input "$D/corpus/train.en" --vocab-size 400 --save-model "$O"
row "tokenize --wordpiece --input" - "$D/src.txt" -- "$TFM" tokenize --encode --wordpiece "$BERT/vocab.txt" --input "$D/src.txt"
row "tokenize --wordpiece vocab.txt" - "$D/bert/vocab.txt" -- "$TFM" tokenize --encode --wordpiece "$D/bert/vocab.txt" --input "$D/src.txt"
row "embed --input" - "$D/src.txt" -- "$TFM" embed --model "$BERT" --input "$D/src.txt"
row "embed, the model's vocab.txt" - "$D/bert/vocab.txt" -- "$TFM" embed --model "$D/bert" --input "$D/src.txt"
row "similarity --input" - "$D/src.txt" -- "$TFM" similarity --model "$BERT" --query "the light" --input "$D/src.txt"
row "score --src-ids, --tgt-ids" - "$D/s.ids" "$D/t.ids" -- "$TFM" score --model "$ED" --src-ids "$D/s.ids" --tgt-ids "$D/t.ids"
row "train (id files)" "$O" "$D/s.ids" "$D/t.ids" -- "$TFM" train --init "$ED" --src-ids "$D/s.ids" --tgt-ids "$D/t.ids" --steps 2 --save "$O"

# a file of a BOM alone is an empty file, and a U+FEFF anywhere else is kept as text
printf '\xef\xbb\xbf' > "$WORK/bom_only.txt"
expect_fail "bleu on a BOM alone: no lines" 1 "have no lines" "$TFM" bleu --hyp "$WORK/bom_only.txt" --ref "$WORK/bom_only.txt"
printf 'a\n\xef\xbb\xbfb\n' > "$WORK/inner.txt"
printf 'a\nb\n' > "$WORK/ab.txt"
"$TFM" tokenize --encode --tokenizer "$TOK" --input "$WORK/inner.txt" > "$WORK/inner.ids" 2>/dev/null
"$TFM" tokenize --encode --tokenizer "$TOK" --input "$WORK/ab.txt" > "$WORK/ab.ids" 2>/dev/null
check "a U+FEFF on line 2 is text (encoded differently)" test "$(sed -n 2p "$WORK/inner.ids")" != "$(sed -n 2p "$WORK/ab.ids")"

finish hard_bom
