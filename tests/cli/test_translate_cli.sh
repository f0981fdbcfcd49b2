#!/usr/bin/env bash
# The translate / eval / train --data contract on a tiny model (fast tier; no corpus needed): a
# small parallel text made from tests/fixtures/tok_train.txt (its English and Spanish halves), a
# joint tokenizer trained on it and a few steps of training give a model with a tokenizer. Checked:
# one output line per input line, blank lines stay blank, stdin/stdout == --input/--output, beam
# keeps the alignment, the speed report, the truncation warning, every bad input of the issue, and
# that failed runs leave existing files untouched. Whether training learns to translate is
# test_translate_learning.sh (slow tier, real corpus).
source "$(dirname "$0")/lib.sh"

# the corpus: the fixture's English and Spanish halves (tiny_corpus, lib.sh)
SL=$WORK/small
tiny_corpus "$SL"

M=$WORK/m.safetensors
if "$TFM" train --data "$SL" --save "$M" --steps 40 --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 \
     --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --warmup 10 --eval-every 20 --log-every 20 \
     --max-len 64 --seed 1 2> "$WORK/train.log"; then
  ok
else
  bad "train --data on the small corpus: $(tail -3 "$WORK/train.log")"
  finish translate_cli
  exit 1
fi
grep -q "validation loss" "$WORK/train.log" && ok || bad "no validation loss reported"
[ -s "$WORK/m.best.safetensors" ] && ok || bad "no best checkpoint written"

# translate: exactly one output line per input line, an empty line gives an empty line
printf 'In the beginning God created the heavens and the earth.\n\nAnd God said.\n\n\nJesus wept.\n' > "$WORK/in.txt"
if "$TFM" translate --model "$M" --input "$WORK/in.txt" --output "$WORK/out.txt" 2>/dev/null; then
  if [ "$(wc -l < "$WORK/out.txt")" -eq 6 ] && [ -z "$(sed -n 2p "$WORK/out.txt")" ] && \
     [ -z "$(sed -n 4p "$WORK/out.txt")" ] && [ -z "$(sed -n 5p "$WORK/out.txt")" ] && \
     [ -n "$(sed -n 1p "$WORK/out.txt")" ] && [ -n "$(sed -n 6p "$WORK/out.txt")" ]; then ok
  else bad "translate broke line alignment: $(cat -A "$WORK/out.txt")"; fi
else bad "translate --input/--output failed"; fi
# stdin to stdout gives the same as files, greedy and beam agree on line count
"$TFM" translate --model "$M" < "$WORK/in.txt" > "$WORK/out2.txt" 2>/dev/null
cmp -s "$WORK/out.txt" "$WORK/out2.txt" && ok || bad "stdin/stdout translation differs from --input/--output"
"$TFM" translate --model "$M" --beam 4 < "$WORK/in.txt" > "$WORK/out3.txt" 2>"$WORK/beam.log"
[ "$(wc -l < "$WORK/out3.txt")" -eq 6 ] && ok || bad "beam 4 broke line alignment"
grep -q "sentences/s" "$WORK/beam.log" && ok || bad "translate does not report its speed"
"$TFM" translate --model "$M" --beam 4 --beam-stop bound < "$WORK/in.txt" > "$WORK/out4.txt" 2>/dev/null
[ "$(wc -l < "$WORK/out4.txt")" -eq 6 ] && ok || bad "beam 4 with --beam-stop bound broke line alignment"

# eval: BLEU and chrF2 lines, --output holds one hypothesis per source line
out=$("$TFM" eval --model "$M" --src "$SL/valid.en" --ref "$SL/valid.es" --output "$WORK/hyp" 2>"$WORK/eval.log")
grep -q '^BLEU = ' <<< "$out" && grep -q '^chrF2' <<< "$out" && ok || bad "eval printed no BLEU/chrF2 lines: $out"
[ "$(wc -l < "$WORK/hyp")" -eq 20 ] && ok || bad "eval --output has $(wc -l < "$WORK/hyp") lines, want 20"

# a source longer than the model's limit (max_len 64 here) is cut, with a warning naming the line
{ echo "Short."; for i in $(seq 200); do printf 'word%d ' "$i"; done; echo; } > "$WORK/long.txt"
err=$("$TFM" translate --model "$M" --input "$WORK/long.txt" 2>&1 >/dev/null)
case "$err" in *"cut to it (first: line 2)"*) ok ;; *) bad "no truncation warning: $err" ;; esac

