#!/usr/bin/env bash
# tfm serve --drain S (docs/SERVE.md): a short drain cuts a long request. A translation far longer
# than the drain (one /translate of 10,752 sentences at beam 4, up to 60 output tokens each, in
# rounds of 8) is in flight — a batch is computing (GET /metrics: tfm_serve_translate_busy)
# — when the server gets SIGTERM with --drain 1: the server exits 0 within 3 s of the signal, the
# client gets no answer (its connection is closed unanswered: curl's empty reply or receive error,
# no HTTP status), and the log says "a request was cut by the shutdown, unanswered" once. Bounded:
# every wait has a limit, the server is killed on exit.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"

tiny_models || { finish serve_drain; exit 1; }
# the long request: the tiny corpus' English lines 48 times over, 10,752 sentences (34 s of work
# alone on a busy 2-core machine; 8 times over took 2.4 s, too close to the drain)
jq -n --rawfile s "$WORK/c/train.en" '($s | rtrimstr("\n") | split("\n")) as $l |
  {q: [range(48) as $i | $l[]], source: "en", target: "es"}' > "$WORK/long.json"
n_sent=$(jq '.q | length' "$WORK/long.json")
start drain --model "$MT@en:es" --threads 2 --drain 1 --beam 4 --max-len-a 0 --max-len-b 60 --batch-size 8 \
  --max-body 16777216 || { finish serve_drain; exit 1; }
# (no "Expect: 100-continue": its interim 100 would stand as the status of the unanswered request)
curl -s -o "$WORK/long.out" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' -H 'Expect:' \
  --data-binary @"$WORK/long.json" "http://127.0.0.1:$PORT/translate" > "$WORK/long.code" 2> /dev/null &
CURL=$!
PIDS+=("$CURL")
busy=0
for _ in $(seq 200); do # at most 10 s for the first batch to start computing
  busy=$(curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics" | awk '$1 == "tfm_serve_translate_busy" { print $2 }')
  [ "${busy:-0}" -ge 1 ] && break
  sleep 0.05
done
[ "${busy:-0}" -ge 1 ] && ok || bad "the long request ($n_sent sentences) never started computing: $(tail -3 "$WORK/drain.log")"
sleep 0.5 # well inside the request: a few rounds done, most to go
t0=$(date +%s%N)
kill -TERM "$SPID"
exited_ms=
for _ in $(seq 100); do # at most 10 s
  if ! kill -0 "$SPID" 2> /dev/null; then exited_ms=$((($(date +%s%N) - t0) / 1000000)); break; fi
  sleep 0.02
done
echo "SIGTERM with --drain 1 and a request of $n_sent sentences in flight: exited after ${exited_ms:-(not within 10 s)} ms"
if [ -z "$exited_ms" ]; then bad "--drain 1: still running 10 s after SIGTERM: $(tail -3 "$WORK/drain.log")"; else
  wait "$SPID"
  rc=$?
  [ "$rc" = 0 ] && ok || bad "--drain 1: exit $rc after SIGTERM, want 0: $(tail -3 "$WORK/drain.log")"
  [ "$exited_ms" -le 3000 ] && ok || bad "--drain 1: exited $exited_ms ms after SIGTERM, want at most 3000"
fi
wait "$CURL"
curl_rc=$?
code=$(cat "$WORK/long.code" 2> /dev/null)
# 52: empty reply from the server, 56: failure receiving data (reset): no HTTP status either way
[ "$code" = 000 ] && { [ "$curl_rc" = 52 ] || [ "$curl_rc" = 56 ]; } && ok ||
  bad "the cut request: curl exit $curl_rc, HTTP status '$code' (want no answer): $(head -c 200 "$WORK/long.out")"
[ "$(grep -c 'a request was cut by the shutdown, unanswered' "$WORK/drain.log")" = 1 ] && ok ||
  bad "the log does not say once that a request was cut: $(tail -5 "$WORK/drain.log")"
grep -q 'SIGTERM: finishing the requests in flight' "$WORK/drain.log" && ok || bad "the log does not acknowledge SIGTERM"
no_crash "--drain 1: server log" "$(cat "$WORK/drain.log")"
finish serve_drain
