#!/usr/bin/env bash
# Runs every libFuzzer target of a TFM_FUZZ=ON build for SECONDS each (docs/FUZZING.md):
#   fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
# Each target starts from its seed corpus fuzz/corpus/<t>/ (and the regression inputs tests/fuzz/<t>/),
# with the dictionary fuzz/<t>.dict if there is one,
# read only: what libFuzzer finds new goes to BUILD_DIR/fuzz-corpus/<t>/, crashes, leaks, timeouts
# (10 s per input) and out-of-memory (2 GB) inputs to BUILD_DIR/fuzz-artifacts/<t>/. Prints one line
# per target (executions, executions/s, corpus size, result) and writes them to
# BUILD_DIR/fuzz-summary.txt. Exits 1 if any target found something: make the input a regression
# file under tests/fuzz/<t>/ and fix the code (docs/FUZZING.md, "When a target finds something").
# Environment: FUZZ_SEED (libFuzzer's -seed; unset: random) and FUZZ_TIMEOUT (seconds per input,
# default 10). CI sets FUZZ_SEED=1 and FUZZ_TIMEOUT=60, so a clean commit on a loaded runner is
# judged on the same inputs every time and a slow input there is not a finding. An input slower than
# SLOW seconds (FUZZ_SLOW, default 10) but under the timeout is kept as BUILD_DIR/fuzz-artifacts/<t>/
# slow-unit-* and named on the summary line ("ok, N slow input(s)"): worth a look, not a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.c; do t=${f#fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
summary="$build/fuzz-summary.txt"
: > "$summary"
failed=0
for t in "${targets[@]}"; do
  bin="$build/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: $bin is missing (build with -DTFM_FUZZ=ON: make fuzz)" >&2; exit 2; }
  work="$build/fuzz-corpus/$t" art="$build/fuzz-artifacts/$t"
  rm -rf "$art"
  mkdir -p "$work" "$art"
  seeds=("fuzz/corpus/$t")
  [ -d "tests/fuzz/$t" ] && seeds+=("tests/fuzz/$t")
  log="$build/fuzz-$t.log"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")  # tokens libFuzzer would hardly guess
  # -close_fd_mask=3: the readers' error messages would drown the log (sanitizer reports still show)
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
  OMP_NUM_THREADS=1 "$bin" "$work" "${seeds[@]}" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" \
    -report_slow_units="${FUZZ_SLOW:-10}" -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} "${dict[@]}" > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(find "$work" -type f | wc -l)
  found=$(find "$art" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$art" -type f -name 'slow-unit-*' | wc -l)
  result="ok"
  [ "$slow" -ne 0 ] && result="ok, $slow slow input(s) in $art (over ${FUZZ_SLOW:-10} s, under the timeout)"
  if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
    result="FOUND $found input(s) in $art (exit $rc; see $log)"
    failed=1
  fi
  line=$(printf "fuzz_%-12s %10s executions in %s s (%s/s), corpus %s files: %s" "$t" "${execs:-?}" "$seconds" \
         "${speed:-?}" "$size" "$result")
  echo "$line" | tee -a "$summary"
done
exit $failed
