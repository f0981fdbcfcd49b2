#!/bin/sh
# make bench (docs/BENCH.md): tfm and its anchors side by side in one run, one table.
#   - FMA peak of this CPU (bench_tfm peak: AVX-512 / AVX2+FMA / SSE2 found at run time)
#   - training step, forward / backward / update split, of the reference and the paper's base
#     configuration: tfm (bench_tfm train) and PyTorch twins (bench/bench_torch.py: Debian's torch
#     1.13 by /usr/bin/python3, PyPI's torch 2.x by TORCH_PYPI_PYTHON), with the analytic GFLOP/s
#     and its fraction of the measured peak
#   - decoding greedy and beam 4 at batch 1 and 32 of the first N verses of the test set with a
#     trained model: tfm (bench_tfm decode) and CTranslate2 (fp32 and int8) on the SAME weights
#     (bench/ct2_convert.py), timed only after the check that CTranslate2's greedy output equals
#     tfm's on every verse and its log-probabilities of tfm's outputs are within 1e-3 nats
#   - each case its own process: its peak RSS
#   - alternated rounds: each engine of a case runs --rounds times, one process per round, the
#     engines in turn and in reverse order every other round (A B, B A, ...), so a host whose
#     speed drifts within minutes favours none of them; each engine's rounds are merged
#     (bench/bench_merge.awk: median of the rounds' medians, minimum of their minimums)
#
#   bench/bench.sh [--quick] [--rounds K] [--reps N] [--warmup W] [--configs "ref base"]
#                  [--model M] [--src FILE] [--sentences N] [--decode-reps R] [--out DIR]
#
# Defaults: --rounds 4, --reps 3 (timed training steps per process, after --warmup 2), --configs
# "ref base", --model out/demo/model.best.safetensors (make demo), --src data/bible-en-es/test.en,
# --sentences 302, --decode-reps 1 (timed decodings per process), --out a temporary folder
# (removed). --quick: config tiny, 1 round of 1 step after 1 warm-up, 8 sentences, 1 decoding
# (the smoke test's; no timing worth reading).
# Environment: BUILD (build folder, default build), PYTHON (Debian's python3 with python3-torch,
# default /usr/bin/python3), TORCH_PYPI_PYTHON (a python with PyPI's torch), CT2_PYTHON (a python
# with PyPI's ctranslate2; default: .venv/bench/bin/python if present, see bench/setup-anchors.sh).
# An anchor that is missing prints "SKIP: reason" in its row; the run goes on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD:-$repo/build}
bench=$build/bench_tfm
py=${PYTHON:-/usr/bin/python3}
ct2py=${CT2_PYTHON:-}
[ -z "$ct2py" ] && [ -x "$repo/.venv/bench/bin/python" ] && ct2py=$repo/.venv/bench/bin/python
torch2py=${TORCH_PYPI_PYTHON:-}
[ -z "$torch2py" ] && [ -x "$repo/.venv/bench/bin/python" ] && torch2py=$repo/.venv/bench/bin/python
rounds=4 reps=3 warmup=2 configs="ref base" model=$repo/out/demo/model.best.safetensors
src=$repo/data/bible-en-es/test.en sentences=302 dreps=1 out="" peak_s=1
for a in "$@"; do # --quick first, so that flags given with it win wherever they stand
    if [ "$a" = --quick ]; then rounds=1 reps=1 warmup=1 configs=tiny sentences=8 dreps=1 peak_s=0.2; fi
done
while [ $# -gt 0 ]; do
    case $1 in
        --quick) ;;
        --rounds) rounds=$2; shift ;;
        --reps) reps=$2; shift ;;
        --warmup) warmup=$2; shift ;;
        --configs) configs=$2; shift ;;
        --model) model=$2; shift ;;
        --src) src=$2; shift ;;
        --sentences) sentences=$2; shift ;;
        --decode-reps) dreps=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "usage: bench/bench.sh [--quick] [--rounds K] [--reps N] [--warmup W] [--configs LIST] [--model M] [--src FILE]" \
                "[--sentences N] [--decode-reps R] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
case $rounds in
    '' | *[!0-9]* | 0) echo "bench.sh: --rounds wants a positive integer, not '$rounds'" >&2; exit 2 ;;
