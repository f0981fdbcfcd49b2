#!/usr/bin/env bash
# Issue 12, kind 1: lines that look empty are empty (include/tfm/text.h: Unicode White_Space,
# default-ignorable format characters, controls). Each kind of blank line — no-break space, ideographic
# space, line/paragraph separators, NEL, em space, zero-width space, BOM, soft hyphen, controls,
# Mongolian vowel separator, tag characters, mixtures — is judged blank by translate and eval (an
# empty line out, nothing invented), by training data loading (the pair skipped and counted), by
# tokenizer training (no text), and by id files (no ids).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"

M=$WORK/m.safetensors
hard_model "$M" || { bad "tiny model: $(tail -3 "$WORK/hard_model.log")"; finish hard_blank; exit 1; }

# the blank lines: one kind each (printf escapes: UTF-8 bytes)
BLANKS=(
  '\xc2\xa0'                  # U+00A0 NO-BREAK SPACE
  '\xe3\x80\x80\xe3\x80\x80'  # U+3000 IDEOGRAPHIC SPACE, twice
  '\xe2\x80\xa8'              # U+2028 LINE SEPARATOR
  '\xe2\x80\xa9'              # U+2029 PARAGRAPH SEPARATOR
  '\xc2\x85'                  # U+0085 NEXT LINE
  '\xe2\x80\x83'              # U+2003 EM SPACE
  '\xe2\x80\x8b'              # U+200B ZERO WIDTH SPACE
  '\xef\xbb\xbf'              # U+FEFF BYTE ORDER MARK
  '\xc2\xad'                  # U+00AD SOFT HYPHEN
  '\x01'                      # a lone C0 control
  '\x1b\x7f'                  # ESC, DEL
  '\xe1\xa0\x8e'              # U+180E MONGOLIAN VOWEL SEPARATOR
  '\xf3\xa0\x80\x81'          # U+E0001 LANGUAGE TAG
  '\t\xe2\x80\x8d \xe2\x81\xa0\xc2\xa0\v' # tab, ZWJ, space, WORD JOINER, NBSP, VT
)
nb=${#BLANKS[@]}
{ echo "In the beginning God created the heaven and the earth."
  for b in "${BLANKS[@]}"; do printf "$b\n"; done
  echo "And God said, Let there be light."; } > "$WORK/in.txt"
total=$((nb + 2))
[ "$(wc -l < "$WORK/in.txt")" -eq "$total" ] && ok || bad "the input has $(wc -l < "$WORK/in.txt") lines, want $total"

# every blank line gives an empty line; the two sentences give text
check_blank_out() { # LABEL FILE
  local n i line
  n=$(wc -l < "$2")
  if [ "$n" -ne "$total" ]; then bad "$1: $n output lines for $total input lines"; return; fi
  [ -n "$(sed -n 1p "$2")" ] && [ -n "$(sed -n "${total}p" "$2")" ] && ok || bad "$1: a sentence gave an empty line"
  for ((i = 0; i < nb; i++)); do
    line=$(sed -n "$((i + 2))p" "$2")
    [ -z "$line" ] && ok || bad "$1: blank line ${BLANKS[$i]} (line $((i + 2))) gave '$line'"
  done
}
expect_ok "translate" "$TFM" translate --model "$M" --input "$WORK/in.txt" --output "$WORK/out.txt"
check_blank_out translate "$WORK/out.txt"
expect_ok "translate --beam 3" "$TFM" translate --model "$M" --beam 3 --input "$WORK/in.txt" --output "$WORK/out3.txt"
check_blank_out "translate --beam 3" "$WORK/out3.txt"
# eval: the same source, references the same count
sed 's/.*/Y dijo Dios/' "$WORK/in.txt" > "$WORK/ref.txt"
expect_ok "eval" "$TFM" eval --model "$M" --src "$WORK/in.txt" --ref "$WORK/ref.txt" --output "$WORK/hyp.txt"
check_blank_out eval "$WORK/hyp.txt"

# training data (text mode): a pair with a blank side is skipped and counted, on either side
C=$WORK/blankcorpus
mkdir -p "$C"
cp "$WORK/corpus/valid.en" "$WORK/corpus/valid.es" "$C/"
cp "$WORK/corpus/train.en" "$C/train.en"; cp "$WORK/corpus/train.es" "$C/train.es"
base=$(wc -l < "$C/train.en")
for ((i = 0; i < nb; i++)); do
  if ((i % 2)); then printf "${BLANKS[$i]}\n" >> "$C/train.en"; echo "Y la tierra" >> "$C/train.es"
  else echo "And the earth" >> "$C/train.en"; printf "${BLANKS[$i]}\n" >> "$C/train.es"; fi
done
if "$TFM" train --data "$C" --save "$WORK/b.safetensors" --steps 1 --d-model 16 --n-heads 2 --d-ff 32 \
     --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --batch-tokens 600 --max-len 48 2> "$WORK/b.log"; then
  skipped=$(sed -n 's/.* training pairs (\([0-9]*\) skipped: empty side.*/\1/p' "$WORK/b.log")
  [ "$skipped" = "$nb" ] && ok || bad "train --data: $skipped pairs skipped as empty, want $nb of $base + $nb: $(grep pairs "$WORK/b.log")"
else
  bad "train --data with blank lines failed: $(tail -2 "$WORK/b.log")"
fi

# tokenizer training: a file of blank lines holds no text
for b in "${BLANKS[@]}"; do printf "$b\n"; done > "$WORK/blank_only.txt"
expect_fail "tokenize --train on blank lines" 1 "hold no text" \
  "$TFM" tokenize --train --input "$WORK/blank_only.txt" --vocab-size 300 --save-model "$WORK/t.model"
[ ! -e "$WORK/t.model" ] && ok || bad "tokenize --train wrote a model from blank lines"

# id files: a blank line holds no ids (not "is not a token id")
printf '5 6 7\n' > "$WORK/src.ids"
for b in '\xc2\xa0' '\v' '\xe2\x80\x8b \t' '\xe3\x80\x80'; do
  printf "$b\n" > "$WORK/tgt.ids"
  expect_fail "score: target id line '$b'" 1 "tgt.ids:1: a target line needs at least BOS and EOS (2 ids), got 0" \
    "$TFM" score --model "$M" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids"
done

finish hard_blank
