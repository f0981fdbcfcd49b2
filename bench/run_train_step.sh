#!/bin/sh
# Training-step benchmark of issue 3, side by side in one run: tfm (bench_train_step) against
# PyTorch's nn.Transformer (bench/train_step_torch.py), the reference configuration (d_model 256,
# 4 heads, d_ff 1024, 3+3 layers, vocab 8000, 32 sentences × 32 tokens, Adam, dropout 0.1, label
# smoothing 0.1), median of N timed steps after warm-up. Prints each result and the ratio
# PyTorch time / tfm time (> 1: tfm is faster).
#
#   bench/run_train_step.sh [STEPS]
#
# BENCH=path of bench_train_step (default build/bench_train_step); PYTHON=Debian's python3 with
# python3-torch (default /usr/bin/python3); TORCH_PYPI_PYTHON=a python with PyPI's torch (e.g. a
# virtualenv's bin/python), also measured when set. PyTorch is tuned as DESIGN.md §6 says
# (OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 ATEN_CPU_CAPABILITY=avx512, 2 threads).
# tfm is run with its default threads (one per core) and pinned to one core (taskset -c 0).
# Run it on a quiet machine: the load average is printed before and after.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
steps=${1:-10}
bench=${BENCH:-$repo/build/bench_train_step}
py=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -x "$bench" ]; then
    echo "run_train_step: no bench_train_step at $bench: build it or set BENCH=path" >&2
    exit 1
fi
load() { uptime | sed 's/.*load average: *//'; }
result() { sed -n 's/^RESULT [a-z]* median_s=\([0-9.]*\).*/\1/p' "$1"; }
echo "run_train_step: $(date -u '+%Y-%m-%dT%H:%M:%SZ'), $(nproc) cores, load $(load)"
echo "  CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"

echo "== tfm, default threads"
"$bench" --steps "$steps" | tee "$out/tfm2" | tail -2 | head -1
echo "== tfm, OMP_NUM_THREADS=1"
OMP_NUM_THREADS=1 "$bench" --steps "$steps" | tee "$out/tfm_omp1" | tail -2 | head -1
if command -v taskset > /dev/null; then
    echo "== tfm, pinned to one core (taskset -c 0)"
    taskset -c 0 "$bench" --steps "$steps" | tee "$out/tfm1" | tail -2 | head -1
fi

export OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 ATEN_CPU_CAPABILITY=avx512
torch_run() { # LABEL PYTHON OUT
    if "$2" -c 'import torch' 2> /dev/null; then
        echo "== $1 ($2), tuned, 2 threads"
        "$2" "$here/train_step_torch.py" --steps "$steps" --threads 2 | tee "$3" | tail -2 | head -1
    else
        echo "== $1: $2 cannot import torch, skipped"
    fi
}
torch_run "PyTorch (Debian)" "$py" "$out/torch_debian"
[ -n "${TORCH_PYPI_PYTHON:-}" ] && torch_run "PyTorch (PyPI)" "$TORCH_PYPI_PYTHON" "$out/torch_pypi"

t2=$(result "$out/tfm2")
echo "== summary (median seconds per step; ratio = PyTorch / tfm, > 1 means tfm is faster), load $(load)"
printf '  tfm %-28s %8s s\n' "default threads" "$t2"
printf '  tfm %-28s %8s s\n' "OMP_NUM_THREADS=1" "$(result "$out/tfm_omp1")"
[ -s "$out/tfm1" ] && printf '  tfm %-28s %8s s\n' "one core (taskset)" "$(result "$out/tfm1")"
for f in torch_debian torch_pypi; do
    [ -s "$out/$f" ] || continue
    t=$(result "$out/$f")
    v=$(sed -n 's/.*version=\([^ ]*\).*/\1/p' "$out/$f")
    [ -n "$t" ] || continue
    printf '  torch %-26s %8s s   ratio %s\n' "$v (tuned, 2 threads)" "$t" "$(awk -v a="$t" -v b="$t2" 'BEGIN { printf "%.2f", a / b }')"
done
