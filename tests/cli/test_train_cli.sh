#!/usr/bin/env bash
# tfm train on token-id files (issue 3): a tiny model overfits 16 pairs; the same seed gives the same
# loss curve (and checkpoint) twice, another seed another curve; the saved checkpoint loads and
# `tfm score` sees the low loss; every bad input gives a clear message, the right exit code, and
# never costs an existing file.
source "$(dirname "$0")/lib.sh"

# 16 sentence pairs, random-ish but fixed (an LCG in awk): sources of 4..8 ids, targets BOS + 3..8
# ids + EOS, every id in [3, 20) so pad 0, BOS 1, EOS 2 keep their meaning.
awk -v dir="$WORK" 'function r() { s = (s * 1103515245 + 12345) % 2147483648; return int(s / 65536) }
  BEGIN { s = 12345
    for (i = 0; i < 16; i++) {
      n = 4 + r() % 5; line = ""
      for (j = 0; j < n; j++) line = line (j ? " " : "") (3 + r() % 17)
      print line > (dir "/src.ids")
      m = 3 + r() % 6; line = "1"
      for (j = 0; j < m; j++) line = line " " (3 + r() % 17)
      print line " 2" > (dir "/tgt.ids")
    } }'
if [ "$(wc -l < "$WORK/src.ids")" = 16 ] && [ "$(wc -l < "$WORK/tgt.ids")" = 16 ]; then ok; else bad "id files"; fi

"$TFM" init --d-model 32 --n-heads 4 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
  --max-len 16 --seed 1 --save "$WORK/init.st" 2>/dev/null || bad "tfm init"
