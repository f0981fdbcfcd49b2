#!/usr/bin/env bash
# The position-encoding study (docs/STUDY.md): which encodings keep working on sentences longer
# than any seen in training. One command, resumable: every encoding is trained for translation
# (sources of at most L tokens) and as a decoder-only language model (context C), with the same
# model, data, seeds and step budget, then tested past the training lengths; the report and the
# figures are made from whatever runs have finished.
#
#   study/pe_study.sh [-d DATA] [-o OUT] [-s MT_STEPS] [-l LM_STEPS] [-S "SEEDS"] [-p "VARIANTS"]
#                     [-j JOBS] [-t THREADS] [-r]            (make pe-study PE_STUDY_FLAGS="...")
#
#   -d DATA      corpus folder with {train,valid,test}.{en,es,ref} (default data/bible-en-es: make corpus)
#   -o OUT       where everything goes (default out/pe-study); an existing OUT resumes
#   -s STEPS     translation steps per run (default 800)      -l STEPS  language-model steps (default 700)
#   -S SEEDS     seeds per cell (default "1 2")                -j JOBS   runs at a time (default 2)
#   -t THREADS   threads per run (default 1: with -j 2, one core each on a 2-core machine)
#   -p VARIANTS  PE[:FLAG[=VALUE][,FLAG...]] with tfm init's flags without their dashes (default: none,
#                sinusoidal and its zero_pad and scale variants, learned, floater, shaw, t5, rope with
#                both pairings, alibi)
#   -r           only the report (OUT/report.md, OUT/report.csv, OUT/fig/*.png) from the finished runs
#
# Model and data (environment; defaults in brackets): D_MODEL [64] N_HEADS [4] N_LAYERS [2]
# (encoder and decoder; the language model has 2*N_LAYERS decoder layers) D_FF [256]
# BATCH_TOKENS [2000] VOCAB [8000] CONTEXT [64] MIN_LONG [1000] HELDOUT_PCT [10] HELDOUT
# [""; chapter names instead of the hash rule] SAVE_EVERY [500] TFM [build/tfm]; PE_STUDY_TRAIN_FLAGS: more
# tfm train flags (the test stops runs early with --time-limit; a run short of its steps is not done).
#
# Resuming: a run's checkpoint (tfm train --save-every, resumable) is continued with --resume; a
# finished run (train.done, eval.done) is kept. Delete OUT/runs/<mt|lm>/<variant>/seed<S> to redo one.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# ---- one run (called by the main script through xargs) -------------------------------------------
# variant_flags VARIANT: tfm init's flags of a variant ("rope:rope-pairing=half" -> --pe rope --rope-pairing half)
variant_flags() {
  local v=$1 o flags="--pe ${1%%:*}"
  case $v in *:*)
    for o in $(echo "${v#*:}" | tr ',' ' '); do
      case $o in *=*) flags="$flags --${o%%=*} ${o#*=}" ;; *) flags="$flags --$o" ;; esac
    done ;;
  esac
  echo "$flags"
}
label_of() { echo "$1" | tr ':,=' '_+-'; }

