#!/bin/sh
# Busy-machine benchmark of issue 9, point 2: how much slower tfm gets when another program runs
# on the same cores. For each build folder given (its bench_train_step and tfm), prints the idle
# time, the busy time and their ratio for
#   (a) a training step of the reference configuration (bench_train_step: d_model 256, 4 heads,
#       d_ff 1024, 3+3 layers, vocab 8000, 32 × 32 tokens, Adam), median of STEPS steps,
#       beside one single-threaded busy loop;
#   (b) greedy decoding (`tfm translate`) of 89 fixed lines with a fixed model of the reference
#       shape that has a tokenizer (made once per build by `tfm train --data` on
#       tests/fixtures/tok_train.txt, one step: an untrained model decodes every line to its
#       maximum length, a fixed and deterministic workload), median of REPEAT runs, beside the
#       same busy loop;
#   (c) two trainings side by side (two bench_train_step at once) against one alone: the ratio of
#       the slower one's median step to the idle median of (a).
# Targets (issue 9): (a), (b) at most 2×; (c) at most 2.5×; idle time within 5 % of before.
#
#   bench/run_busy.sh [--steps N] [--repeat R] [--rounds K] [--shield] BUILD_DIR [BUILD_DIR...]
#
# With several build folders (e.g. /work/build-before build) every measurement runs for each
# folder in turn, close in time, and --rounds K repeats the whole set K times (A/B interleaving):
# compare folders within a round. --shield (root, Linux with autogroup scheduling) runs everything
# in a new session whose autogroup has nice -20, so that other users' jobs on a shared machine
# take ~1 % of the CPU instead of their share: the busy loop and tfm then compete as on an idle
# machine. Without it, run on a quiet machine (the load average is printed).
# The environment is passed through as is: OMP_NUM_THREADS, OMP_WAIT_POLICY and GOMP_SPINCOUNT
# change the result (docs/THREADS.md); tfm and bench_train_step of this tree set GOMP_SPINCOUNT
# themselves when none of them is set (tfm_reexec_for_shared_cores).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
steps=5 repeat=3 rounds=1 shield=0
usage() {
    echo "usage: bench/run_busy.sh [--steps N] [--repeat R] [--rounds K] [--shield] BUILD_DIR [BUILD_DIR...]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --steps) [ $# -ge 2 ] || usage; steps=$2; shift 2 ;;
        --repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
        --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
        --shield) shield=1; shift ;;
        --help | -h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
for d in "$@"; do
    if [ ! -x "$d/bench_train_step" ] || [ ! -x "$d/tfm" ]; then
        echo "run_busy: $d has no bench_train_step and tfm: build it (cmake --build DIR)" >&2
        exit 1
    fi
done
if [ "$shield" = 1 ] && [ -z "${RUN_BUSY_SHIELDED:-}" ]; then
    if [ "$(id -u)" != 0 ] || [ ! -w /proc/self/autogroup ] || ! command -v setsid > /dev/null; then
        echo "run_busy: --shield needs root, setsid and /proc/self/autogroup" >&2
        exit 1
    fi
    # a new session gets a new autogroup; nice -20 on it, then run this script again inside
    exec env RUN_BUSY_SHIELDED=1 setsid sh -c 'echo -20 > /proc/self/autogroup && exec "$@"' sh \
        sh "$0" --steps "$steps" --repeat "$repeat" --rounds "$rounds" "$@"
fi

work=$(mktemp -d)
busy_pid=""
stop_busy() {
    if [ -n "$busy_pid" ]; then
        kill "$busy_pid" 2> /dev/null || true
        wait "$busy_pid" 2> /dev/null || true
        busy_pid=""
    fi
}
trap 'stop_busy; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
start_busy() { # one single-threaded busy loop
    awk 'BEGIN { while (1) x++ }' &
    busy_pid=$!
}
now() { date +%s.%N; }
load() { uptime | sed 's/.*load average: *//'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
step_median() { # BUILD_DIR -> the median step time of bench_train_step
    "$1/bench_train_step" --steps "$steps" --warmup 2 | sed -n 's/^RESULT tfm median_s=\([0-9.]*\).*/\1/p'
}
decode_time() { # BUILD_DIR -> the median wall time of REPEAT greedy decodings
    i=0
    while [ $i -lt "$repeat" ]; do
        t0=$(now)
        "$1/tfm" translate --model "$work/$2/m.safetensors" --input "$work/src.txt" > "$work/$2/out.txt" \
            2> "$work/$2/translate.log"
        t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
        i=$((i + 1))
    done | median
}

echo "run_busy: $(date -u '+%Y-%m-%dT%H:%M:%SZ'), $(nproc) cores, load $(load)$([ -n "${RUN_BUSY_SHIELDED:-}" ] && echo ', shielded (autogroup nice -20)')"
echo "  CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "  OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-unset}"

# The decoding model, once per build folder (its own tfm writes the format it reads).
fix=$repo/tests/fixtures/tok_train.txt
head -n 400 "$fix" > "$work/train.en"
tail -n 89 "$fix" > "$work/valid.en"
cp "$work/train.en" "$work/train.es"
cp "$work/valid.en" "$work/valid.es"
cp "$work/valid.en" "$work/src.txt"
n=0
for d in "$@"; do
    n=$((n + 1))
    mkdir -p "$work/b$n"
    if ! "$d/tfm" train --data "$work" --src en --tgt es --save "$work/b$n/m.safetensors" --steps 1 \
        --vocab-size 1000 --eval-every 1000 > "$work/b$n/train.log" 2>&1; then
        echo "run_busy: could not make the decoding model with $d/tfm: $(tail -2 "$work/b$n/train.log")" >&2
        exit 1
    fi
done

r=1
while [ $r -le "$rounds" ]; do
    [ "$rounds" -gt 1 ] && echo "== round $r of $rounds (load $(load))"
    n=0
    for d in "$@"; do
        n=$((n + 1))
        a_idle=$(step_median "$d")
        start_busy
        a_busy=$(step_median "$d")
        stop_busy
        b_idle=$(decode_time "$d" "b$n")
        start_busy
        b_busy=$(decode_time "$d" "b$n")
        stop_busy
        step_median "$d" > "$work/c1" &
        c_pid=$!
        step_median "$d" > "$work/c2"
        wait "$c_pid"
        c1=$(cat "$work/c1") c2=$(cat "$work/c2")
        c_worst=$(printf '%s\n%s\n' "$c1" "$c2" | sort -g | tail -1)
        echo "$d"
        printf '  (a) training step      idle %8.4f s  busy %8.4f s  ratio %s (target <= 2)\n' "$a_idle" "$a_busy" \
            "$(ratio "$a_busy" "$a_idle")"
        printf '  (b) greedy decoding    idle %8.4f s  busy %8.4f s  ratio %s (target <= 2)\n' "$b_idle" "$b_busy" \
            "$(ratio "$b_busy" "$b_idle")"
        printf '  (c) two trainings      alone %7.4f s  side by side %.4f s / %.4f s  ratio %s (target <= 2.5)\n' \
            "$a_idle" "$c1" "$c2" "$(ratio "$c_worst" "$a_idle")"
        echo "RESULT build=$d round=$r step_idle_s=$a_idle step_busy_s=$a_busy decode_idle_s=$b_idle" \
            "decode_busy_s=$b_busy pair_step_s=$c_worst"
    done
    r=$((r + 1))
done
echo "run_busy: done, load $(load)"
