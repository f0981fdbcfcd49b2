#!/usr/bin/env bash
# tfm-test: slow (about 20 s idle: ten mpirun launches, two of them wait for a failure)
# Data-parallel `mpirun -np 2 tfm train` (docs/MPI.md): id files give the loss curve and model of
# one process; text mode stopped and resumed with 2 ranks equals an uninterrupted 2-rank run bit for
# bit, and resumes with 1 process too; a rank killed mid-run ends the job non-zero with a message
# within 30 s and the last checkpoint still loads and resumes; a rank that hangs (SIGSTOP) makes the
# others fail after --mpi-timeout; ranks given different settings all say so and exit non-zero.
source "$(dirname "$0")/lib.sh"
"$TFM" --version | grep -q "^MPI: yes" || skip "tfm was built without MPI (scripts/install-deps installs libopenmpi-dev openmpi-bin; then reconfigure)"
MPIEXEC=${TFM_MPIEXEC:-mpirun}
command -v "$MPIEXEC" > /dev/null || skip "no MPI launcher '$MPIEXEC' (install openmpi-bin: scripts/install-deps)"
# root in CI, 2 ranks on 2 shared cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# under AddressSanitizer (make test-asan): Open MPI's own never-freed memory is not ours
# (the slow unwinder: Open MPI's libraries have no frame pointers; the suppressions match names)
export OMPI_MCA_mca_base_component_disable_dlclose=1 LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/fixtures/mpi/lsan.supp}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
mpi() { timeout 120 "$MPIEXEC" --oversubscribe --bind-to none "$@"; }

# ---- id files: 2 ranks == 1 process ----
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
"$TFM" init --d-model 32 --n-heads 4 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
  --max-len 16 --seed 1 --save "$WORK/init.st" 2>/dev/null || bad "tfm init"
IDS=(--init "$WORK/init.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids" --steps 8 --batch-size 16
     --label-smoothing 0.1 --clip-norm 1 --lr 3e-3)
"$TFM" train "${IDS[@]}" --save "$WORK/one.st" > "$WORK/one.log" 2>/dev/null || bad "1 process failed"
mpi -np 2 "$TFM" train "${IDS[@]}" --save "$WORK/two.st" > "$WORK/two.log" 2> "$WORK/two.err" \
  || bad "2 ranks failed: $(tail -3 "$WORK/two.err")"
expect_ok "mpirun -np 1 (MPI with one rank) ends cleanly" mpi -np 1 "$TFM" train "${IDS[@]}" --steps 2 \
  --save "$WORK/np1.st"
[ "$(wc -l < "$WORK/two.log")" = 8 ] && ok || bad "2 ranks printed $(wc -l < "$WORK/two.log") step lines, want 8 (rank 0 alone)"
# the same steps: loss and gradient norm to 1e-5 relative, the same target counts
if paste -d' ' "$WORK/one.log" "$WORK/two.log" | awk 'function d(a, b) { return (a > b ? a - b : b - a) / (b > 0 ? b : 1) }
     { if ($2 != $12 || d($4, $14) > 1e-5 || d($8, $18) > 1e-5 || $10 != $20) exit 1 } END { if (NR != 8) exit 1 }'
then ok; else bad "2 ranks' steps differ from 1 process: $(paste "$WORK/one.log" "$WORK/two.log" | head -3)"; fi
"$TFM" score --model "$WORK/one.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids" > "$WORK/one.score" &&
"$TFM" score --model "$WORK/two.st" --src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids" > "$WORK/two.score" || bad "score"
paste -d' ' "$WORK/one.score" "$WORK/two.score" | awk '{ e = $1 - $3; if (e < 0) e = -e; if (e > 1e-4 || $2 != $4) exit 1 }' \
  && ok || bad "the 2-rank model scores differently from the 1-process one"

# ---- text mode: stop + resume with 2 ranks == straight 2-rank run ----
C=$WORK/corpus
mkdir -p "$C"
awk 'BEGIN { srand(7); for (i = 0; i < 460; i++) { n = 3 + int(rand() * 8); s = ""; t = "";
       for (j = 0; j < n; j++) { w = int(rand() * 40); s = s (j ? " " : "") "w" w; t = t (j ? " " : "") "p" (39 - w) }
       print s > (i < 400 ? "'"$C"'/train.en" : "'"$C"'/valid.en"); print t > (i < 400 ? "'"$C"'/train.es" : "'"$C"'/valid.es") } }'
ARGS=(--data "$C" --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 300
      --batch-tokens 300 --warmup 10 --dropout 0.1 --eval-every 5 --seed 3)
mpi -np 2 "$TFM" train "${ARGS[@]}" --steps 20 --save "$WORK/straight.safetensors" > /dev/null 2> "$WORK/s.err" \
  || bad "2-rank straight run failed: $(tail -3 "$WORK/s.err")"
grep -c "validation loss" "$WORK/s.err" | grep -qx 4 && ok || bad "want 4 validation lines (rank 0 alone): $(cat "$WORK/s.err")"
mpi -np 2 "$TFM" train "${ARGS[@]}" --steps 10 --save "$WORK/split.safetensors" > /dev/null 2>&1 || bad "first half failed"
mpi -np 2 "$TFM" train "${ARGS[@]}" --steps 20 --resume "$WORK/split.safetensors" --save "$WORK/split.safetensors" \
  > /dev/null 2> "$WORK/r.err" || bad "2-rank resume failed: $(tail -3 "$WORK/r.err")"
