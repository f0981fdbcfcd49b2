#!/usr/bin/env bash
# Training that survives interruption: N steps straight equal N/2, stop, --resume, N/2 (bit for
# bit, same thread count); Ctrl-C saves a resumable checkpoint; a process killed (SIGKILL) while
# saving leaves the previous checkpoint loadable.
source "$(dirname "$0")/lib.sh"
ROOT=${TFM_SOURCE_DIR:-.}
C=$WORK/corpus
mkdir -p "$C"
# a small synthetic parallel corpus: "a b c" -> "A B C" style pairs, 400 lines, plus validation
awk 'BEGIN { srand(7); for (i = 0; i < 460; i++) { n = 3 + int(rand() * 8); s = ""; t = "";
       for (j = 0; j < n; j++) { w = int(rand() * 40); s = s (j ? " " : "") "w" w; t = t (j ? " " : "") "p" (39 - w) }
       print s > (i < 400 ? "'"$C"'/train.en" : "'"$C"'/valid.en"); print t > (i < 400 ? "'"$C"'/train.es" : "'"$C"'/valid.es") } }'
ARGS=(--data "$C" --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 300
      --batch-tokens 300 --warmup 10 --dropout 0.1 --eval-every 5 --seed 3)
export OMP_NUM_THREADS=2

"$TFM" train "${ARGS[@]}" --steps 20 --save "$WORK/straight.safetensors" > /dev/null 2>&1 || bad "straight run failed"
"$TFM" train "${ARGS[@]}" --steps 10 --save "$WORK/split.safetensors" > /dev/null 2>&1 || bad "first half failed"
"$TFM" train "${ARGS[@]}" --steps 20 --resume "$WORK/split.safetensors" --save "$WORK/split.safetensors" 2> "$WORK/resume.log" >/dev/null \
  || bad "resume failed: $(tail -2 "$WORK/resume.log")"
grep -q "resuming $WORK/split.safetensors at step 10" "$WORK/resume.log" && ok || bad "resume did not report step 10"
cmp -s "$WORK/straight.safetensors" "$WORK/split.safetensors" && ok || bad "20 steps straight != 10 + resume + 10 (checkpoints differ)"
cmp -s "$WORK/straight.best.safetensors" "$WORK/split.best.safetensors" 2>/dev/null && ok || \
  bad "best checkpoints differ between the straight and the resumed run"

# Ctrl-C: the run stops, saves, exits 130, and the checkpoint resumes
"$TFM" train "${ARGS[@]}" --steps 100000 --save "$WORK/int.st" > /dev/null 2> "$WORK/int.log" &
pid=$!
for _ in $(seq 100); do grep -q "^step [0-9]* validation" "$WORK/int.log" 2>/dev/null && break; sleep 0.2; done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok || bad "SIGINT: exit $rc, want 130"
grep -q "stopped by signal 2" "$WORK/int.log" && ok || bad "SIGINT: no message"
"$TFM" train "${ARGS[@]}" --steps 1 --resume "$WORK/int.st" --save "$WORK/int2.st" > /dev/null 2>&1
# resuming past --steps only saves again; the point is that the interrupted checkpoint loads
expect_ok "interrupted checkpoint is resumable" "$TFM" train "${ARGS[@]}" --steps 100000 --time-limit 0.01 \
  --resume "$WORK/int.st" --save "$WORK/int3.st"

# SIGKILL while saving: save every step, kill at random moments, the checkpoint always loads
"$TFM" train "${ARGS[@]}" --steps 3 --save "$WORK/kill.st" > /dev/null 2>&1
printf 'w1 w2 w3\n' > "$WORK/probe.en"
for i in 1 2 3 4 5 6; do
  "$TFM" train "${ARGS[@]}" --steps 100000 --save-every 1 --resume "$WORK/kill.st" --save "$WORK/kill.st" \
    > /dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  if "$TFM" translate --model "$WORK/kill.st" --input "$WORK/probe.en" > /dev/null 2>&1; then ok
  else bad "kill $i: the checkpoint no longer loads"; fi
done

expect_fail "resume a model without train_state" 1 "not a resumable checkpoint" "$TFM" train "${ARGS[@]}" \
  --steps 5 --resume "$WORK/straight.best.safetensors" --save "$WORK/x.st"
expect_fail "resume with another learning rate" 1 "was trained with lr 0.32 but this run has 0.5" "$TFM" train \
  "${ARGS[@]}" --lr 0.5 --steps 30 --resume "$WORK/split.safetensors" --save "$WORK/x.st"
expect_fail "resume with other batches" 1 "was trained with --batch-tokens 300 but this run has 400" "$TFM" train \
  "${ARGS[@]}" --batch-tokens 400 --steps 30 --resume "$WORK/split.safetensors" --save "$WORK/x.st"
expect_fail "--init with --resume" 2 "exclude each other" "$TFM" train "${ARGS[@]}" --init "$WORK/kill.st" \
  --resume "$WORK/kill.st" --save "$WORK/x.st"
# --resume/--init keep the checkpoint's configuration: the run's own model flags may be repeated
# (ARGS above does), a model flag that differs is an error, not silently ignored
expect_fail "resume with another --pe" 2 "--pe rope (the checkpoint has sinusoidal)" "$TFM" train "${ARGS[@]}" \
  --pe rope --steps 30 --resume "$WORK/split.safetensors" --save "$WORK/x.st"
expect_fail "resume with another --d-model" 2 "--d-model 64 (the checkpoint has 32)" "$TFM" train "${ARGS[@]}" \
  --d-model 64 --steps 30 --resume "$WORK/split.safetensors" --save "$WORK/x.st"
expect_fail "init with --pe-zero-pad" 2 "--pe-zero-pad 1 (the checkpoint has 0)" "$TFM" train "${ARGS[@]}" \
  --pe-zero-pad --steps 1 --init "$WORK/split.safetensors" --save "$WORK/x.st"
[ ! -e "$WORK/x.st" ] && ok || bad "a refused run wrote its --save"
# a flag equal to the checkpoint's is fine even where the other defaults would not fit it (6 heads
# do not divide the default d_model 256, but the checkpoint has d_model 48)
"$TFM" train --data "$C" --d-model 48 --n-heads 6 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 300 \
  --batch-tokens 300 --warmup 10 --steps 2 --save "$WORK/h6.st" > /dev/null 2>&1 || bad "6-head run failed"
expect_ok "resume repeating --n-heads 6 alone" "$TFM" train --data "$C" --n-heads 6 --vocab-size 300 \
  --batch-tokens 300 --warmup 10 --steps 3 --resume "$WORK/h6.st" --save "$WORK/h6.st"
finish resume_cli
