#!/usr/bin/env bash
# Issue 33, kind 6: a write error is never swallowed. Every command that writes to standard output
# runs with it on /dev/full (a device whose writes fail with ENOSPC, as on a full disk), and every
# file output (--output, --npy, --dump-logits, --save, --save-model) is given /dev/full: each must
# exit 1 naming the output, where before several printed their result into the void and exited 0.
# A table: a new command is covered by adding a row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
source "$(dirname "$0")/hard2_lib.sh"
[ -c /dev/full ] || skip "no /dev/full on this system"
hard2_models || { finish hard_write_errors; exit 1; }
# file outputs go to a symlink to /dev/full: were a device ever replaced by a renamed temporary
# file again, only the link in $WORK would be lost, never the system's /dev/full
FULL=$WORK/full
ln -s /dev/full "$FULL"
X=(--steps 1 --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --max-len 48 --batch-tokens 600)

# rows_fail STDOUT NEEDLE ROW...: each ROW (LABEL|ARGS, split on spaces) runs with standard output
# on /dev/full (STDOUT "> /dev/full") or /dev/null (""), and must exit 1 with NEEDLE on stderr.
rows_fail() {
  local to=$1 needle=$2 row label args err rc
  shift 2
  for row in "$@"; do
    label=${row%%|*}
    read -r -a args <<< "${row#*|}"
    if [ -n "$to" ]; then err=$("$TFM" "${args[@]}" 2>&1 > /dev/full); else err=$("$TFM" "${args[@]}" 2>&1 > /dev/null); fi
    rc=$?
    [ "$rc" -eq 1 ] && ok || bad "$label $to: exit $rc, want 1 (${err:0:300})"
    has_text_ "$needle" "$err" && ok || bad "$label $to: no '$needle': ${err:0:300}"
    no_crash "$label" "$err"
  done
}

# every command that prints its result on standard output: LABEL|ARGS (split on spaces)
STDOUT_ROWS=(
  "--version|--version"
  "--help|--help"
  "translate|translate --model $ED --input $S"
  "eval|eval --model $ED --src $S --ref $R"
  "bleu|bleu --hyp $S --ref $R"
  "score|score --model $ED --src-ids $WORK/s.ids --tgt-ids $WORK/t.ids"
  "tokenize --encode|tokenize --encode --tokenizer $TOK --input $S"
  "tokenize --decode|tokenize --decode --tokenizer $TOK --input $WORK/s.ids"
  "tokenize --wordpiece|tokenize --encode --wordpiece $BERT/vocab.txt --input $S"
  "embed|embed --model $BERT --input $S"
  "similarity --text|similarity --model $BERT --query hello --text world"
  "similarity --input|similarity --model $BERT --query hello --input $S"
  "generate|generate --model $LM --prompt And --max-tokens 5"
  "perplexity|perplexity --model $LM --text $S"
  "train (id files: a line per step)|train --init $ED --src-ids $WORK/s.ids --tgt-ids $WORK/t.ids --steps 1 --save $WORK/id.st"
)
rows_fail "> /dev/full" "cannot write standard output" "${STDOUT_ROWS[@]}"
# every file output: LABEL|ARGS; the output is $FULL (/dev/full)
FILE_ROWS=(
  "translate --output|translate --model $ED --input $S --output $FULL"
  "eval --output|eval --model $ED --src $S --ref $R --output $FULL"
  "score --dump-logits|score --model $ED --src-ids $WORK/s.ids --tgt-ids $WORK/t.ids --dump-logits $FULL"
  "tokenize --encode --output|tokenize --encode --tokenizer $TOK --input $S --output $FULL"
  "tokenize --decode --output|tokenize --decode --tokenizer $TOK --input $WORK/s.ids --output $FULL"
  "tokenize --wordpiece --output|tokenize --encode --wordpiece $BERT/vocab.txt --input $S --output $FULL"
  "tokenize --train --save-model|tokenize --train --input $WORK/corpus/train.en --vocab-size 400 --save-model $FULL"
  "embed --npy|embed --model $BERT --input $S --npy $FULL"
  "init --save|init --d-model 16 --n-heads 2 --d-ff 32 --save $FULL"
  "train --data --save|train --data $WORK/corpus --save $FULL --save-best $WORK/b.st ${X[*]}"
  "train --text --save|train --arch decoder-only --text $WORK/corpus/train.en --save $FULL --steps 1 --d-model 16 --n-heads 2 --d-ff 32 --n-dec-layers 1 --vocab-size 500 --max-len 48"
  "train (id files) --save|train --init $ED --src-ids $WORK/s.ids --tgt-ids $WORK/t.ids --steps 1 --save $FULL"
)
rows_fail "" "cannot write $FULL" "${FILE_ROWS[@]}"
# a device is written in place, never replaced by a renamed temporary file
check "$FULL is still a link to the device" test -L "$FULL" -a -c "$FULL"
ln -s /dev/null "$WORK/null"
expect_ok "translate --output /dev/null" "$TFM" translate --model "$ED" --input "$S" --output "$WORK/null"
check "$WORK/null is still a link to /dev/null" test -L "$WORK/null" -a -c "$WORK/null"

finish hard_write_errors
