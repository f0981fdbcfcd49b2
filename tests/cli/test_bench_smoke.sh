# Smoke test of the benchmark harness (make bench, docs/BENCH.md) on a tiny model: bench/bench.sh
# --quick --rounds 2 runs every tfm case twice (merged as alternated rounds) (FMA peak, the tiny training step, greedy and beam 4 at batch 1 and
# 32) with the anchors made unavailable, which must each say SKIP; the table, the peak's run-time
# ISA choice, the step split, the analytic FLOP counts and the decoding rows are checked; the
# CTranslate2 converter refuses a model it cannot map. No timing is judged.
source "$(dirname "$0")/lib.sh"
BENCH=${BENCH_TFM:-$(dirname "$TFM")/bench_tfm}
[ -x "$BENCH" ] || skip "no bench_tfm beside $TFM"

# the analytic counts: the reference configuration is the ~47 GFLOP per step of issue 14
# (3 × forward: 4.93 encoder + 6.64 decoder + 4.19 generator), tiny worked out in docs/BENCH.md
ref=$("$BENCH" train --config ref --flops-only)
check "ref count ($ref)" grep -q 'gflop=47.3117 ' <<< "$ref"
tiny=$("$BENCH" train --config tiny --flops-only)
check "tiny count ($tiny)" grep -q 'gflop=0.0046 ' <<< "$tiny"

# a tiny model with its tokenizer, 3 steps on the committed fixture (its outputs run to the limit)
SL=$WORK/corpus
tiny_corpus "$SL"
M=$WORK/m.safetensors
"$TFM" train --data "$SL" --save "$M" --steps 3 --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 \
  --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --max-len 64 --seed 1 --eval-every 3 2> "$WORK/train.log" ||
  { bad "tiny model: $(tail -2 "$WORK/train.log")"; finish bench_smoke; exit 1; }

OUT=$WORK/bench
# a stand-in for PyPI's torch: `-c CODE` succeeds, bench_torch.py prints a fixed RESULT line (so the
# anchors' order in each round can be seen; its times are not checked)
cat > "$WORK/stub_torch" << 'EOF'
#!/bin/sh
if [ "$1" = -c ]; then exit 0; fi
echo "RESULT train impl=torch-stub config=tiny step_med=0.5 step_min=0.4 fwd_med=0.1 fwd_min=0.1 bwd_med=0.2 bwd_min=0.2 upd_med=0.1 upd_min=0.1 reps=1 threads=1 rss_mib=1"
EOF
chmod +x "$WORK/stub_torch"
if BUILD=$(dirname "$BENCH") PYTHON=/nonexistent CT2_PYTHON=/nonexistent TORCH_PYPI_PYTHON="$WORK/stub_torch" \
   sh "$ROOT/bench/bench.sh" --rounds 2 --quick --model "$M" --src "$SL/valid.en" --out "$OUT" > "$WORK/table.txt" 2>&1; then
  ok
else
  bad "bench.sh --quick: $(tail -5 "$WORK/table.txt")"
fi
T=$(cat "$WORK/table.txt")
R=$OUT/results.txt

# the peak: the instruction set named is the widest this CPU's flags have (found at run time)
flags=$(grep -m1 '^flags' /proc/cpuinfo)
want=sse2
case " $flags " in *" avx2 "*) case " $flags " in *" fma "*) want=avx2+fma ;; esac ;; esac
case " $flags " in *" avx512f "*) want=avx512f ;; esac
check "peak ISA $want: $(grep 'FMA peak' <<< "$T")" grep -q "FMA peak (fp32, $want, found at run time): [0-9.]* GFLOP/s" <<< "$T"
check "peak > 0" awk '/^RESULT peak/ { for (i = 1; i <= NF; i++) if ($i ~ /^gflops_1=/) { split($i, a, "="); ok = a[2] > 0 } } END { exit !ok }' "$R"

# the training step: one row, the parts positive and within the step
check "train row" grep -Eq '^tiny +tfm +[0-9]+ +[0-9.]+ \(' <<< "$T"
check "step split" awk '/^RESULT train impl=tfm/ { for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] } }
  END { s = v["fwd_med"] + v["bwd_med"] + v["upd_med"]; exit !(v["fwd_med"] > 0 && v["bwd_med"] > 0 && v["upd_med"] > 0 && s <= v["step_med"] + 1e-6 && v["rss_mib"] > 0) }' "$R"