# run_job mt|lm VARIANT SEED: trains (or resumes) and evaluates one run; logs in its folder.
run_job() {
  local kind=$1 v=$2 seed=$3 d flags maxlen train_in rc=0
  # shellcheck disable=SC1091
  . "$OUT/data/params.sh"
  d=$OUT/runs/$kind/$(label_of "$v")/seed$seed
  mkdir -p "$d"
  [ -f "$d/eval.done" ] && return 0
  flags=$(variant_flags "$v")
  if [ "$kind" = mt ]; then
    maxlen=$MT_MAX_LEN
    shape=(--d-model "$D_MODEL" --n-heads "$N_HEADS" --n-enc-layers "$N_LAYERS" --n-dec-layers "$N_LAYERS" --d-ff "$D_FF"
           --norm-first 1 --tie-embeddings 1)
    train_in=(--data "$OUT/data/mt" --src en --tgt es)
    steps=$MT_STEPS
  else
    maxlen=$((16 * CONTEXT))
    [ "${v%%:*}" = learned ] && maxlen=$CONTEXT # its table: positions past C are N/A
    shape=(--arch decoder-only --d-model "$D_MODEL" --n-heads "$N_HEADS" --n-dec-layers $((2 * N_LAYERS)) --d-ff "$D_FF")
    train_in=(--text "$OUT/data/lm/train.txt")
    steps=$LM_STEPS
  fi
  local T=(env OMP_NUM_THREADS="$THREADS" "$TFM_BIN")
  if [ ! -f "$d/train.done" ]; then
    local start=(--init "$d/init.st")
    if [ -s "$d/model.st" ]; then
      start=(--resume "$d/model.st")
      echo "== $kind $v seed $seed: resuming $d/model.st" >&2
    else
      # shellcheck disable=SC2086 # flags is a word list
      "$TFM_BIN" init --tokenizer "$OUT/data/tok.model" "${shape[@]}" $flags --max-len "$maxlen" --seed "$seed" \
        --save "$d/init.st" 2> "$d/init.log" || { echo "== $kind $v seed $seed: init failed: $(tail -1 "$d/init.log")" >&2; return 1; }
    fi
    local t0=$SECONDS
    # shellcheck disable=SC2086 # PE_STUDY_TRAIN_FLAGS: extra tfm train flags (the test's --time-limit)
    "${T[@]}" train "${train_in[@]}" "${start[@]}" --save "$d/model.st" --steps "$steps" --seed "$seed" \
      --batch-tokens "$BATCH_TOKENS" --save-every "$SAVE_EVERY" --eval-every "$SAVE_EVERY" --log-every 100 \
      ${PE_STUDY_TRAIN_FLAGS:-} >> "$d/train.log" 2>&1 || rc=$?
    echo "wall_s $((SECONDS - t0))" >> "$d/train.log"
    local done_steps
    done_steps=$(sed -n 's/^tfm train: \([0-9]*\) steps in.*/\1/p' "$d/train.log" | tail -n 1)
    if [ "$rc" != 0 ] || [ "${done_steps:-0}" -lt "$steps" ]; then
      echo "== $kind $v seed $seed: training stopped at step ${done_steps:-?} of $steps (exit $rc; resumes next time)" >&2
      return 1
    fi
    touch "$d/train.done"
    rm -f "$d/init.st" # the starting point is in model.st's history; 10+ MB a run
  fi
  if [ "$kind" = mt ]; then
    local k
    "${T[@]}" eval --model "$d/model.st" --src "$OUT/data/test/single.en" --ref "$OUT/data/test/single.es" --by-length \
      --buckets "$BUCKETS" --csv "$d/single.csv" --output "$d/single.hyp" > "$d/single.txt" 2> "$d/eval.log" || rc=$?
    for k in 2 4 8; do
      [ "$rc" = 0 ] || break
      "${T[@]}" eval --model "$d/model.st" --src "$OUT/data/test/cat$k.en" --ref "$OUT/data/test/cat$k.es" \
        --output "$d/cat$k.hyp" > "$d/cat$k.txt" 2>> "$d/eval.log" || rc=$?
    done
    # corpus BLEU of the sources up to L and past it (tfm bleu on the two halves)
    if [ "$rc" = 0 ]; then
      paste -d '\t' "$OUT/data/test/single.len" "$d/single.hyp" "$OUT/data/test/single.es" |
        awk -F '\t' -v L="$L" -v a="$d/short" -v b="$d/long" \
          '{ f = $1 <= L ? a : b; print $2 > (f ".hyp"); print $3 > (f ".ref") }'
      "$TFM_BIN" bleu --hyp "$d/short.hyp" --ref "$d/short.ref" > "$d/short.txt" &&
        "$TFM_BIN" bleu --hyp "$d/long.hyp" --ref "$d/long.ref" > "$d/long.txt" || rc=$?
    fi
  else
    local k
    for k in 1 2 4 8 16; do
      if [ $((k * CONTEXT)) -gt "$maxlen" ]; then
        echo "N/A: context $((k * CONTEXT)) is past the model's max_len $maxlen (its position table)" > "$d/ppl_k$k.txt"
        continue
      fi
      "${T[@]}" perplexity --model "$d/model.st" --text "$OUT/data/lm/eval_k$k.txt" --by-position "$d/pos_k$k.csv" \
        > "$d/ppl_k$k.txt" 2>> "$d/eval.log" || { rc=$?; break; }
    done
  fi
  [ "$rc" = 0 ] || { echo "== $kind $v seed $seed: evaluation failed: $(tail -1 "$d/eval.log")" >&2; return 1; }
  touch "$d/eval.done"
  echo "== $kind $v seed $seed: done" >&2
}

if [ "${1:-}" = --job ]; then
  shift
  run_job "$@"
  exit $?
fi

# ---- the study --------------------------------------------------------------------------------------
PE_STUDY_TRAIN_FLAGS=${PE_STUDY_TRAIN_FLAGS:-}
DATA=$repo/data/bible-en-es OUT=$repo/out/pe-study MT_STEPS=800 LM_STEPS=700 SEEDS="1 2" JOBS=2 THREADS=1
VARIANTS="none sinusoidal sinusoidal:pe-zero-pad sinusoidal:pe-scale learned floater shaw t5 rope rope:rope-pairing=half alibi"
report_only=0
while getopts d:o:s:l:S:p:j:t:r opt; do
  case $opt in
  d) DATA=$OPTARG ;; o) OUT=$OPTARG ;; s) MT_STEPS=$OPTARG ;; l) LM_STEPS=$OPTARG ;; S) SEEDS=$OPTARG ;;
  p) VARIANTS=$OPTARG ;; j) JOBS=$OPTARG ;; t) THREADS=$OPTARG ;; r) report_only=1 ;;
  *) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0" >&2; exit 2 ;;
  esac
