#!/usr/bin/env bash
# Issue 33, kind 12: a number flag accepts what strtof accepts, whole, finite and in the range of a
# 32-bit float, subnormals included: `--temperature 1e-39` (before: "expects a finite number")
# samples (nearly) greedily and exits 0; hexadecimal floats too. Refused with exit 2, naming the
# flag and the value: a value that rounds to 0 (1e-50), overflows (1e39), inf, nan, trailing text,
# an empty string. One parser serves every float flag (cli/args.c): the table covers flags of
# generate, translate, train and tokenize.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
source "$(dirname "$0")/hard2_lib.sh"
hard2_models || { finish hard_float_flags; exit 1; }

G=("$TFM" generate --model "$LM" --prompt "And God" --max-tokens 8)
greedy=$("${G[@]}" --temperature 0 2> /dev/null)
for t in 1e-39 1.4e-45 0x1p-149 1e-38; do
  got=$("${G[@]}" --temperature "$t" 2> "$WORK/err") && ok || bad "--temperature $t refused: $(cat "$WORK/err")"
  [ "$got" = "$greedy" ] && ok || bad "--temperature $t: '$got', not the greedy '$greedy'"
done
expect_ok "--top-p 1e-39 (the most likely token only)" "${G[@]}" --top-p 1e-39
expect_ok "translate --lenpen 1e-39" "$TFM" translate --model "$ED" --input "$S" --beam 2 --lenpen 1e-39
expect_ok "tokenize --character-coverage 0x1.fffffep-1" "$TFM" tokenize --train --input "$WORK/corpus/train.en" \
  --vocab-size 400 --character-coverage 0x1.fffffep-1 --save-model "$WORK/t.model"

# refused: each bad value for a flag of each command
for v in 1e-50 -1e-50 1e39 -1e39 inf -inf nan 1e-39x "" 0x; do
  expect_fail "generate --temperature '$v'" 2 "option --temperature expects a finite number" "${G[@]}" --temperature "$v"
done
for v in 1e-46 3.5e38x 1e40; do
  expect_fail "translate --lenpen '$v'" 2 "option --lenpen expects a finite number" "$TFM" translate --model "$ED" --lenpen "$v"
  expect_fail "train --lr '$v'" 2 "option --lr expects a finite number" "$TFM" train --data "$WORK/corpus" --save "$WORK/x.st" --lr "$v"
  expect_fail "tokenize --character-coverage '$v'" 2 "option --character-coverage expects a finite number" \
    "$TFM" tokenize --train --input "$S" --save-model "$WORK/t2.model" --character-coverage "$v"
done

finish hard_float_flags