esac
if [ "$rounds" -gt 1 ] && [ $((rounds % 2)) = 1 ]; then
    echo "bench.sh: note: $rounds rounds (odd): the first engine runs first once more than the others" >&2
fi
if [ ! -x "$bench" ]; then
    echo "bench.sh: no $bench: build first (make)" >&2
    exit 1
fi
if [ -z "$out" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
res=$out/results.txt
: > "$res"
load() { uptime | sed 's/.*load average: *//'; }
# run LABEL LOG DEST CMD...: runs one case (its own process), appends its RESULT line to DEST, or
# notes a failure there
run() {
    label=$1 log=$2 dest=$3
    shift 3
    if "$@" > "$log" 2>&1; then
        grep '^RESULT ' "$log" | tail -1 | sed "s|\$| label=$label|" >> "$dest"
    else
        echo "FAILED $label: $(tail -2 "$log" | tr '\n' ' ')" >> "$dest"
    fi
}
# alternate CASE ENGINE...: runs `engine CASE ENGINE ROUND RAW` for every engine in every round,
# in the order given in odd rounds and reversed in even ones, then merges each engine's rounds
# into results.txt (bench_merge.awk). The first engine named is the one the others' ratios use.
alternate() {
    case_id=$1
    shift
    forward="$*" reverse=""
    for e in "$@"; do reverse="$e $reverse"; done
    raw=$out/raw_$case_id.txt
    : > "$raw"
    r=1
    while [ "$r" -le "$rounds" ]; do
        if [ $((r % 2)) = 1 ]; then order=$forward; else order=$reverse; fi
        for e in $order; do engine "$case_id" "$e" "$r" "$raw"; done
        r=$((r + 1))
    done
    awk -v order_given="$forward" -f "$here/bench_merge.awk" "$raw" >> "$res"
}
ncores=$(nproc)
echo "make bench: $(date -u '+%Y-%m-%dT%H:%M:%SZ'), CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)," \
     "$ncores cores, load $(load)"
echo "  logs and results: $out; engines alternated over $rounds round(s) per case"
echo "  $("$build/tfm" --version 2>/dev/null | grep "^BLAS:" || echo "BLAS: unknown (no $build/tfm)")"

# 1. the FMA peak
run peak "$out/peak.log" "$res" "$bench" peak --seconds "$peak_s"

# 2. the training step
. "$here/cpu_tuning.sh" 2> "$out/cpu_tuning.log" # OPENBLAS_CORETYPE etc. for this CPU, before Python starts
# engine CASE ENGINE ROUND RAW: one process of one engine for alternate()
engine() {
    case $1 in
        train_*)
            cfg=${1#train_}
            case $2 in
                tfm) run tfm "$out/train_tfm_${cfg}_r$3.log" "$4" "$bench" train --config "$cfg" --reps "$reps" \
                    --warmup "$warmup" ;;
                torch-debian | torch-pypi)
                    p=$py
                    [ "$2" = torch-pypi ] && p=$torch2py
                    run "$2" "$out/train_$(echo "$2" | tr - _)_${cfg}_r$3.log" "$4" "$p" "$here/bench_torch.py" \
                        --config "$cfg" --reps "$reps" --warmup "$warmup" --threads "$ncores" ;;
            esac ;;
        decode_*)
            beam=${1#decode_} batch=${beam#*_} beam=${beam%_*}
            case $2 in
                tfm) run tfm "$out/decode_tfm_${beam}_${batch}_r$3.log" "$4" "$bench" decode --model "$model" \
                    --src "$src" --sentences "$sentences" --reps "$dreps" --beam "$beam" --batch "$batch" ;;
                ct2-float32 | ct2-int8)
                    ct=${2#ct2-} dir=$out/ct2
                    [ "$ct" = int8 ] && dir=$out/ct2_int8
                    run "$2" "$out/decode_ct2_${ct}_${beam}_${batch}_r$3.log" "$4" "$ct2py" "$here/ct2_decode.py" time \
                        "$dir" "$out/tfm_greedy.ids" --beam "$beam" --batch "$batch" --reps "$dreps" \
                        --threads "$ncores" --compute-type "$ct" ;;
            esac ;;
    esac
}
for cfg in $configs; do
    engines=tfm
    for entry in "debian:$py" "pypi:$torch2py"; do
        name=${entry%%:*} p=${entry#*:}
        if [ -z "$p" ] || ! "$p" -c 'import torch' > /dev/null 2>&1; then
            echo "SKIP train config=$cfg impl=torch-$name: ${p:-no python given} cannot import torch" >> "$res"
            continue
        fi
        engines="$engines torch-$name"
    done
    alternate "train_$cfg" $engines
done

# 3. decoding
ct2_ok=0
if [ ! -s "$model" ]; then
    echo "SKIP decode: no model $model (make demo, or --model M)" >> "$res"
elif [ ! -s "$src" ]; then
    echo "SKIP decode: no source file $src (make corpus, or --src FILE)" >> "$res"
else
    # tfm's greedy outputs and their log-probabilities, the reference of the CTranslate2 check
    if ! "$bench" decode --model "$model" --src "$src" --sentences "$sentences" --reps 1 \
        --ids-out "$out/tfm_greedy.ids" > "$out/decode_check.log" 2>&1; then
        echo "FAILED decode impl=tfm: $(tail -2 "$out/decode_check.log" | tr '\n' ' ')" >> "$res"
    elif [ -z "$ct2py" ] || ! "$ct2py" -c 'import ctranslate2' > /dev/null 2>&1; then
        echo "SKIP decode impl=ct2: ${ct2py:-no CT2_PYTHON} cannot import ctranslate2 (bench/setup-anchors.sh)" >> "$res"
    elif ! "$ct2py" "$here/ct2_convert.py" "$model" "$out/ct2" > "$out/ct2_convert.log" 2>&1; then
        echo "SKIP decode impl=ct2: conversion failed: $(tail -1 "$out/ct2_convert.log")" >> "$res"
    else
        "$ct2py" "$here/ct2_convert.py" "$model" "$out/ct2_int8" --quantization int8 > /dev/null 2>&1 || true
        if "$ct2py" "$here/ct2_decode.py" check "$out/ct2" "$out/tfm_greedy.ids" > "$out/ct2_check.log" 2>&1; then
            ct2_ok=1
        fi
        grep -v '^RESULT\|^  first' "$out/ct2_check.log" | sed 's/^/CHECK /' >> "$res" || true
        # beam 4: how many of tfm's outputs CTranslate2 reproduces (same penalty and stop rule)
        if [ "$ct2_ok" = 1 ] && "$bench" decode --model "$model" --src "$src" --sentences "$sentences" --reps 1 \
            --beam 4 --ids-out "$out/tfm_beam4.ids" > "$out/decode_check_beam.log" 2>&1; then
            "$ct2py" "$here/ct2_decode.py" check-beam "$out/ct2" "$out/tfm_beam4.ids" --beam 4 \
                > "$out/ct2_check_beam.log" 2>&1 || true
            grep -v '^RESULT\|^  first' "$out/ct2_check_beam.log" | sed 's/^/CHECK /' >> "$res" || true
        fi
        [ "$ct2_ok" = 1 ] || echo "SKIP decode impl=ct2: not the same translations as tfm, not timed ($out/ct2_check.log)" >> "$res"
    fi
    engines=tfm
    if [ "$ct2_ok" = 1 ]; then
        engines="$engines ct2-float32"
        [ -d "$out/ct2_int8" ] && engines="$engines ct2-int8"
    fi
    for beam in 1 4; do
        for batch in 1 32; do
            alternate "decode_${beam}_$batch" $engines
        done
    done
    f=$out/decode_ct2_float32_1_1_r1.log
    if [ -s "$f" ]; then
        echo "NOTE CTranslate2 picked: $(grep -o 'CPU: .*\|Selected ISA: .*\|SGEMM backend: .*\|GEMM_S8 backend: [A-Za-z]*' "$f" | \
            head -4 | tr '\n' ';' | sed 's/;$//; s/;/; /g') (CT2_USE_MKL, CT2_FORCE_CPU_ISA change it)" >> "$res"
    fi
fi
echo "  load after: $(load)"
awk -f "$here/bench_table.awk" "$res"