done
: "${D_MODEL:=64}" "${N_HEADS:=4}" "${N_LAYERS:=2}" "${D_FF:=256}" "${BATCH_TOKENS:=2000}" "${VOCAB:=8000}"
: "${CONTEXT:=64}" "${MIN_LONG:=1000}" "${HELDOUT_PCT:=10}" "${HELDOUT:=}" "${SAVE_EVERY:=500}" "${TFM:=$repo/build/tfm}"
[ -x "$TFM" ] || { echo "pe_study: $TFM is missing: build first (make)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# the study's settings are fixed at its first start: a resumed study must not mix budgets, nor
# corpora (its splits in $OUT/data are made once, from the first start's DATA)
data_abs=$(cd "$DATA" 2> /dev/null && pwd) || data_abs=$DATA
settings=$(printf '%s\n' "DATA=$data_abs" "MT_STEPS=$MT_STEPS" "LM_STEPS=$LM_STEPS" "D_MODEL=$D_MODEL" "N_HEADS=$N_HEADS" \
  "N_LAYERS=$N_LAYERS" "D_FF=$D_FF" "BATCH_TOKENS=$BATCH_TOKENS" "VOCAB=$VOCAB" "CONTEXT=$CONTEXT" "MIN_LONG=$MIN_LONG" \
  "HELDOUT_PCT=$HELDOUT_PCT" "HELDOUT=$HELDOUT")
if [ "$report_only" = 0 ] && [ -f "$OUT/settings" ] && [ "$(cat "$OUT/settings")" != "$settings" ]; then
  echo "pe_study: $OUT was started with other settings:" >&2
  echo "  then: $(tr '\n' ' ' < "$OUT/settings")" >&2
  echo "  now:  $(tr '\n' ' ' <<< "$settings")" >&2
  echo "  (use another -o, or the same settings to resume)" >&2
  exit 2
fi
[ "$report_only" = 1 ] || echo "$settings" > "$OUT/settings"
[ -f "$OUT/settings" ] || { echo "pe_study: $OUT holds no study to report on" >&2; exit 1; }
if [ "$report_only" = 0 ]; then
  # the binary is copied, so rebuilding meanwhile is harmless
  [ -x "$OUT/tfm-bin" ] && cmp -s "$TFM" "$OUT/tfm-bin" || cp "$TFM" "$OUT/tfm-bin"
  if [ ! -f "$OUT/data/params.sh" ]; then
    echo "== pe_study: preparing the splits in $OUT/data" >&2
    "$PY" "$here/prepare.py" --tfm "$OUT/tfm-bin" --data "$DATA" --out "$OUT/data" --heldout-pct "$HELDOUT_PCT" \
      --heldout "$HELDOUT" --min-long "$MIN_LONG" --vocab "$VOCAB" --context "$CONTEXT" > "$OUT/prepare.log"
  fi
  export OUT TFM_BIN="$OUT/tfm-bin" PE_STUDY_TRAIN_FLAGS MT_STEPS LM_STEPS D_MODEL N_HEADS N_LAYERS D_FF BATCH_TOKENS SAVE_EVERY THREADS
  jobs_file=$OUT/jobs
  : > "$jobs_file"
  for v in $VARIANTS; do
    for s in $SEEDS; do printf 'mt %s %s\n' "$v" "$s" >> "$jobs_file"; done
  done
  for v in $VARIANTS; do
    for s in $SEEDS; do printf 'lm %s %s\n' "$v" "$s" >> "$jobs_file"; done
  done
  echo "== pe_study: $(wc -l < "$jobs_file") runs, $JOBS at a time, $THREADS thread(s) each; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores" >&2
  failed=0
  xargs -P "$JOBS" -L 1 "$0" --job < "$jobs_file" || failed=1
  [ "$failed" = 0 ] || echo "== pe_study: some runs did not finish (see above); run the same command again to resume them" >&2
fi
"$PY" "$here/report.py" --out "$OUT" --variants "$VARIANTS" --seeds "$SEEDS"
echo "== pe_study: $OUT/report.md, $OUT/report.csv, $OUT/fig/" >&2
[ "${failed:-0}" = 0 ] # exit 1 while a run is unfinished (the report shows "-" for it)
