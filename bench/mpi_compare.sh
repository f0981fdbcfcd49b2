#!/bin/sh
# Step time of the README model (docs/MPI.md): 1 process × 2 threads against 2 MPI ranks × 1
# thread each (`mpirun -np 2 --bind-to core`), side by side in one run, on the README recipe
# (`tfm train --data` defaults: d_model 256, 4 heads, d_ff 1024, 3+3 layers, 8k joint vocabulary,
# 3,000-token batches, Adam, dropout 0.1, label smoothing 0.1, clipping 1.0). Run it on a quiet
# machine: the load average is printed, and a busy machine makes the comparison meaningless.
#
#   bench/mpi_compare.sh [--steps N] [--rounds K] [--data DIR] [BUILD_DIR]
#
# Method: a model with its tokenizer is made once (one step of tfm train --data); then for each
# setting two runs from it, of 2 and of 2 + N steps (default N = 20), and the step time is their
# difference of wall time divided by N, which cancels the start-up (loading, encoding the corpus,
# the final validation). The settings alternate within each of K rounds (default 2); the table
# gives every round and the ratio. The batches are the same in every setting (the global batch does
# not depend on the number of ranks).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
steps=20 rounds=2 data=$repo/data/bible-en-es build=$repo/build
while [ $# -gt 0 ]; do
    case $1 in
        --steps) steps=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --data) data=$2; shift 2 ;;
        -h|--help) sed -n 2,16p "$0"; exit 0 ;;
        *) build=$1; shift ;;
    esac
done
tfm=$build/tfm
[ -x "$tfm" ] || { echo "no $tfm: build first (make)" >&2; exit 1; }
"$tfm" --version | grep -q "^MPI: yes" || { echo "$tfm was built without MPI (scripts/install-deps; reconfigure)" >&2; exit 1; }
[ -s "$data/train.en" ] || { echo "no corpus in $data: make corpus, or --data DIR" >&2; exit 1; }
mpiexec=$(command -v mpirun) || { echo "no mpirun (apt-get install openmpi-bin)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/tfm-mpi-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tfm" --version | sed 's/^/tfm: /'
echo "making the model and its tokenizer once ..."
"$tfm" train --data "$data" --src en --tgt es --steps 1 --eval-every 1000000 --save "$work/init.st" \
    > /dev/null 2> "$work/init.log" || { cat "$work/init.log" >&2; exit 1; }

now() { date +%s.%N; }
# run_steps SETTING N: wall seconds of a run of N steps from the model
run_steps() {
    t0=$(now)
    if [ "$1" = threads ]; then
        OMP_NUM_THREADS=2 "$tfm" train --data "$data" --init "$work/init.st" --steps "$2" --eval-every 1000000 \
            --save "$work/out.st" > /dev/null 2> "$work/run.log"
    else
        "$mpiexec" --bind-to core -np 2 -x OMP_NUM_THREADS=1 "$tfm" train --data "$data" --init "$work/init.st" \
            --steps "$2" --eval-every 1000000 --save "$work/out.st" > /dev/null 2> "$work/run.log"
    fi || { cat "$work/run.log" >&2; exit 1; }
    t1=$(now)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
step_time() { # step_time SETTING: seconds per step
    a=$(run_steps "$1" 2)
    b=$(run_steps "$1" $((2 + steps)))
    echo "$a $b $steps" | awk '{ printf "%.3f", ($2 - $1) / $3 }'
}
printf '%-6s %28s %28s %8s\n' round "1 process x 2 threads (s)" "2 ranks x 1 thread (s)" ratio
r=1
while [ $r -le "$rounds" ]; do
    a=$(step_time threads)
    b=$(step_time ranks)
    printf '%-6s %28s %28s %8s\n' "$r" "$a" "$b" "$(echo "$a $b" | awk '{ printf "%.2f", $2 / $1 }')"
    r=$((r + 1))
done
echo "ratio: 2-rank step time / 1-process step time (< 1: the ranks are faster)"