cmp -s "$WORK/straight.safetensors" "$WORK/split.safetensors" && ok || bad "2 ranks: 20 steps != 10 + resume + 10"
cmp -s "$WORK/straight.best.safetensors" "$WORK/split.best.safetensors" && ok || bad "2 ranks: best checkpoints differ"
# another N: the same global batches go on in one process (equal up to rounding, not bit for bit)
"$TFM" train "${ARGS[@]}" --steps 12 --resume "$WORK/split.safetensors" --save "$WORK/n1.st" > /dev/null 2>&1 &&
"$TFM" train "${ARGS[@]}" --steps 12 --resume "$WORK/n1.st" --save "$WORK/n1.st" 2>&1 | grep -q "resuming" \
  && ok || bad "a 2-rank checkpoint does not resume in one process"

# ---- a rank killed mid-run ----
pid_of_rank() { # pid_of_rank MPIRUN_PID RANK
  local p
  for p in $(pgrep -P "$1"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && echo "$p"
  done
}
start_long() { # start_long LOG [flags]: a long 2-rank run saving every 2 steps; sets MP
  local log=$1
  shift
  rm -f "$WORK/long.st"
  "$MPIEXEC" --oversubscribe --bind-to none -np 2 "$TFM" train "${ARGS[@]}" --steps 1000000 --save-every 2 \
    --save "$WORK/long.st" "$@" > /dev/null 2> "$log" &
  MP=$!
  for _ in $(seq 300); do [ -s "$WORK/long.st" ] && break; sleep 0.1; done
  sleep 0.3
}
start_long "$WORK/kill.err"
R1=$(pid_of_rank $MP 1)
[ -n "$R1" ] && ok || bad "no rank 1 under mpirun $MP"
t0=$SECONDS
kill -KILL $R1
( sleep 60; kill -KILL $MP 2>/dev/null ) & guard=$!
wait $MP
rc=$?
kill $guard 2>/dev/null
[ $rc -ne 0 ] && ok || bad "killed rank: mpirun exit 0"
[ $((SECONDS - t0)) -le 30 ] && ok || bad "killed rank: the job took $((SECONDS - t0)) s to end (> 30)"
grep -q "exited on signal 9" "$WORK/kill.err" && ok || bad "killed rank: no message: $(tail -5 "$WORK/kill.err")"
printf 'w1 w2 w3\n' > "$WORK/probe.en"
expect_ok "the last checkpoint loads after a killed rank" "$TFM" translate --model "$WORK/long.st" --input "$WORK/probe.en"
expect_ok "and resumes with 2 ranks" mpi -np 2 "$TFM" train "${ARGS[@]}" --steps 1000000 --time-limit 0.001 \
  --resume "$WORK/long.st" --save "$WORK/again.st"

# ---- a rank that hangs: the others give up after --mpi-timeout ----
start_long "$WORK/hang.err" --mpi-timeout 3
R1=$(pid_of_rank $MP 1)
t0=$SECONDS
kill -STOP $R1
( sleep 60; kill -KILL $MP $R1 2>/dev/null ) & guard=$!
wait $MP
rc=$?
kill $guard 2>/dev/null
kill -KILL $R1 2>/dev/null
[ $rc -ne 0 ] && ok || bad "hung rank: mpirun exit 0"
[ $((SECONDS - t0)) -le 30 ] && ok || bad "hung rank: the job took $((SECONDS - t0)) s to end (> 30)"
grep -q "rank 0 of 2: .*no answer from the other ranks for 3 s" "$WORK/hang.err" && ok || \
  bad "hung rank: no timeout message: $(tail -5 "$WORK/hang.err")"
expect_ok "the last checkpoint loads after a hung rank" "$TFM" translate --model "$WORK/long.st" --input "$WORK/probe.en"

# ---- ranks that disagree: every rank says so ----
mpi -np 1 "$TFM" train "${ARGS[@]}" --steps 5 --save "$WORK/x.st" : -np 1 "$TFM" train "${ARGS[@]}" --seed 4 \
  --steps 5 --save "$WORK/x.st" > /dev/null 2> "$WORK/diff.err"
rc=$?
[ $rc -ne 0 ] && ok || bad "ranks with different seeds: exit 0"
[ "$(grep -c "differ between ranks" "$WORK/diff.err")" = 2 ] && ok || bad "want the message from both ranks: $(cat "$WORK/diff.err")"
[ ! -e "$WORK/x.st" ] && ok || bad "ranks that disagree wrote a checkpoint"
mpi -np 1 "$TFM" train "${IDS[@]}" --save "$WORK/y.st" : -np 1 "$TFM" train "${IDS[@]}" --tgt-ids "$WORK/src.ids" \
  --save "$WORK/y.st" > /dev/null 2> "$WORK/diff2.err" && bad "ranks with other files: exit 0" || ok
# same tensor shapes, another configuration: rope and alibi have no tensors, so only the
# configuration tells the two models apart
for pe in rope alibi; do
  "$TFM" init --d-model 32 --n-heads 4 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
    --max-len 16 --seed 1 --pe $pe --save "$WORK/init_$pe.st" 2>/dev/null || bad "tfm init --pe $pe"
done
PE=(--src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids" --steps 2 --batch-size 16 --save "$WORK/z.st")
mpi -np 1 "$TFM" train --init "$WORK/init_rope.st" "${PE[@]}" : -np 1 "$TFM" train --init "$WORK/init_alibi.st" \
  "${PE[@]}" > /dev/null 2> "$WORK/diff3.err" && bad "ranks with another position encoding: exit 0" || ok
grep -q "model configuration" "$WORK/diff3.err" && ok || bad "want the configuration named: $(cat "$WORK/diff3.err")"
[ ! -e "$WORK/z.st" ] && ok || bad "ranks with different models wrote a checkpoint"
finish mpi_train
