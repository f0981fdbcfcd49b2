#!/bin/sh
# Issue 10's measurement: the same `tfm train --data` run (same seed, same flags, same budget) once
# per position encoding, one after the other (each gets the whole machine), then greedy decoding
# of the test set; prints validation perplexity and test BLEU side by side.
#
#   bench/pe_compare.sh [-m MINUTES | -s STEPS] [-d DATA] [-o OUTDIR] [-e EVAL_EVERY] [-p "VARIANTS"]
#                       [-- more tfm train flags]
#
#   -m MINUTES   wall-clock training budget per variant (tfm train --time-limit; default 10)
#   -s STEPS     a step budget instead (tfm train --steps)
#   -d DATA      corpus folder with train/valid/test.{en,es} (default data/bible-en-es)
#   -o OUTDIR    where each variant's checkpoint, log and translations go (default /tmp/pe_compare)
#   -e N         validate every N steps (default 250, as bench/run_translation_comparison.sh)
#   -p VARIANTS  space-separated list; a variant is PE[:FLAG[=VALUE][,FLAG...]] with tfm train's
#                flags without their dashes, e.g. "sinusoidal sinusoidal:pe-layout=concat
#                sinusoidal:pe-zero-pad,pe-scale learned t5:pe-buckets=64". Default: every --pe
#                value this build accepts, plus the sinusoidal options one at a time.
#
# Run it on a quiet machine: the budget is wall-clock time. Only training steps count towards
# --time-limit; the tokenizer (trained by each run from the same files and seed, so the same) and
# decoding are outside it. The tfm binary is copied first, so rebuilding meanwhile is harmless.
# Every variant uses the README recipe (tfm train --data defaults) and --seed 1.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
minutes=10 steps= data=$repo/data/bible-en-es out=/tmp/pe_compare every=250 variants=
while getopts m:s:d:o:e:p: opt; do
    case $opt in
    m) minutes=$OPTARG ;;
    s) steps=$OPTARG minutes= ;;
    d) data=$OPTARG ;;
    o) out=$OPTARG ;;
    e) every=$OPTARG ;;
    p) variants=$OPTARG ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
for f in train.en train.es valid.en valid.es test.en test.es; do
    [ -s "$data/$f" ] || { echo "pe_compare: $data/$f is missing (scripts/get-corpus makes data/bible-en-es)" >&2; exit 1; }
done
mkdir -p "$out"
cp "$repo/build/tfm" "$out/tfm-bin"
tfm=$out/tfm-bin

# the kinds this build has: those `tfm init --pe X` accepts
if [ -z "$variants" ]; then
    names=$("$tfm" init --help | sed -n 's/.*--pe S *position encoding: \(.*\) (default.*/\1/p' | sed 's/,//g; s/ or / /')
    for pe in $names; do
        if "$tfm" init --pe "$pe" --d-model 8 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 --d-ff 8 \
            --src-vocab 8 --tgt-vocab 8 --save "$out/probe.safetensors" 2>/dev/null; then
            variants="$variants $pe"
            [ "$pe" = sinusoidal ] && variants="$variants sinusoidal:pe-layout=concat sinusoidal:pe-zero-pad sinusoidal:pe-scale"
        fi
    done
    rm -f "$out/probe.safetensors"
fi
[ -n "$variants" ] || { echo "pe_compare: no variant to run" >&2; exit 1; }

budget=${minutes:+--time-limit $minutes}
budget=${budget:---steps $steps}
echo "== pe_compare: budget '$budget' per variant, seed 1, data $data"
echo "== $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, load:$(uptime | sed 's/.*load average://')"
echo "== $("$tfm" --version | grep "^BLAS:")"
[ "$#" -gt 0 ] && echo "== extra train flags: $*"

for v in $variants; do
    pe=${v%%:*}
    flags="--pe $pe"
    case $v in *:*)
        for o in $(echo "${v#*:}" | tr ',' ' '); do
            case $o in *=*) flags="$flags --${o%%=*} ${o#*=}" ;; *) flags="$flags --$o" ;; esac
        done ;;
    esac
    label=$(echo "$v" | tr ':,=' '___')
    d=$out/$label
    mkdir -p "$d"
    echo "== $v: tfm train $flags $budget"
    # shellcheck disable=SC2086 # flags and budget are word lists
    "$tfm" train --data "$data" --src en --tgt es --save "$d/model.safetensors" $budget --eval-every "$every" \
        --seed 1 $flags "$@" 2> "$d/train.log" || { echo "   failed: $(tail -n 2 "$d/train.log")"; continue; }
    "$tfm" eval --model "$d/model.safetensors" --src "$data/test.en" --ref "$data/test.es" \
        --output "$d/test.es" > "$d/test.bleu" 2> "$d/eval.log" || echo "   eval failed: $(tail -n 1 "$d/eval.log")"
done

echo
echo "== side by side (final checkpoint; perplexity of the last validation, best in brackets; greedy test BLEU)"
printf '%-34s %8s %12s %12s %8s %8s\n' variant steps "valid ppl" "(best)" BLEU chrF2
for v in $variants; do
    d=$out/$(echo "$v" | tr ':,=' '___')
    [ -s "$d/train.log" ] || continue
    st=$(grep -o 'tfm train: [0-9]* steps' "$d/train.log" | tail -n 1 | awk '{print $3}')
    ppl=$(grep 'validation loss' "$d/train.log" | tail -n 1 | sed -n 's/.*perplexity \([0-9.]*\).*/\1/p')
    best=$(grep 'validation loss' "$d/train.log" | sed -n 's/.*perplexity \([0-9.]*\).*/\1/p' | sort -g | head -n 1)
    bleu=$(sed -n 's/^BLEU = \([0-9.]*\).*/\1/p' "$d/test.bleu" 2>/dev/null | head -n 1)
    chrf=$(sed -n 's/^chrF2[^=]*= *\([0-9.]*\).*/\1/p' "$d/test.bleu" 2>/dev/null | head -n 1)
    printf '%-34s %8s %12s %12s %8s %8s\n' "$v" "${st:--}" "${ppl:--}" "(${best:--})" "${bleu:--}" "${chrf:--}"
done