# decoding: four tfm rows; greedy gives the same tokens at batch 1 and 32
n=$(grep -c '^RESULT decode impl=tfm' "$R")
check "4 decode rows, got $n" test "$n" = 4
g1=$(sed -n 's/^RESULT decode impl=tfm beam=1 batch=1 .*out_tokens=\([0-9]*\).*/\1/p' "$R")
g32=$(sed -n 's/^RESULT decode impl=tfm beam=1 batch=32 .*out_tokens=\([0-9]*\).*/\1/p' "$R")
check "greedy tokens batch 1 ($g1) == batch 32 ($g32) > 0" test -n "$g1" -a "$g1" = "$g32" -a "${g1:-0}" -gt 0
check "reference ids for the CT2 check: 8 lines" test "$(wc -l < "$OUT/tfm_greedy.ids")" = 8

# two alternated rounds, merged: one row per engine, its steps and decodings summed over the rounds
check "train merged: 2 rounds, 2 steps" grep -Eq '^RESULT train impl=tfm .*reps=2 .*rounds=2 label=tfm$' "$R"
check "decode merged: 2 rounds" test "$(grep -c '^RESULT decode impl=tfm .*reps=2 .*rounds=2 label=tfm$' "$R")" = 4
check "a log per round" test -s "$OUT/train_tfm_tiny_r2.log" -a -s "$OUT/decode_tfm_4_32_r2.log"
order=$(sed -n 's/.* label=\([a-z-]*\)$/\1/p' "$OUT/raw_train_tiny.txt" | tr '\n' ' ')
check "engines alternated: tfm, anchor, then anchor, tfm (got: $order)" test "$order" = "tfm torch-pypi torch-pypi tfm "
check "the anchor's row with its ratio" grep -Eq '^tiny +torch-stub +1 .* [0-9]+\.[0-9]+$' <<< "$T"
check "header names the rounds" grep -q "median of the rounds' medians (minimum); 2 timed steps in 2 rounds" <<< "$T"
expect_fail "--rounds 0" 2 "positive integer" sh "$ROOT/bench/bench.sh" --rounds 0 --quick
# the merge itself: median of the medians, minimum of the minimums, largest RSS, reps summed, the
# engines in the order given (tfm first, though ct2 ran first), a failure said once
printf '%s\n' 'RESULT decode impl=ct2 med_s=5 min_s=4 reps=1 rss_mib=30 label=ct2' \
  'RESULT decode impl=tfm med_s=3 min_s=2.5 reps=1 rss_mib=10 label=tfm' \
  'FAILED ct2-int8: no' 'RESULT decode impl=ct2 med_s=4 min_s=3.5 reps=1 rss_mib=20 label=ct2' 'FAILED ct2-int8: no' \
  'RESULT decode impl=tfm med_s=1 min_s=0.5 reps=1 rss_mib=12 label=tfm' \
  'RESULT decode impl=tfm med_s=2 min_s=1.5 reps=1 rss_mib=11 label=tfm' > "$WORK/raw.txt"
merged=$(awk -v order_given="tfm ct2 ct2-int8" -f "$ROOT/bench/bench_merge.awk" "$WORK/raw.txt")
want='RESULT decode impl=tfm med_s=2 min_s=0.5 reps=3 rss_mib=12 rounds=3 label=tfm
RESULT decode impl=ct2 med_s=4.500000 min_s=3.5 reps=2 rss_mib=30 rounds=2 label=ct2
FAILED ct2-int8: no'
check "bench_merge.awk: $merged" test "$merged" = "$want"

# the anchors were unavailable: each says SKIP, none failed
for what in "impl=torch-debian" "decode impl=ct2"; do
  check "SKIP $what" grep -q "^SKIP .*$what" <<< "$T"
done
check "no FAILED case" bash -c "! grep -q '^FAILED' '$R'"

# the converter refuses a post-LN model (its final norms have no place in CTranslate2); numpy only
if /usr/bin/python3 -c 'import numpy' 2> /dev/null; then
  "$TFM" init --d-model 16 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 --d-ff 16 --src-vocab 20 --tgt-vocab 20 \
    --norm-first 0 --save "$WORK/post.safetensors" > /dev/null 2>&1
  expect_fail "ct2_convert post-LN" 1 "post-LN (norm_first 0)" /usr/bin/python3 "$ROOT/bench/ct2_convert.py" \
    "$WORK/post.safetensors" "$WORK/ct2"
  check "no CT2 folder after a refusal" test ! -e "$WORK/ct2"
fi
finish bench_smoke
