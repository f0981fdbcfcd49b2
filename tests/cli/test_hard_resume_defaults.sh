#!/usr/bin/env bash
# Issue 33, kind 9: a documented default written out is the default. A checkpoint stores 0 for
# "the encoding's default" (t5: --pe-buckets 32, --pe-max-distance 128; shaw: --pe-max-distance
# 16); --resume and --init with the default written out must be accepted (before: "--pe-buckets 32
# (the checkpoint has 0)"), a different value still refused, and a checkpoint made with the default
# written out must accept the flag left out. A table of (encoding, flags).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
tiny_corpus "$WORK/corpus"
A=(--data "$WORK/corpus" --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500
   --max-len 48 --batch-tokens 600 --eval-every 1 --seed 1)

# row PE MADE_WITH RESUMED_WITH: a checkpoint made with --pe PE MADE_WITH resumes (and inits) with
# RESUMED_WITH (words split on spaces; "" for none).
row() {
  local pe=$1 made=$2 resumed=$3 ck=$WORK/ck.$RANDOM.st err
  # shellcheck disable=SC2086
  "$TFM" train "${A[@]}" --pe "$pe" $made --steps 1 --save "$ck" > /dev/null 2> "$WORK/make.log" ||
    { bad "$pe $made: cannot make the checkpoint: $(tail -2 "$WORK/make.log")"; return; }
  # shellcheck disable=SC2086
  err=$("$TFM" train "${A[@]}" --pe "$pe" $resumed --steps 2 --resume "$ck" --save "$ck" 2>&1 > /dev/null) && ok ||
    bad "$pe made with '$made', --resume with '$resumed': ${err: -300}"
  # shellcheck disable=SC2086
  err=$("$TFM" train "${A[@]}" --pe "$pe" $resumed --steps 1 --init "$ck" --save "$WORK/i.st" 2>&1 > /dev/null) && ok ||
    bad "$pe made with '$made', --init with '$resumed': ${err: -300}"
}
row t5 "" "--pe-buckets 32"
row t5 "" "--pe-max-distance 128"
row t5 "" "--pe-buckets 32 --pe-max-distance 128"
row t5 "" "--pe-buckets 0 --pe-max-distance 0"
row t5 "--pe-buckets 32 --pe-max-distance 128" ""
row t5 "--pe-buckets 32" "--pe-max-distance 0"
row shaw "" "--pe-max-distance 16"
row shaw "--pe-max-distance 16" "--pe-max-distance 0"

# a value that is not the default is still a different model
"$TFM" train "${A[@]}" --pe t5 --steps 1 --save "$WORK/t5.st" > /dev/null 2>&1
expect_fail "--pe-buckets 30 against the default" 2 "--pe-buckets 30 (the checkpoint has 32)" \
  "$TFM" train "${A[@]}" --pe t5 --pe-buckets 30 --steps 2 --resume "$WORK/t5.st" --save "$WORK/t5.st"
expect_fail "--pe-max-distance 64 against the default" 2 "--pe-max-distance 64 (the checkpoint has 128)" \
  "$TFM" train "${A[@]}" --pe t5 --pe-max-distance 64 --steps 2 --resume "$WORK/t5.st" --save "$WORK/t5.st"
expect_fail "--pe rope against t5" 2 "--pe rope (the checkpoint has t5)" \
  "$TFM" train "${A[@]}" --pe rope --pe-buckets 32 --steps 2 --resume "$WORK/t5.st" --save "$WORK/t5.st"

finish hard_resume_defaults
