#!/usr/bin/env bash
# Issue 33, kind 13: every input check comes before the work. tfm train refuses a bad text input
# before the tokenizer trains (before: an empty --valid-text was reported after training the
# tokenizer, minutes on a big corpus): for each text input of both modes (--text, --valid-text,
# --data's train.* and valid.*), an empty file, a file of blank lines, invalid UTF-8 on its last
# line, a NUL byte, and (--data) pairs of unequal length: exit 1 naming the file, no "training a
# joint ... vocabulary" line, nothing written, under 2 s (milliseconds on an idle machine).
# tfm perplexity refuses a text of blank lines before reading the model.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
tiny_corpus "$WORK/corpus"
M=(--d-model 16 --n-heads 2 --d-ff 32 --n-dec-layers 1 --vocab-size 500 --max-len 48 --steps 1)
mkdir -p "$WORK/out"

# bad_file KIND PATH: writes a bad text file of KIND at PATH (from the corpus's train.en)
bad_file() {
  case $1 in
    empty) : > "$2" ;;
    blank) printf '  \n\n\t\n' > "$2" ;;
    utf8) { cat "$WORK/corpus/train.en"; printf 'the end \xff\n'; } > "$2" ;;
    nul) { cat "$WORK/corpus/train.en"; printf 'the\0end\n'; } > "$2" ;;
  esac
}
# refused LABEL PATH ARGS...: exit 1 naming PATH, the tokenizer not trained, nothing written, < 2 s
refused() {
  local label=$1 path=$2 err rc t0 t1
  shift 2
  t0=$(date +%s%N)
  err=$("$TFM" "$@" 2>&1 > /dev/null)
  rc=$?
  t1=$(date +%s%N)
  [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, want 1 (${err:0:300})"
  has_text_ "$path" "$err" && ok || bad "$label: the message does not name $path: ${err:0:300}"
  has_text_ "training a joint" "$err" && bad "$label: trained the tokenizer first: ${err:0:300}" || ok
  [ -z "$(ls -A "$WORK/out")" ] && ok || bad "$label: wrote $(ls "$WORK/out")"
  [ $(((t1 - t0) / 1000000)) -lt 2000 ] && ok || bad "$label: took $(((t1 - t0) / 1000000)) ms"
  no_crash "$label" "$err"
  rm -f "$WORK"/out/*
}

for kind in empty blank utf8 nul; do
  B=$WORK/bad.$kind.txt
  bad_file $kind "$B"
  refused "--valid-text $kind" "$B" train --arch decoder-only --text "$WORK/corpus/train.en" --valid-text "$B" --save "$WORK/out/m.st" "${M[@]}"
  # a blank file among others is allowed (the lines together hold text); blank alone is not
  texts="$WORK/corpus/train.en,$B"
  [ $kind = blank ] && texts=$B
  refused "--text $kind" "$B" train --arch decoder-only --text "$texts" --save "$WORK/out/m.st" "${M[@]}"
  for f in train.en train.es valid.en valid.es; do
    rm -rf "$WORK/c"; cp -r "$WORK/corpus" "$WORK/c"
    bad_file $kind "$WORK/c/$f"
    # keep the pairs aligned for the content kinds: the other side gets one more line too
    if [ $kind = utf8 ] || [ $kind = nul ]; then
      case $f in *.en) o=${f%.en}.es ;; *) o=${f%.es}.en ;; esac
      { cat "$WORK/corpus/$o"; echo "the end"; } > "$WORK/c/$o"
    fi
    refused "--data $f $kind" "$WORK/c/$f" train --data "$WORK/c" --save "$WORK/out/m.st" "${M[@]}" --n-enc-layers 1
  done
done
rm -rf "$WORK/c"; cp -r "$WORK/corpus" "$WORK/c"
head -5 "$WORK/corpus/valid.es" > "$WORK/c/valid.es"
refused "--data valid.* of unequal length" "$WORK/c/valid.es" train --data "$WORK/c" --save "$WORK/out/m.st" "${M[@]}" --n-enc-layers 1
rm -rf "$WORK/c"; cp -r "$WORK/corpus" "$WORK/c"
echo "one more" >> "$WORK/c/train.en"
refused "--data train.* of unequal length" "$WORK/c/train.es" train --data "$WORK/c" --save "$WORK/out/m.st" "${M[@]}" --n-enc-layers 1
# tfm perplexity: a text of blank lines is refused before the model is read (here: none exists)
printf '\n  \n' > "$WORK/blank.txt"
refused "perplexity --text blank" "$WORK/blank.txt" perplexity --model "$WORK/no_model.st" --text "$WORK/blank.txt"

finish hard_inputs_first
