# Shared by the tests/cli/test_hard_*.sh tests (issue 12's five kinds of fault): a tiny text model
# with its tokenizer, trained for a few steps on tests/fixtures/tok_train.txt (no corpus needed).
# Source after lib.sh. Its output is not meant to be good, only real: a model whose decoding runs.

# hard_model OUT [extra train flags]: trains OUT (and OUT's .best) on the corpus in $WORK/corpus for
# 4 steps; returns non-zero (log in $WORK/hard_model.log) if training fails.
hard_model() {
  local out=$1
  shift
  [ -f "$WORK/corpus/train.en" ] || tiny_corpus "$WORK/corpus"
  "$TFM" train --data "$WORK/corpus" --save "$out" --steps 4 --d-model 16 --n-heads 2 --d-ff 32 \
    --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --batch-tokens 600 --warmup 2 --eval-every 2 \
    --log-every 2 --max-len 48 --seed 1 "$@" 2> "$WORK/hard_model.log"
}