DATA=(--src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids")

# (a) overfitting: label smoothing 0, no dropout, every line in every step. Measured: loss < 0.05
# first at step 53..59 over init seeds 1..8 (Adam, lr 3e-3); the bound is twice that.
BOUND=120
if "$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps $BOUND --optimizer adam --lr 3e-3 --batch-size 16 \
     --label-smoothing 0 --dropout 0 --seed 1 --save "$WORK/fit.st" > "$WORK/fit.log" 2> "$WORK/fit.err"; then
  first=$(awk '$1 == "step" && $4 < 0.05 { print $2; exit }' "$WORK/fit.log")
  last=$(awk '$1 == "step" { l = $4 } END { print l }' "$WORK/fit.log")
  steps=$(grep -c '^step ' "$WORK/fit.log")
  if [ "$steps" = $BOUND ]; then ok; else bad "overfit: $steps step lines, want $BOUND"; fi
  if [ -n "$first" ] && awk -v l="$last" 'BEGIN { exit !(l < 0.05) }'; then ok
  else bad "overfit: loss not below 0.05 within $BOUND steps (first: '${first}', last: $last)"; fi
  echo "overfit: loss < 0.05 first at step ${first:-never} of $BOUND, last $last"
else
  bad "overfit run failed: $(cat "$WORK/fit.err")"
fi

# (c) the checkpoint loads and scores the training pairs with the low loss (mean nats per target,
# EOS included), while the initial model scores them near log(20) = 3.
mean_nll() { awk '{ s -= $1; n += $2 } END { if (n > 0) printf "%.6f", s / n; else print "nan" }'; }
if fit=$("$TFM" score --model "$WORK/fit.st" "${DATA[@]}" | mean_nll) && \
   init=$("$TFM" score --model "$WORK/init.st" "${DATA[@]}" | mean_nll); then
  if awk -v f="$fit" -v i="$init" 'BEGIN { exit !(f < 0.05 && i > 1.5) }'; then ok
  else bad "score: trained model $fit nats/target (want < 0.05), initial $init (want > 1.5)"; fi
  echo "score: trained $fit nats/target, initial $init"
else
  bad "tfm score on the trained checkpoint failed"
fi

# (b) the same seed gives the same curve and the same checkpoint; another seed another curve.
# Dropout on and 5 lines a step out of 16, so both the masks and the shuffle depend on the seed.
curve() { # SEED OUT
  "$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps 30 --lr 3e-3 --batch-size 5 --dropout 0.1 \
    --label-smoothing 0.1 --seed "$1" --save "$2.st" 2>/dev/null | grep '^step ' > "$2.log"
}
curve 7 "$WORK/r1"; curve 7 "$WORK/r2"; curve 8 "$WORK/r3"
if [ "$(wc -l < "$WORK/r1.log")" = 30 ]; then ok; else bad "seeded run: $(wc -l < "$WORK/r1.log") step lines"; fi
if cmp -s "$WORK/r1.log" "$WORK/r2.log"; then ok; else bad "same seed, different curves: $(diff "$WORK/r1.log" "$WORK/r2.log" | head -4)"; fi
if cmp -s "$WORK/r1.st" "$WORK/r2.st"; then ok; else bad "same seed, different checkpoints"; fi
if ! cmp -s "$WORK/r1.log" "$WORK/r3.log"; then ok; else bad "seeds 7 and 8 gave the same curve"; fi

# (d) bad inputs. Usage errors exit 2 before anything is read; data errors exit 1 naming file:line.
TRAIN=("$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps 2 --save "$WORK/x.st")
expect_ok "train --help" "$TFM" train --help
expect_fail "unknown flag" 2 "unknown option '--frobnicate'" "${TRAIN[@]}" --frobnicate
expect_fail "missing --save" 2 "missing required option --save" "$TFM" train --init "$WORK/init.st" "${DATA[@]}" \
  --steps 2
expect_fail "--optimizer foo" 2 "--optimizer must be adam or sgd, got 'foo'" "${TRAIN[@]}" --optimizer foo
expect_fail "--schedule foo" 2 "--schedule must be constant or noam, got 'foo'" "${TRAIN[@]}" --schedule foo
expect_fail "--dropout 1.5" 2 "dropout must be in [0, 1), got 1.5" "${TRAIN[@]}" --dropout 1.5
expect_fail "--dropout -0.1" 2 "dropout must be in [0, 1), got -0.1" "${TRAIN[@]}" --dropout -0.1
expect_fail "--label-smoothing 2" 2 "label smoothing must be in [0, 1], got 2" "${TRAIN[@]}" --label-smoothing 2
expect_fail "--lr 0" 2 "lr must be positive, got 0" "${TRAIN[@]}" --lr 0
expect_fail "--clip-norm -1" 2 "clip norm must be >= 0 (0: off), got -1" "${TRAIN[@]}" --clip-norm -1
expect_fail "noam without warm-up" 2 "the noam schedule needs warmup >= 1, got 0" "${TRAIN[@]}" --schedule noam --warmup 0
expect_fail "--steps 0" 2 "--steps and --batch-size must be >= 1" "${TRAIN[@]}" --steps 0
expect_fail "--batch-size 0" 2 "--steps and --batch-size must be >= 1" "${TRAIN[@]}" --batch-size 0
# the same checks (one table, train_common.h) in the text mode, before the corpus is looked at
expect_fail "--data: --dropout 1.5" 2 "dropout must be in [0, 1), got 1.5" "$TFM" train --data "$WORK/no-corpus" \
  --dropout 1.5 --save "$WORK/x.st"
expect_fail "--text: --lr -1" 2 "lr must be positive, got -1" "$TFM" train --arch decoder-only \
  --text "$WORK/no-text" --lr -1 --save "$WORK/x.st"
expect_fail "--data: --seed -1" 2 "--seed must be >= 0" "$TFM" train --data "$WORK/no-corpus" --seed -1 --save "$WORK/x.st"
expect_fail "--steps not a number" 2 "option --steps expects an integer, got 'many'" "${TRAIN[@]}" --steps many

expect_fail "missing --init file" 1 "cannot open checkpoint $WORK/none.st" "$TFM" train --init "$WORK/none.st" \
  "${DATA[@]}" --steps 2 --save "$WORK/x.st"
expect_fail "missing id file" 1 "cannot open id file $WORK/none.ids" "$TFM" train --init "$WORK/init.st" \
  --src-ids "$WORK/none.ids" --tgt-ids "$WORK/tgt.ids" --steps 2 --save "$WORK/x.st"
head -5 "$WORK/src.ids" > "$WORK/s5.ids"
expect_fail "line counts differ" 1 "$WORK/s5.ids has 5 lines but $WORK/tgt.ids has 16" "$TFM" train \
  --init "$WORK/init.st" --src-ids "$WORK/s5.ids" --tgt-ids "$WORK/tgt.ids" --steps 2 --save "$WORK/x.st"
sed '7s/$/ 25/' "$WORK/src.ids" > "$WORK/oov_s.ids"
expect_fail "source id outside the vocabulary" 1 "$WORK/oov_s.ids:7: token id 25 is outside the vocabulary [0, 20)" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/oov_s.ids" --tgt-ids "$WORK/tgt.ids" --steps 2 --save "$WORK/x.st"
sed '3s/^1 /1 20 /' "$WORK/tgt.ids" > "$WORK/oov_t.ids"
expect_fail "target id outside the vocabulary" 1 "$WORK/oov_t.ids:3: token id 20 is outside the vocabulary [0, 20)" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/oov_t.ids" --steps 2 --save "$WORK/x.st"
sed '4s/^1 //' "$WORK/tgt.ids" > "$WORK/nobos.ids"
expect_fail "target line without BOS" 1 "$WORK/nobos.ids:4: a target line must start with BOS (id 1) and end with EOS (id 2)" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/nobos.ids" --steps 2 --save "$WORK/x.st"
sed '9s/ 2$//' "$WORK/tgt.ids" > "$WORK/noeos.ids"
expect_fail "target line without EOS" 1 "$WORK/noeos.ids:9: a target line must start with BOS (id 1) and end with EOS (id 2)" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/noeos.ids" --steps 2 --save "$WORK/x.st"
sed '2s/.*/1/' "$WORK/tgt.ids" > "$WORK/one.ids"
expect_fail "target line of one id" 1 "$WORK/one.ids:2: a target line needs BOS and EOS" \
  "$TFM" train --init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/one.ids" --steps 2 --save "$WORK/x.st"
if [ ! -e "$WORK/x.st" ]; then ok; else bad "a failed run wrote its --save file"; fi

# --save into a missing folder: refused before training, nothing written, the input intact.
cp "$WORK/init.st" "$WORK/init.bak"
expect_fail "save into a missing folder" 1 "$WORK/no-such-dir is not an existing folder" "$TFM" train \
  --init "$WORK/init.st" "${DATA[@]}" --steps 2 --save "$WORK/no-such-dir/m.st"
if [ ! -e "$WORK/no-such-dir" ] && cmp -s "$WORK/init.st" "$WORK/init.bak"; then ok; else bad "missing folder: side effects"; fi

# A run that fails never touches an existing checkpoint at --save: bad ids (before training), a bad
# flag, a loss that overflows during training, and a save that fails at the end (--save names a
# folder, which the final rename cannot replace).
cp "$WORK/fit.st" "$WORK/keep.st"
cp "$WORK/fit.st" "$WORK/keep.bak"
expect_fail "bad ids keep --save" 1 "token id 25 is outside the vocabulary" "$TFM" train --init "$WORK/init.st" \
  --src-ids "$WORK/oov_s.ids" --tgt-ids "$WORK/tgt.ids" --steps 2 --save "$WORK/keep.st"
expect_fail "bad flag keeps --save" 2 "dropout must be in [0, 1)" "$TFM" train --init "$WORK/init.st" "${DATA[@]}" \
  --steps 2 --dropout 1.5 --save "$WORK/keep.st"
expect_fail "diverging run keeps --save" 1 "parameters left unchanged" "$TFM" train --init "$WORK/init.st" \
  "${DATA[@]}" --steps 5 --lr 1e30 --save "$WORK/keep.st"
if cmp -s "$WORK/keep.st" "$WORK/keep.bak"; then ok; else bad "a failed run changed the existing checkpoint"; fi
mkdir -p "$WORK/adir/sub"
expect_fail "save over a folder" 1 "$WORK/adir" "$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps 1 \
  --save "$WORK/adir"
if [ -d "$WORK/adir/sub" ] && [ -z "$(ls "$WORK" | grep '\.tmp\.')" ]; then ok
else bad "failed save left damage or a temporary file: $(ls "$WORK")"; fi

finish train_cli
