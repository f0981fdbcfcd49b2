#!/usr/bin/env bash
# tfm embed and tfm similarity on the tiny random BERT of tests/golden/bert_tiny (a Hugging Face
# folder, tests/reference/make_bert_fixture.py): one vector per line equal to the reference, the
# .npy output, stdin, cosines and top-k, and the errors: invalid UTF-8 naming file:line, a model
# that is not encoder-only, a HF config of another model_type, a missing tensor, bad usage.
set -u
source "$(dirname "$0")/lib.sh"
M=$ROOT/tests/golden/bert_tiny
S=$M/sentences.txt

# the reference vectors vec_0..vec_6, one per line
grep '^vec_' "$M/ref.txt" | cut -d' ' -f3- > "$WORK/ref.vec"

expect_ok "embed" "$TFM" embed --model "$M" --input "$S"
"$TFM" embed --model "$M" --input "$S" > "$WORK/got.vec" 2>/dev/null
cmp=$(awk -f "$ROOT/tests/cli/embed_compare.awk" "$WORK/ref.vec" "$WORK/got.vec")
check "embed: one vector per line, as the reference ($cmp)" \
  awk -v s="$cmp" 'BEGIN { split(s, f, " "); exit !(f[2] == 7 && f[4] >= 0.9999 && f[6] <= 1e-4) }'
check "embed: 16 floats a line" awk 'NF != 16 { exit 1 }' "$WORK/got.vec"

# the model given as its safetensors file (config.json beside it), text on stdin: the same
"$TFM" embed --model "$M/model.safetensors" < "$S" > "$WORK/stdin.vec" 2>/dev/null
check "embed from stdin, model as a file" cmp -s "$WORK/got.vec" "$WORK/stdin.vec"

# .npy: magic, version 1.0, a header padded to 64 bytes, then 7 x 16 float32
expect_ok "embed --npy" "$TFM" embed --model "$M" --input "$S" --npy "$WORK/v.npy"
check "npy size" test "$(stat -c %s "$WORK/v.npy")" -eq $((128 + 7 * 16 * 4))
check "npy header" grep -aq "{'descr': '<f4', 'fortran_order': False, 'shape': (7, 16), }" "$WORK/v.npy"
check "npy magic" test "$(head -c 6 "$WORK/v.npy" | tail -c 5)" = "NUMPY"

# similarity: a text with itself is 1; against the file, the same line ranks first
sim=$("$TFM" similarity --model "$M" --query "The man is eating food." --text "The man is eating food." 2>&1)
check "similarity of a text with itself: $sim" test "$sim" = "1.000000"
sim2=$("$TFM" similarity --model "$M" --query "The man is eating food." --text "good" 2>&1)
check "similarity of two texts in [-1, 1): $sim2" awk -v x="$sim2" 'BEGIN { exit !(x >= -1 && x < 0.999999) }'
top=$("$TFM" similarity --model "$M" --query "The man is eating food." --input "$S" --top-k 3 2>&1)
check "top-k 3 prints 3 lines: $top" test "$(printf '%s\n' "$top" | wc -l)" -eq 3
check "top-1 is line 1 with cosine 1: $top" test "$(printf '%s\n' "$top" | head -1 | cut -f1,2)" = "$(printf '1.000000\t1')"
all=$("$TFM" similarity --model "$M" --query "good" --input "$S" --top-k 0 2>&1)
check "top-k 0 ranks every line" test "$(printf '%s\n' "$all" | wc -l)" -eq 7
check "ranked best first" awk -F'\t' 'NR > 1 && $1 > prev + 0 { exit 1 } { prev = $1 }' <<< "$all"

# errors
printf 'good\ncaf\303\nthe man\n' > "$WORK/bad.txt"
expect_fail "invalid UTF-8 names file:line" 1 "$WORK/bad.txt:2: invalid UTF-8" \
  "$TFM" embed --model "$M" --input "$WORK/bad.txt"
expect_fail "missing tensor named" 1 "tensor 'encoder.layer.1.output.dense.weight' is missing" \
  "$TFM" embed --model "$M/missing_tensor.safetensors" --input "$S"
mkdir -p "$WORK/t5"
cp "$M/model.safetensors" "$M/vocab.txt" "$WORK/t5/"
sed 's/"model_type": "bert"/"model_type": "t5"/' "$M/config.json" > "$WORK/t5/config.json"
expect_fail "another model_type" 1 "model_type 't5' is not supported" \
  "$TFM" embed --model "$WORK/t5" --input "$S"
"$TFM" init --d-model 8 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 --d-ff 8 --src-vocab 60 --tgt-vocab 60 \
  --save "$WORK/ed.safetensors" >/dev/null 2>&1
cp "$M/vocab.txt" "$WORK/"
expect_fail "an encoder-decoder model does not embed" 1 "does not embed sentences" \
  "$TFM" embed --model "$WORK/ed.safetensors" --input "$S"
expect_fail "no model" 1 "nowhere" "$TFM" embed --model "$WORK/nowhere" --input "$S"
expect_fail "similarity needs --text or --input" 2 "exactly one of --text and --input" \
  "$TFM" similarity --model "$M" --query x
expect_fail "embed without --model" 2 "--model" "$TFM" embed --input "$S"
echo "2 5 3" > "$WORK/x.ids"
expect_fail "score refuses an encoder-only model" 1 "is an encoder-only model (BERT)" \
  "$TFM" score --model "$M" --src-ids "$WORK/x.ids" --tgt-ids "$WORK/x.ids"

finish test_embed_cli
