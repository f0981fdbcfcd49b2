#!/bin/sh
# One training recipe at a fixed step budget (issue 14, point 3: the demo's recipe for a short
# budget, docs/TRAINING.md "A recipe for a short budget"): trains the demo's model with the
# given extra flags for STEPS steps, then prints one result line:
#
#   NAME steps=N wall_s=W ms_per_step=T valid_ppl=P bleu_greedy=B1 bleu_beam4=B4 [avg...] flags: ...
#
# wall_s is the whole of `tfm train` (tokenizer and data included); ms_per_step is the training
# loop's own figure (its elapsed seconds at the last step / steps), the one to compare between
# model sizes or batch sizes (on a quiet machine: it counts time stopped by SIGSTOP too). valid_ppl is the validation perplexity after the
# last step (tfm train validates at the end); BLEU is sacreBLEU-compatible corpus BLEU on the 302
# test verses (`tfm eval`), greedy and beam 4.
#
# With SNAPSHOTS="S1 S2 ..." (steps below STEPS) the run stops at each Si, keeps a copy of the
# model (model.stepSi.safetensors) and continues with --resume, which is exact (docs/TRAINING.md
# "Exact resume"): the same run as without snapshots. It then also averages the snapshots listed in
# AVERAGE (default: all of SNAPSHOTS) and the final model (bench/recipe_average.py) and adds
# avg_greedy=… avg_beam4=… to the line. SCORE="Si ..." (snapshots) first prints a result line for
# each of those snapshots as if the run had stopped there (the noam schedule does not depend on
# the step budget, so it is the same model as a run of Si steps): "NAME@Si steps=Si ...".
#
# Everything goes to out/recipe/NAME/ (logs, models, hypotheses); the result line is also appended
# to out/recipe/results.txt.
#
#   bench/recipe.sh NAME STEPS [tfm train flags...]     e.g. bench/recipe.sh w200 700 --warmup 200
#
# The base recipe is tfm train's defaults (pre-LN, d_model 256, 4 heads, 3+3 layers, d_ff 1024,
# 8k joint subwords, tied, --batch-tokens 3000, noam --lr 0.32 --warmup 400, label smoothing 0.1,
# dropout 0.1, clip 1), the demo's before this measurement; scripts/demo now adds --warmup 100
# --dropout 0. The flags given are added. Runs niced (a shared machine) on THREADS threads
# (default 2); TFM (default build/tfm), DATA (default data/bible-en-es), PYTHON (default
# /usr/bin/python3, with torch: Debian's python3-torch).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
[ $# -ge 2 ] || { echo "usage: bench/recipe.sh NAME STEPS [tfm train flags...]" >&2; exit 2; }
name=$1 steps=$2
shift 2
flags="$*"
tfm=${TFM:-$repo/build/tfm}
data=${DATA:-$repo/data/bible-en-es}
threads=${THREADS:-2}
python=${PYTHON:-/usr/bin/python3}
snapshots=${SNAPSHOTS:-}
average=${AVERAGE:-$snapshots}
score=${SCORE:-}
out=$repo/out/recipe/$name
mkdir -p "$out"
rm -f "$out"/train*.log "$out"/model*.safetensors
[ -x "$tfm" ] || { echo "recipe.sh: no $tfm (build first)" >&2; exit 1; }
[ -s "$data/train.en" ] || { echo "recipe.sh: no corpus in $data (scripts/get-corpus $data)" >&2; exit 1; }

# train UNTIL LOG [--resume M]: the run up to step UNTIL
train() {
    until_step=$1 log=$2
    shift 2
    nice -n 19 "$tfm" --threads "$threads" train --data "$data" --src en --tgt es \
        --save "$out/model.safetensors" --steps "$until_step" --eval-every 100000 --seed 1 "$@" \
        >"$log" 2>&1 || { tail -5 "$log" >&2; exit 1; }
}

t0=$(date +%s.%N)
resume=
for s in $snapshots; do
    [ "$s" -lt "$steps" ] || { echo "recipe.sh: snapshot $s is not below $steps" >&2; exit 2; }
    train "$s" "$out/train.to$s.log" $resume "$@"
    cp "$out/model.safetensors" "$out/model.step$s.safetensors"
    resume="--resume $out/model.safetensors"
done
train "$steps" "$out/train.log" $resume "$@"
t1=$(date +%s.%N)
wall=$(echo "$t0 $t1" | awk '{ printf "%.0f", $2 - $1 }')

# Log lines: "step N loss L lr X tokens/s T elapsed 412s eta 0s" and, after the last step,
# "step N validation loss V perplexity P": the final perplexity; the elapsed seconds at the end of
# each part of the run, summed.
bleu() { # MODEL BEAM TAG: corpus BLEU of MODEL on the test set
    nice -n 19 "$tfm" --threads "$threads" eval --model "$1" --src "$data/test.en" --ref "$data/test.es" \
        --beam "$2" --output "$out/test.$3.es" >"$out/eval.$3.txt" 2>&1 || { cat "$out/eval.$3.txt" >&2; exit 1; }
    awk '$1 == "BLEU" && $2 == "=" { print $3; exit }' "$out/eval.$3.txt"
}
result() { # TAG STEPS MODEL LOG [LOGS...]: one result line (perplexity from LOG, ms per step from LOGS) in $line
    tag=$1 n=$2 model=$3 log=$4
    shift 4
    ftag=${tag#@}
    ppl=$(awk '$3 == "validation" { p = $7 } END { print p }' "$log")
    msps=$(for f in "$@"; do
        awk '$1 == "step" && $9 == "elapsed" { t = $10 + 0 } END { print t + 0 }' "$f"
    done | awk -v n="$n" '{ t += $1 } END { if (t > 0) printf "%.0f", 1000 * t / n }')
    b1=$(bleu "$model" 1 "${ftag:-final}.greedy")
    b4=$(bleu "$model" 4 "${ftag:-final}.beam4")
    w=$wall
    [ -z "$tag" ] || w=-
    line="$name$tag steps=$n wall_s=$w ms_per_step=${msps:-?} valid_ppl=${ppl:-?} bleu_greedy=$b1 bleu_beam4=$b4"
}
report() {
    echo "$line$1 flags: $flags" >>"$repo/out/recipe/results.txt"
    echo "$line$1 flags: $flags"
}
for s in $score; do
    logs=
    for p in $snapshots; do [ "$p" -le "$s" ] && logs="$logs $out/train.to$p.log"; done
    result "@$s" "$s" "$out/model.step$s.safetensors" "$out/train.to$s.log" $logs
    report ""
done
result "" "$steps" "$out/model.safetensors" "$out/train.log" "$out"/train*.log
avg=
if [ -n "$average" ]; then
    set --
    for s in $average; do set -- "$@" "$out/model.step$s.safetensors"; done
    nice -n 19 "$python" "$here/recipe_average.py" "$out/model.avg.safetensors" "$@" "$out/model.safetensors"
    a1=$(bleu "$out/model.avg.safetensors" 1 avg.greedy)
    a4=$(bleu "$out/model.avg.safetensors" 4 avg.beam4)
    avg=" avg_greedy=$a1 avg_beam4=$a4 (mean of steps $(echo $average) $steps)"
fi
report "$avg"
