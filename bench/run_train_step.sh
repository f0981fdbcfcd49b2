#!/bin/sh
# Training-step benchmark of issue 3, side by side in one run: tfm (bench_train_step) against
# PyTorch's nn.Transformer (bench/train_step_torch.py), the reference configuration (d_model 256,
# 4 heads, d_ff 1024, 3+3 layers, vocab 8000, 32 sentences × 32 tokens, Adam, dropout 0.1, label
# smoothing 0.1), median of STEPS timed steps after warm-up. Prints each result and the ratio
# PyTorch time / tfm time (> 1: tfm is faster), on both cores and pinned to one core.
#
#   bench/run_train_step.sh [STEPS]
#
# BENCH=path of bench_train_step (default build/bench_train_step); PYTHON=Debian's python3 with
# python3-torch (default /usr/bin/python3); TORCH_PYPI_PYTHON=a python with PyPI's torch (e.g. a
# virtualenv's bin/python), also measured when set. PyTorch is tuned as docs/BENCH.md says, with
# the OpenBLAS core type and ATen kernels picked from this CPU by bench/cpu_tuning.sh (AVX-512:
# SkylakeX/avx512; AVX2: Zen or Haswell/avx2; OPENBLAS_NUM_THREADS=1; 2 threads, 1 thread when
# pinned), and also run with OpenBLAS on 2 threads and ATen on 1 (the fastest here). tfm runs with its default threads (one per core it may use), also with
# OMP_NUM_THREADS=1, and pinned with taskset -c 0.
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
pin=""
command -v taskset > /dev/null && pin="taskset -c 0"
load() { uptime | sed 's/.*load average: *//'; }
median() { sed -n 's/^RESULT [a-z]* median_s=\([0-9.]*\).*/\1/p' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }
echo "run_train_step: $(date -u '+%Y-%m-%dT%H:%M:%SZ'), $(nproc) cores, load $(load)"
echo "  CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"

run() { # LABEL OUTFILE CMD...
    label=$1 file=$2
    shift 2
    echo "== $label"
    if "$@" > "$file" 2> "$file.err"; then
        tail -2 "$file" | head -1
    else
        echo "   failed: $(tail -3 "$file.err")"
        : > "$file"
    fi
}
run "tfm, default threads" "$out/tfm" "$bench" --steps "$steps"
run "tfm, OMP_NUM_THREADS=1" "$out/tfm_omp1" env OMP_NUM_THREADS=1 "$bench" --steps "$steps"
[ -n "$pin" ] && run "tfm, one core ($pin)" "$out/tfm_1" $pin "$bench" --steps "$steps"

. "$here/cpu_tuning.sh" # OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, ATEN_CPU_CAPABILITY from this CPU
pythons="debian:$py"
[ -n "${TORCH_PYPI_PYTHON:-}" ] && pythons="$pythons pypi:$TORCH_PYPI_PYTHON"
for entry in $pythons; do
    name=${entry%%:*} p=${entry#*:}
    if ! "$p" -c 'import torch' 2> /dev/null; then
        echo "== PyTorch ($name): $p cannot import torch, skipped"
        continue
    fi
    run "PyTorch ($name, $p), tuned, 2 threads" "$out/torch_$name" "$p" "$here/train_step_torch.py" \
        --steps "$steps" --threads 2
    # On 2 cores the GEMMs dominate, and ATen does not split one GEMM across its threads: giving
    # OpenBLAS the 2 threads (and ATen 1) measured faster here than cpu_tuning.sh's
    # (OpenBLAS 1 thread, ATen 2).
    run "PyTorch ($name), OpenBLAS 2 threads, ATen 1 thread" "$out/torch_${name}_blas2" \
        env OPENBLAS_NUM_THREADS=2 "$p" "$here/train_step_torch.py" --steps "$steps" --threads 1
    [ -n "$pin" ] && run "PyTorch ($name), tuned, one core ($pin), 1 thread" "$out/torch_${name}_1" $pin "$p" \
        "$here/train_step_torch.py" --steps "$steps" --threads 1
done

echo "== summary: median seconds per step; ratio = PyTorch / tfm (> 1: tfm is faster); load $(load)"
t2=$(median "$out/tfm")
t1=$( [ -s "$out/tfm_1" ] && median "$out/tfm_1" || true)
printf '  %-44s %9s s\n' "tfm (default threads)" "$t2"
printf '  %-44s %9s s\n' "tfm (OMP_NUM_THREADS=1)" "$(median "$out/tfm_omp1")"
[ -n "$t1" ] && printf '  %-44s %9s s\n' "tfm (one core)" "$t1"
for f in "$out"/torch_*; do
    case $f in *.err) continue ;; esac
    [ -s "$f" ] || continue
    t=$(median "$f")
    v=$(sed -n 's/.*version=\([^ ]*\).*/\1/p' "$f")
    case $f in
        *_1) printf '  %-44s %9s s   ratio %s (vs tfm one core)\n' "torch $v (tuned, one core)" "$t" "$(ratio "$t" "$t1")" ;;
        *_blas2) printf '  %-44s %9s s   ratio %s (vs tfm default)\n' "torch $v (OpenBLAS 2 thr, ATen 1)" "$t" \
            "$(ratio "$t" "$t2")" ;;
        *) printf '  %-44s %9s s   ratio %s (vs tfm default)\n' "torch $v (tuned, 2 threads)" "$t" "$(ratio "$t" "$t2")" ;;
    esac
done
