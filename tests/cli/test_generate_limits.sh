#!/usr/bin/env bash
# tfm generate at its limits (docs/LM.md): a prompt that with BOS exceeds max_len fails (exit 1,
# both lengths named) before anything reaches stdout; --max-tokens 2000000000 is capped at what the
# model can write (max_len) before any allocation, so it runs under a 4 GB address-space limit.
source "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/tok_train.txt"
head -200 "$FIX" > "$WORK/train.txt"
export OMP_NUM_THREADS=2
M=$WORK/lm.st
"$TFM" train --arch decoder-only --text "$WORK/train.txt" --vocab-size 500 --d-model 16 --n-heads 2 --n-dec-layers 1 \
  --d-ff 32 --max-len 16 --batch-tokens 1000 --warmup 2 --steps 2 --seed 1 --save "$M" \
  > /dev/null 2> "$WORK/train.log" ||
  { bad "train: $(tail -3 "$WORK/train.log")"; finish generate_limits; exit 1; }

# a prompt of many more than 15 tokens
long="In the beginning God created the heaven and the earth and the earth was without form and void"
out=$("$TFM" generate --model "$M" --prompt "$long" --max-tokens 5 2> "$WORK/long.err")
rc=$?
[ "$rc" -eq 1 ] && ok || bad "long prompt: exit $rc, want 1"
[ -z "$out" ] && ok || bad "long prompt: stdout not empty: '$out'"
grep -Eq -- "--prompt is [0-9]+ tokens; with BOS that exceeds the model's max_len 16" "$WORK/long.err" && ok ||
  bad "long prompt: stderr: $(cat "$WORK/long.err")"

# a huge --max-tokens under a 4 GB virtual-memory limit: at most max_len - prompt tokens are written
out=$(under_vm_limit 4000000 "$TFM" generate --model "$M" --prompt "In the" --max-tokens 2000000000 --seed 2 \
  2> "$WORK/huge.err")
rc=$?
[ "$rc" -eq 0 ] && ok || bad "--max-tokens 2000000000: exit $rc: $(tail -2 "$WORK/huge.err")"
n=$(sed -n 's/^tfm generate: \([0-9]*\) tokens.*/\1/p' "$WORK/huge.err")
[ -n "$n" ] && [ "$n" -le 16 ] && ok || bad "--max-tokens 2000000000: wrote '$n' tokens, want <= max_len 16"
case "$out" in "In the"*) ok ;; *) bad "--max-tokens 2000000000: output '$out'" ;; esac
finish generate_limits
