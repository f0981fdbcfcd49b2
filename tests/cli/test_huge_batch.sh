#!/usr/bin/env bash
# Batch limits far above the input (issue 27, "every buffer sized from the data it holds"): with one
# input line, `--batch-size 100000000` for translate (greedy and beam 4), eval and score, and
# `--batch-tokens 2147483647` for perplexity, run under a 4 GB address-space limit and give exactly
# the output of the default batch size. Buffers sized from the limit instead (100,000,000 rows of
# max_len ids: 25 GB for translate's sources alone) fail with "out of memory". generate's
# --max-tokens is test_generate_limits.sh; embed has no batch option (fixed limits, batch_plan.h).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
export OMP_NUM_THREADS=2
HUGE=100000000

M=$WORK/m.st
hard_model "$M" || { bad "train: $(tail -3 "$WORK/hard_model.log")"; finish huge_batch; exit 1; }
head -1 "$WORK/corpus/valid.en" > "$WORK/one.en"
head -1 "$WORK/corpus/valid.es" > "$WORK/one.es"

# same_output LABEL CMD...: CMD with the default batch and with the huge one (appended), the latter
# under a 4 GB limit, both exit 0 with the same stdout
same_output() {
  local label=$1
  shift
  local want got
  want=$("$@" 2> "$WORK/default.err") || { bad "$label, default batch: $(tail -2 "$WORK/default.err")"; return; }
  got=$(under_vm_limit 4000000 "$@" "${HUGE_FLAG[@]}" 2> "$WORK/huge.err") ||
    { bad "$label, ${HUGE_FLAG[*]}: $(tail -2 "$WORK/huge.err")"; return; }
  [ -n "$want" ] && [ "$want" = "$got" ] && ok || bad "$label: '${want:0:200}' with the default batch, '${got:0:200}' with ${HUGE_FLAG[*]}"
}

HUGE_FLAG=(--batch-size "$HUGE")
same_output "translate" "$TFM" translate --model "$M" --input "$WORK/one.en"
same_output "translate --beam 4" "$TFM" translate --model "$M" --input "$WORK/one.en" --beam 4
same_output "eval" "$TFM" eval --model "$M" --src "$WORK/one.en" --ref "$WORK/one.es" --beam 2
# score on token ids: a freshly initialised small model, one pair
"$TFM" init --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
  --save "$WORK/ids.st" 2> "$WORK/init.log" || bad "init: $(tail -2 "$WORK/init.log")"
printf '5 6 7 8\n' > "$WORK/s.ids"
printf '1 4 9 2\n' > "$WORK/t.ids"
same_output "score" "$TFM" score --model "$WORK/ids.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids"

# perplexity: a decoder-only model of a few steps
"$TFM" train --arch decoder-only --text "$WORK/corpus/train.en" --vocab-size 500 --d-model 16 --n-heads 2 \
  --n-dec-layers 1 --d-ff 32 --max-len 32 --batch-tokens 600 --warmup 2 --steps 2 --seed 1 --save "$WORK/lm.st" \
  > /dev/null 2> "$WORK/lm.log" || bad "train decoder-only: $(tail -3 "$WORK/lm.log")"
HUGE_FLAG=(--batch-tokens 2147483647)
same_output "perplexity" "$TFM" perplexity --model "$WORK/lm.st" --text "$WORK/one.en"
finish huge_batch
