# Shared by the tests/cli/test_hard_*.sh tests (issue 12's five kinds of fault): a tiny text model
# with its tokenizer, trained for a few steps on tests/fixtures/tok_train.txt (no corpus needed).
# Source after lib.sh. Its output is not meant to be good, only real: a model whose decoding runs.

# hard_corpus DIR: DIR/train.{en,es} and DIR/valid.{en,es} from the fixture's English and Spanish halves.
hard_corpus() {
  local dir=$1 fix=$ROOT/tests/fixtures/tok_train.txt split n
  mkdir -p "$dir"
  split=$(grep -n '^Y ACONTECI' "$fix" | head -1 | cut -d: -f1)
  head -n $((split - 1)) "$fix" > "$dir/all.en"
  tail -n +"$split" "$fix" > "$dir/all.es"
  n=$(wc -l < "$dir/all.es")
  head -n $((n - 20)) "$dir/all.en" > "$dir/train.en"; head -n $((n - 20)) "$dir/all.es" > "$dir/train.es"
  sed -n "$((n - 19)),${n}p" "$dir/all.en" > "$dir/valid.en"; sed -n "$((n - 19)),${n}p" "$dir/all.es" > "$dir/valid.es"
}

# hard_model OUT [extra train flags]: trains OUT (and OUT's .best) on the corpus in $WORK/corpus for
# 4 steps; returns non-zero (log in $WORK/hard_model.log) if training fails.
hard_model() {
  local out=$1
  shift
  [ -f "$WORK/corpus/train.en" ] || hard_corpus "$WORK/corpus"
  "$TFM" train --data "$WORK/corpus" --save "$out" --steps 4 --d-model 16 --n-heads 2 --d-ff 32 \
    --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --batch-tokens 600 --warmup 2 --eval-every 2 \
    --log-every 2 --max-len 48 --seed 1 "$@" 2> "$WORK/hard_model.log"
}
