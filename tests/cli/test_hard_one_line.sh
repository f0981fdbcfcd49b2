#!/usr/bin/env bash
# Issue 12, kind 2: decoded text never holds a line break (include/tfm/text.h: \n, \r, \v, \f,
# U+001C..001E, U+0085, U+2028, U+2029 become spaces), so every command that writes one line per
# input keeps the count. (a) A model trained on targets full of \v, NEL and U+2028 emits them:
# translate and eval --output still write one line per source line, with no break inside.
# (b) tokenize --decode of byte pieces that spell each break ("<0x0A>", ...).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"

# no_breaks LABEL FILE N: FILE has N lines and no other line-breaking byte sequence
no_breaks() {
  local n
  n=$(wc -l < "$2")
  [ "$n" -eq "$3" ] && ok || bad "$1: $n lines, want $3: $(od -c "$2" | head -5)"
  if LC_ALL=C grep -q $'[\r\v\f\x1c\x1d\x1e]\|\xc2\x85\|\xe2\x80\xa8\|\xe2\x80\xa9' "$2"; then
    bad "$1: a line break inside a line: $(od -c "$2" | head -5)"
  else ok; fi
}

# (a) targets whose words are joined by \v, U+0085 and U+2028: the model learns to emit them
C=$WORK/corpus
tiny_corpus "$C"
for f in train valid; do
  awk '{ s = ""; for (i = 1; i <= NF; i++) s = s (i > 1 ? (i % 3 == 0 ? "\xe2\x80\xa8" : (i % 3 == 1 ? "\v" : "\xc2\x85")) : "") $i; print s }' \
    "$C/$f.es" > "$C/$f.tmp" && mv "$C/$f.tmp" "$C/$f.es"
done
M=$WORK/breaks.safetensors
if "$TFM" train --data "$C" --save "$M" --steps 30 --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 \
     --n-dec-layers 1 --vocab-size 500 --batch-tokens 600 --warmup 5 --eval-every 30 --max-len 48 --seed 1 \
     2> "$WORK/train.log"; then ok; else bad "training on break-joined targets: $(tail -2 "$WORK/train.log")"; fi
printf 'In the beginning God created the heaven.\nAnd God said.\n\nJesus wept.\nAnd the earth was without form.\n' > "$WORK/in.txt"
expect_ok "translate" "$TFM" translate --model "$M" --input "$WORK/in.txt" --output "$WORK/out.txt"
no_breaks "translate --output" "$WORK/out.txt" 5
"$TFM" translate --model "$M" < "$WORK/in.txt" > "$WORK/out_stdout.txt" 2>/dev/null
no_breaks "translate to stdout" "$WORK/out_stdout.txt" 5
expect_ok "translate --beam 4" "$TFM" translate --model "$M" --beam 4 --input "$WORK/in.txt" --output "$WORK/out4.txt"
no_breaks "translate --beam 4" "$WORK/out4.txt" 5
# the model does emit the breaks: its output has far more spaces than words
spaces=$(tr -cd ' ' < "$WORK/out.txt" | wc -c)
[ "$spaces" -ge 10 ] && ok || bad "the model emitted no line breaks to map ($spaces spaces): the test shows nothing"
sed 's/.*/Y dijo Dios/' "$WORK/in.txt" > "$WORK/ref.txt"
out=$("$TFM" eval --model "$M" --src "$WORK/in.txt" --ref "$WORK/ref.txt" --output "$WORK/hyp.txt" 2>/dev/null)
grep -q '^BLEU = ' <<< "$out" && ok || bad "eval printed no BLEU: $out"
no_breaks "eval --output" "$WORK/hyp.txt" 5
expect_ok "tfm bleu accepts eval's --output" "$TFM" bleu --hyp "$WORK/hyp.txt" --ref "$WORK/ref.txt"

# (b) tokenize --decode: byte pieces of every break. A vertical tab is not in the vocabulary, so it
# encodes as its byte piece <0x0B>; the byte pieces are in byte order, so <0x0A> is one id lower.
T=$WORK/t.model
expect_ok "tokenize --train" "$TFM" tokenize --train --input "$WORK/corpus/train.en" --vocab-size 400 --save-model "$T"
vt=$(printf '\v\n' | "$TFM" tokenize --encode --tokenizer "$T" 2>/dev/null)
[ -n "$vt" ] && [ "$(wc -w <<< "$vt")" -le 2 ] && ok || bad "encoding a vertical tab gave '$vt'"
vt=${vt##* }
hello=$(echo "In the beginning" | "$TFM" tokenize --encode --tokenizer "$T" 2>/dev/null)
{ for b in 0x0A 0x0D 0x0B 0x0C 0x1C 0x1D 0x1E; do echo "$hello $((vt + b - 0x0B)) $hello"; done
  # multi-byte breaks: their UTF-8 bytes as byte pieces (NEL C2 85, U+2028 E2 80 A8, U+2029 E2 80 A9)
  echo "$hello $((vt + 0xC2 - 0x0B)) $((vt + 0x85 - 0x0B)) $hello"
  echo "$hello $((vt + 0xE2 - 0x0B)) $((vt + 0x80 - 0x0B)) $((vt + 0xA8 - 0x0B))"
  echo "$((vt + 0xE2 - 0x0B)) $((vt + 0x80 - 0x0B)) $((vt + 0xA9 - 0x0B)) $hello"
  echo "$((vt - 1)) $((vt - 1)) $((vt - 1))"; } > "$WORK/breaks.ids"
expect_ok "tokenize --decode" "$TFM" tokenize --decode --tokenizer "$T" --input "$WORK/breaks.ids" --output "$WORK/dec.txt"
no_breaks "tokenize --decode" "$WORK/dec.txt" 11
[ "$(sed -n 1p "$WORK/dec.txt")" = "In the beginning  In the beginning" ] && ok || bad "<0x0A> did not become one space (the second word brings its own): '$(sed -n 1p "$WORK/dec.txt")'"

finish hard_one_line
