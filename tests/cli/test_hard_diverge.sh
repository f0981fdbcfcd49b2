#!/usr/bin/env bash
# Issue 12, kind 4, through `tfm train`: a good run leaves a checkpoint and a best model; runs
# with a huge learning rate over the same paths (text mode with validation and saves every step,
# SGD or Adam; id mode without validation) stop with exit 1 and "step N...: QUANTITY is NaN;
# training stopped, nothing saved; kept ..." (the step said once), and both files on disk are byte
# for byte those of the good run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"

M=$WORK/m.safetensors B=$WORK/m.best.safetensors
hard_model "$M" || { bad "tiny model: $(tail -3 "$WORK/hard_model.log")"; finish hard_diverge; exit 1; }
cp "$M" "$WORK/good.st"; cp "$B" "$WORK/good.best.st"

# diverges LABEL REGEX CMD...: exit 1, the message matches, the step once, both files unchanged
diverges() {
  local label=$1 re=$2 err rc
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, want 1 ($err)"
  grep -Eq -- "$re" <<< "$err" && ok || bad "$label: stderr lacks '$re': $err"
  no_crash "$label" "$err"
  [ "$(grep -o 'step [0-9]*' <<< "$(grep 'error:' <<< "$err")" | sort | uniq -d)" = "" ] && ok || bad "$label: a step said twice: $err"
  cmp -s "$M" "$WORK/good.st" && ok || bad "$label: the checkpoint $M changed"
  cmp -s "$B" "$WORK/good.best.st" && ok || bad "$label: the best model $B changed"
  ls "$WORK" | grep -q '\.tmp\.' && bad "$label: a temporary file was left: $(ls "$WORK")" || ok
}
# from the good model's weights and tokenizer (no tokenizer training each time)
TXT=(--data "$WORK/corpus" --init "$WORK/good.st" --save "$M" --steps 6 --batch-tokens 600 --seed 1 --eval-every 1
     --save-every 1 --schedule constant)
KEPT="nothing saved; kept checkpoint $M as it was before this run; kept best model $B as it was before this run"
for run in "sgd --clip-norm 0 --lr 1e30" "sgd --clip-norm 1 --lr 1e20" "adam --clip-norm 0 --lr 1e30"; do
  # shellcheck disable=SC2086
  diverges "text mode, $run" "^tfm train: error: step 1: validation loss is NaN; training stopped, $KEPT" \
    "$TFM" train "${TXT[@]}" --optimizer $run
done
# validation only at the end, saves every step: the save's own check finds the overflowing model
diverges "text mode, saves without validation" "step 1: the loss of the model about to be saved is NaN" \
  "$TFM" train "${TXT[@]}" --eval-every 100 --optimizer sgd --lr 1e30

# id mode (no validation set): the step-2 loss is NaN, the trainer refuses it
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
"$TFM" init --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
  --max-len 16 --seed 1 --save "$WORK/init.st" 2>/dev/null || bad "tfm init"
IDS=(--init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids" --steps 5 --batch-size 8)
expect_ok "id mode, a good run" "$TFM" train "${IDS[@]}" --save "$M"
cp "$M" "$WORK/good.st"
for opt in sgd adam; do
  diverges "id mode, $opt" "^tfm train: error: step 2 \(epoch [0-9]+, batch [0-9]+\): training loss is NaN; parameters left unchanged; training stopped, nothing saved; kept checkpoint $M as it was before this run$" \
    "$TFM" train "${IDS[@]}" --save "$M" --optimizer $opt --lr 1e30
done

finish hard_diverge
