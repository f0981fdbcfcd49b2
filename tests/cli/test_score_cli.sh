#!/usr/bin/env bash
# tfm init / tfm score from the command line: parity with PyTorch's scores, --dump-logits, and
# every bad input of the Engine I issue giving a clear message and a non-zero exit.
source "$(dirname "$0")/lib.sh"
G=tests/golden/post_ln_relu

# scores of a PyTorch-made checkpoint equal PyTorch's (1e-4 nats)
for c in post_ln_relu pre_ln_gelu post_ln_tied; do
  d=tests/golden/$c
  if out=$("$TFM" score --model $d/model.safetensors --src-ids $d/src.ids --tgt-ids $d/tgt.ids --batch-size 2 \
           --dump-logits "$WORK/$c.f32"); then
    if paste <(echo "$out") $d/scores.txt | awk '{ d = $1 - $3; if (d < 0) d = -d; if (d > 1e-4 || $2 != $4) exit 1 }'
    then ok; else bad "$c: scores differ from PyTorch: $(paste <(echo "$out") $d/scores.txt)"; fi
    # logits dump: [B, T-1, V] floats, same size as PyTorch's
    if [ "$(stat -c %s "$WORK/$c.f32")" = "$(stat -c %s $d/logits.f32)" ]; then ok; else bad "$c: dump size"; fi
  else
    bad "$c: tfm score failed"
  fi
done

# init writes a loadable model, and the same seed gives the same file
expect_ok "init" "$TFM" init --d-model 32 --n-heads 4 --d-ff 64 --src-vocab 40 --tgt-vocab 40 --n-enc-layers 1 \
  --n-dec-layers 1 --seed 3 --save "$WORK/a.st"
"$TFM" init --d-model 32 --n-heads 4 --d-ff 64 --src-vocab 40 --tgt-vocab 40 --n-enc-layers 1 --n-dec-layers 1 \
  --seed 3 --save "$WORK/b.st" 2>/dev/null
if cmp -s "$WORK/a.st" "$WORK/b.st"; then ok; else bad "init: same seed, different files"; fi
printf '5 6 7\n' > "$WORK/s1"; printf '1 8 2\n' > "$WORK/t1"
expect_ok "score a fresh model" "$TFM" score --model "$WORK/a.st" --src-ids "$WORK/s1" --tgt-ids "$WORK/t1"

# usage errors: exit 2
expect_fail "unknown command" 2 "unknown command 'frobnicate'" "$TFM" frobnicate
expect_fail "unknown flag" 2 "unknown option '--bogus'" "$TFM" score --bogus
expect_fail "missing required flag" 2 "missing required option --model" "$TFM" score --src-ids x --tgt-ids y
expect_fail "non-number flag" 2 "expects an integer" "$TFM" init --d-model abc --save "$WORK/x.st"
expect_fail "n_heads not dividing" 2 "must be positive and divide d_model" "$TFM" init --d-model 30 --n-heads 4 \
  --save "$WORK/x.st"
expect_fail "bad activation" 2 "relu, gelu or silu" "$TFM" init --activation tanh --save "$WORK/x.st"
expect_ok "--help" "$TFM" --help
expect_ok "score --help" "$TFM" score --help
expect_ok "init --help" "$TFM" init --help

# runtime errors: exit 1, naming the file and line
expect_fail "missing model" 1 "cannot open checkpoint $WORK/none.st" "$TFM" score --model "$WORK/none.st" \
  --src-ids $G/src.ids --tgt-ids $G/tgt.ids
expect_fail "missing id file" 1 "cannot open id file $WORK/none.ids" "$TFM" score --model $G/model.safetensors \
  --src-ids "$WORK/none.ids" --tgt-ids $G/tgt.ids
printf 'not a model at all\n' > "$WORK/junk.st"
expect_fail "foreign checkpoint" 1 "$WORK/junk.st" "$TFM" score --model "$WORK/junk.st" --src-ids $G/src.ids \
  --tgt-ids $G/tgt.ids

cp $G/src.ids "$WORK/oov.ids"; echo "3 4 999" >> "$WORK/oov.ids"
cp $G/tgt.ids "$WORK/t6.ids"; echo "1 5 2" >> "$WORK/t6.ids"
expect_fail "id outside the vocabulary" 1 "$WORK/oov.ids:6: token id 999 is outside the vocabulary [0, 23)" \
  "$TFM" score --model $G/model.safetensors --src-ids "$WORK/oov.ids" --tgt-ids "$WORK/t6.ids"
printf '3 4 5\n3 x 5\n' > "$WORK/nan.ids"
expect_fail "non-number id" 1 "$WORK/nan.ids:2:3: 'x' is not a token id" "$TFM" score --model $G/model.safetensors \
  --src-ids "$WORK/nan.ids" --tgt-ids $G/tgt.ids
printf '3 -4 5\n' > "$WORK/neg.ids"
expect_fail "negative id" 1 "$WORK/neg.ids:1:3: negative token id '-4'" "$TFM" score --model $G/model.safetensors \
  --src-ids "$WORK/neg.ids" --tgt-ids $G/tgt.ids
printf '3 99999999999 5\n' > "$WORK/big.ids"
expect_fail "id over 2^31" 1 "$WORK/big.ids:1:3: token id '99999999999' is too large" "$TFM" score \
  --model $G/model.safetensors --src-ids "$WORK/big.ids" --tgt-ids $G/tgt.ids
: > "$WORK/empty.ids"
expect_fail "empty id file" 1 "$WORK/empty.ids: the id file is empty" "$TFM" score --model $G/model.safetensors \
  --src-ids "$WORK/empty.ids" --tgt-ids $G/tgt.ids
{ echo "3 4"; head -c 70000 /dev/zero | tr '\0' '7'; echo; } > "$WORK/long.ids"
expect_fail "line over the limit" 1 "$WORK/long.ids:2: line longer than the limit of 65536 bytes" "$TFM" score \
  --model $G/model.safetensors --src-ids "$WORK/long.ids" --tgt-ids $G/tgt.ids
printf '3 4\n5 6\n' > "$WORK/two.ids"
expect_fail "line counts differ" 1 "$WORK/two.ids has 2 lines but $G/tgt.ids has 5" "$TFM" score \
  --model $G/model.safetensors --src-ids "$WORK/two.ids" --tgt-ids $G/tgt.ids
printf '1\n1 2\n' > "$WORK/short_t.ids"
expect_fail "target without BOS+EOS" 1 "$WORK/short_t.ids:1: a target line needs at least BOS and EOS" "$TFM" score \
  --model $G/model.safetensors --src-ids "$WORK/two.ids" --tgt-ids "$WORK/short_t.ids"
echo $(seq 3 20) > "$WORK/toolong.ids"   # 18 ids
printf '1 5 2\n' > "$WORK/t1.ids"
"$TFM" init --d-model 16 --n-heads 4 --d-ff 16 --src-vocab 23 --tgt-vocab 19 --max-len 8 --save "$WORK/short.st" 2>/dev/null
expect_fail "sequence over max_len" 1 "longer than the model's max_len 8" "$TFM" score --model "$WORK/short.st" \
  --src-ids "$WORK/toolong.ids" --tgt-ids "$WORK/t1.ids"
printf '3 4\0 5\n' > "$WORK/nul.ids"
expect_fail "binary id file" 1 "NUL byte" "$TFM" score --model $G/model.safetensors --src-ids "$WORK/nul.ids" \
  --tgt-ids $G/tgt.ids
expect_fail "save into a missing directory" 1 "/nonexistent-dir/m.st" "$TFM" init --save /nonexistent-dir/m.st

finish score_cli
