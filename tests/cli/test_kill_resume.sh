#!/usr/bin/env bash
# tfm-test: slow (about 60 s idle: 50 killed runs, each checked)
# Crash safety at scale (issue 12, docs/FUZZING.md): a training run that saves every step is killed
# with SIGKILL 50 times at seeded random moments (0.05 to 1 s after it starts, more on a slow build:
# loading, encoding, reserving, training, in the middle of a save). After every kill the last complete checkpoint
# loads (tfm translate with it) and the next run resumes from it at a step no earlier than the
# last one seen; temporary files a killed save left ("PATH.tmp.XXXXXX") are removed by the next
# save to the same path, and never those of another path; at the end one clean run finishes.
source "$(dirname "$0")/lib.sh"
C=$WORK/corpus
mkdir -p "$C"
awk 'BEGIN { srand(11); for (i = 0; i < 200; i++) { n = 3 + int(rand() * 8); s = ""; t = "";
       for (j = 0; j < n; j++) { w = int(rand() * 40); s = s (j ? " " : "") "w" w; t = t (j ? " " : "") "p" (39 - w) }
       print s > "'"$C"'/train.en"; print t > "'"$C"'/train.es" } }'
ARGS=(--data "$C" --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 300
      --batch-tokens 200 --warmup 10 --seed 5 --save-every 1 --eval-every 1000000)
export OMP_NUM_THREADS=1
CK=$WORK/ck.safetensors
printf 'w1 w2 w3\n' > "$WORK/probe.en"
"$TFM" train "${ARGS[@]}" --steps 2 --save "$CK" > /dev/null 2> "$WORK/first.log" || bad "first run failed: $(tail -2 "$WORK/first.log")"

# the kill window: 0.05 s to 1 s, or to 4 times what a run takes to load and save once when that is
# longer (a sanitizer build, a busy machine), so most kills land after the resume
t0=$(date +%s%N)
"$TFM" train "${ARGS[@]}" --steps 2 --resume "$CK" --save "$CK" > /dev/null 2>&1 || bad "a run that only saves failed"
span=$(( ($(date +%s%N) - t0) / 250000 ))
[ "$span" -lt 950 ] && span=950
# a leftover of another checkpoint in the same folder: no save of $CK may touch it
printf 'not mine' > "$WORK/other.safetensors.tmp.Ab12Cd"
RANDOM=20261201
last=2 left_seen=0 resumed=0
for i in $(seq 50); do
  ms=$((50 + (RANDOM * 32768 + RANDOM) % (span + 1)))
  "$TFM" train "${ARGS[@]}" --steps 100000000 --resume "$CK" --save "$CK" > /dev/null 2> "$WORK/run.log" &
  pid=$!
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  kill -KILL $pid 2> /dev/null
  wait $pid 2> /dev/null
  if ! "$TFM" translate --model "$CK" --input "$WORK/probe.en" > /dev/null 2> "$WORK/probe.log"; then
    bad "kill $i (after $ms ms): the checkpoint no longer loads: $(tail -1 "$WORK/probe.log")"
    break
  fi
  step=$(sed -n 's/.* at step \([0-9]*\) .*/\1/p' "$WORK/run.log" | head -1)
  if [ -n "$step" ]; then
    resumed=$((resumed + 1))
    [ "$step" -ge "$last" ] || bad "kill $i: resumed at step $step, before the step $last seen earlier"
    last=$step
  fi
  n=$(find "$WORK" -maxdepth 1 -name 'ck.safetensors.tmp.*' | wc -l)
  [ "$n" -gt 0 ] && left_seen=$((left_seen + 1))
  # a leftover the killed save did not make, as one killed mid-write would leave it
  [ $((i % 10)) -eq 0 ] && printf 'partial' > "$WORK/ck.safetensors.tmp.Zz$((i / 10))xy9"
done
[ "$resumed" -ge 25 ] && ok || bad "only $resumed of 50 runs got as far as resuming (kills too early?)"
[ "$last" -gt 2 ] && ok || bad "training never advanced past step 2 in 50 runs (last resumed step $last)"
echo "kill test: $resumed runs resumed, last at step $last; $left_seen kills left a temporary file"

# one clean run from the last checkpoint: it continues and its saves remove every leftover of $CK
target=$((last + 3))
"$TFM" train "${ARGS[@]}" --steps $target --resume "$CK" --save "$CK" > /dev/null 2> "$WORK/final.log" \
  && ok || bad "the final resumed run failed: $(tail -2 "$WORK/final.log")"
grep -q "resuming $CK at step" "$WORK/final.log" && ok || bad "the final run did not resume"
left=$(find "$WORK" -maxdepth 1 -name 'ck.safetensors.tmp.*')
[ -z "$left" ] && ok || bad "temporary files left after a clean save: $left"
[ -f "$WORK/other.safetensors.tmp.Ab12Cd" ] && ok || bad "a save of ck.safetensors removed another file's leftover"
expect_ok "the final checkpoint loads" "$TFM" translate --model "$CK" --input "$WORK/probe.en"
finish kill_resume