# bad inputs
expect_fail "unknown flag" 2 "unknown option '--bogus'" "$TFM" train --data "$SL" --save "$WORK/x.st" --bogus
expect_fail "missing corpus" 1 "no corpus: $WORK/none/train.en is missing" "$TFM" train --data "$WORK/none" \
  --save "$WORK/x.st"
mkdir -p "$WORK/empty"; : > "$WORK/empty/train.en"; : > "$WORK/empty/train.es"
expect_fail "empty corpus" 1 "$WORK/empty/train.en" "$TFM" train --data "$WORK/empty" --init "$M" --save "$WORK/x.st"
mkdir -p "$WORK/uneven"; head -n 10 "$SL/train.en" > "$WORK/uneven/train.en"; head -n 9 "$SL/train.es" > "$WORK/uneven/train.es"
expect_fail "different line counts" 1 "$WORK/uneven/train.es" "$TFM" train --data "$WORK/uneven" --init "$M" \
  --save "$WORK/x.st"
mkdir -p "$WORK/utf"; head -n 5 "$SL/train.en" > "$WORK/utf/train.en"; head -n 5 "$SL/train.es" > "$WORK/utf/train.es"
printf 'caf\xe9 au lait\n' >> "$WORK/utf/train.en"; echo "café con leche" >> "$WORK/utf/train.es"
expect_fail "invalid UTF-8 in the corpus" 1 "$WORK/utf/train.en:6" "$TFM" train --data "$WORK/utf" --init "$M" \
  --save "$WORK/x.st"
printf 'good line\ncaf\xe9\n' > "$WORK/bad_utf.txt"
expect_fail "invalid UTF-8 to translate" 1 "$WORK/bad_utf.txt: line 2" "$TFM" translate --model "$M" \
  --input "$WORK/bad_utf.txt"
# a line of only spaces is an empty line: it translates to an empty line
printf 'Jesus wept.\n   \n' | "$TFM" translate --model "$M" > "$WORK/blank.out" 2>/dev/null
[ "$(sed -n 2p "$WORK/blank.out")" = "" ] && [ "$(wc -l < "$WORK/blank.out")" -eq 2 ] && ok || \
  bad "a blank line did not give an empty line: $(cat -A "$WORK/blank.out")"
expect_fail "--save into a missing folder fails before training" 1 "is not an existing folder" "$TFM" train \
  --data "$SL" --init "$M" --save "$WORK/nodir/m.safetensors"
"$TFM" init --d-model 16 --n-heads 2 --d-ff 16 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 50 --tgt-vocab 50 \
  --save "$WORK/notok.st" 2>/dev/null
expect_fail "model without a tokenizer" 1 "has no tokenizer" "$TFM" translate --model "$WORK/notok.st" \
  --input "$WORK/in.txt"
expect_fail "eval line counts" 1 "line counts differ" "$TFM" eval --model "$M" --src "$WORK/in.txt" --ref "$SL/valid.es"
expect_fail "bad beam" 2 "--beam must be in [1, 256]" "$TFM" translate --model "$M" --beam 0
expect_fail "bad beam stop rule" 2 "beam stop rule 'first' must be finished or bound" "$TFM" translate --model "$M" \
  --beam 4 --beam-stop first
# a failed run leaves an existing checkpoint untouched
cp "$M" "$WORK/keep.st"
"$TFM" train --data "$WORK/utf" --init "$M" --save "$WORK/keep.st" >/dev/null 2>&1
cmp -s "$M" "$WORK/keep.st" && ok || bad "a failed train run changed the existing checkpoint"
# --output is written atomically: a failed translation leaves an existing file as it was, and no
# temporary file behind
mkdir -p "$WORK/outdir"; echo "keep me" > "$WORK/outdir/t.txt"
expect_fail "failed translate with --output" 1 "line 2" "$TFM" translate --model "$M" --input "$WORK/bad_utf.txt" \
  --output "$WORK/outdir/t.txt"
[ "$(cat "$WORK/outdir/t.txt")" = "keep me" ] && ok || bad "a failed translate changed the --output file"
[ "$(ls -A "$WORK/outdir")" = "t.txt" ] && ok || bad "temporary file left beside --output: $(ls -A "$WORK/outdir")"

finish translate_cli
