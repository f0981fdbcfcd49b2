#!/usr/bin/env bash
# Both modes of tfm train stop cleanly on a signal (the library's training loop and its stop flag):
# SIGTERM exits 143 and SIGINT 130, after the current step, with a message and a saved model that
# loads; the id-file mode's --batch-size counts lines and B >= the number of lines uses them all.
source "$(dirname "$0")/lib.sh"

awk -v dir="$WORK" 'function r() { s = (s * 1103515245 + 12345) % 2147483648; return int(s / 65536) }
  BEGIN { s = 4242
    for (i = 0; i < 12; i++) {
      n = 3 + r() % 5; line = ""
      for (j = 0; j < n; j++) line = line (j ? " " : "") (3 + r() % 17)
      print line > (dir "/src.ids")
      m = 2 + r() % 5; line = "1"
      for (j = 0; j < m; j++) line = line " " (3 + r() % 17)
      print line " 2" > (dir "/tgt.ids")
    } }'
"$TFM" init --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --src-vocab 20 --tgt-vocab 20 \
  --max-len 16 --seed 1 --save "$WORK/init.st" 2>/dev/null || bad "tfm init"
DATA=(--src-ids "$WORK/src.ids" --tgt-ids "$WORK/tgt.ids")

# --batch-size 12 and 50 over 12 lines: every step uses all 12 lines, so both runs are the same
for b in 12 50; do
  "$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps 3 --batch-size $b --save "$WORK/b$b.st" 2>/dev/null \
    | grep '^step ' > "$WORK/b$b.log"
done
if [ "$(wc -l < "$WORK/b12.log")" = 3 ] && cmp -s "$WORK/b12.log" "$WORK/b50.log" && cmp -s "$WORK/b12.st" "$WORK/b50.st"
then ok; else bad "--batch-size 12 and 50 over 12 lines differ: $(paste "$WORK/b12.log" "$WORK/b50.log" | head -3)"; fi
want_tokens=$(awk '{ n += NF - 1 } END { print n }' "$WORK/tgt.ids") # targets: every id after BOS
got_tokens=$(awk 'NR == 1 { print $NF }' "$WORK/b12.log")
[ "$got_tokens" = "$want_tokens" ] && ok || bad "a step over all lines counted $got_tokens targets, want $want_tokens"

# stop_run SIGNAL WANT_RC LOG CMD...: starts CMD, waits for a second step line in LOG, sends SIGNAL.
stop_run() {
  local sig=$1 want=$2 log=$3
  shift 3
  "$@" > "$log.out" 2> "$log" &
  local pid=$! rc
  for _ in $(seq 300); do
    [ "$(cat "$log.out" "$log" 2>/dev/null | grep -c '^step [0-9]* ')" -ge 2 ] && break
    sleep 0.1
  done
  kill "-$sig" $pid
  wait $pid
  rc=$?
  [ $rc -eq "$want" ] && ok || bad "$sig: exit $rc, want $want ($(tail -2 "$log"))"
}

stop_run TERM 143 "$WORK/ids.err" "$TFM" train --init "$WORK/init.st" "${DATA[@]}" --steps 100000000 \
  --batch-size 4 --save "$WORK/ids.st"
grep -q "stopped by a signal; wrote $WORK/ids.st" "$WORK/ids.err" && ok || bad "id mode: no stop message: $(cat "$WORK/ids.err")"
expect_ok "the stopped id-mode model loads" "$TFM" score --model "$WORK/ids.st" "${DATA[@]}"

mkdir -p "$WORK/c"
awk -v c="$WORK/c" 'BEGIN { srand(5); for (i = 0; i < 120; i++) { n = 2 + int(rand() * 6); s = ""; t = "";
    for (j = 0; j < n; j++) { w = int(rand() * 30); s = s (j ? " " : "") "w" w; t = t (j ? " " : "") "p" w }
    print s > (c "/train.en"); print t > (c "/train.es") } }'
stop_run INT 130 "$WORK/text.err" "$TFM" train --data "$WORK/c" --d-model 16 --n-heads 2 --d-ff 32 \
  --n-enc-layers 1 --n-dec-layers 1 --vocab-size 280 --batch-tokens 100 --log-every 1 --steps 100000000 \
  --save "$WORK/text.st"
grep -q "stopped by signal 2 at step" "$WORK/text.err" && ok || bad "text mode: no stop message: $(tail -3 "$WORK/text.err")"
expect_ok "the stopped text-mode checkpoint resumes" "$TFM" train --data "$WORK/c" --d-model 16 --n-heads 2 \
  --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 280 --batch-tokens 100 --steps 1 \
  --resume "$WORK/text.st" --save "$WORK/text2.st"

finish train_signals
