#!/usr/bin/env bash
# tfm-test: slow (about 30 s: a SIGTERM under load, a kill -9 and a restart)
# tfm serve's faults (docs/SERVE.md), loopback only, bounded. (1) SIGTERM mid-load: 32 clients
# (tests/cli/serve_load.py sigterm: half keep their connection alive, one request in eight is 40
# sentences long) translate for 4 s, then the server gets SIGTERM: every request it accepted is
# answered with the right translation (none dropped: the server logs none cut), later connections are
# refused (or, queued by the kernel but never accepted, reset), and it exits 0.
# (2) kill -9 mid-load and a restart on the same port: ready (GET /health 200) within 2 s of the
# start, and translating as before. The model restarted is the demo model when there is one
# (TFM_DEMO_MODEL, or out/demo/model.best.safetensors from `make demo`), else the tiny one trained
# here; the test says which.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"

tiny_models || { finish serve_faults; exit 1; }
load_refs "$WORK/refs.json" || { finish serve_faults; exit 1; }

# --- (1) SIGTERM mid-load
start term --model "$MT@en:es" --model "$LM" --model "$BERT" --threads 2 || { finish serve_faults; exit 1; }
TERM_PID=$SPID
timeout 120 python3 "$ROOT/tests/cli/serve_load.py" sigterm "$PORT" "$TERM_PID" 32 4 "$WORK/refs.json" \
  > "$WORK/term.json" 2> "$WORK/term.err" || bad "the load client: exit $? $(tail -3 "$WORK/term.err")"
[ -s "$WORK/term.json" ] || echo '{"counts": {}, "failures": []}' > "$WORK/term.json"
echo "SIGTERM mid-load: $(jq -c '{seconds, counts}' "$WORK/term.json")"
bad_outcomes=$(jq -r '.counts | to_entries[] | select(.key | test(" (answered|refused after SIGTERM|reset unaccepted after SIGTERM)$") | not) |
  "\(.key): \(.value)"' "$WORK/term.json")
[ -z "$bad_outcomes" ] && ok ||
  bad "SIGTERM: requests not answered: $bad_outcomes; first failures: $(jq -c '.failures[:6]' "$WORK/term.json")"
[ "$(jq '.counts["translate-long answered"] // 0' "$WORK/term.json")" -gt 0 ] && ok || bad "SIGTERM: no long request answered"
[ "$(jq '[.counts | to_entries[] | select(.key | test("(refused|reset unaccepted) after SIGTERM$")) | .value] | add // 0' "$WORK/term.json")" -gt 0 ] &&
  ok || bad "SIGTERM: no connection refused after it (the clients did not outlive the server?)"
[ "$(jq .stuck_clients "$WORK/term.json")" = 0 ] && ok || bad "SIGTERM: $(jq .stuck_clients "$WORK/term.json") clients stuck"
for _ in $(seq 150); do kill -0 "$TERM_PID" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$TERM_PID" 2> /dev/null; then bad "SIGTERM: still running 15 s later"; else
  wait "$TERM_PID"
  rc=$?
  [ "$rc" = 0 ] && ok || bad "SIGTERM: exit $rc, want 0 ($(tail -3 "$WORK/term.log"))"
fi
no_crash "SIGTERM: server log" "$(cat "$WORK/term.log")"
grep -q 'cut by the shutdown' "$WORK/term.log" && bad "SIGTERM: the server cut requests: $(grep -c 'cut by' "$WORK/term.log")" || ok

# --- (2) kill -9 mid-load, then a restart on the same port
DEMO=${TFM_DEMO_MODEL:-$ROOT/out/demo/model.best.safetensors}
if [ -s "$DEMO" ]; then RMODEL=$DEMO; which="the demo model $DEMO"; else RMODEL=$MT; which="a tiny model trained here (no demo model: make demo)"; fi
echo "kill -9 and restart: $which"
printf '%s\n' "In the beginning God created the heaven and the earth." > "$WORK/one.txt"
"$TFM" translate --model "$RMODEL" --input "$WORK/one.txt" --output "$WORK/one_cli.txt" 2> /dev/null || bad "tfm translate with $RMODEL"
start victim --model "$RMODEL@en:es" --threads 2 || { finish serve_faults; exit 1; }
VPORT=$PORT
# a load without checks (its clients see the kill), stopped after the restart
python3 - "$VPORT" << 'EOF' > /dev/null 2>&1 &
import http.client, json, sys, threading, time
def client():
    end = time.monotonic() + 6
    while time.monotonic() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
            c.request("POST", "/translate", body=json.dumps({"q": "In the beginning.", "source": "en", "target": "es"}),
                      headers={"Content-Type": "application/json"})
            c.getresponse().read()
            c.close()
        except Exception:
            time.sleep(0.01)
ts = [threading.Thread(target=client) for _ in range(16)]
[t.start() for t in ts]
[t.join() for t in ts]
EOF
LOADER=$!
PIDS+=("$LOADER")
sleep 1.5
kill -9 "$SPID"
wait "$SPID" 2> /dev/null
t0=$(date +%s%N)
SERVE_PORT=$VPORT launch restarted --model "$RMODEL@en:es" --threads 2 || { finish serve_faults; exit 1; }
ready_ms=
for _ in $(seq 500); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$VPORT/health")" = 200 ]; then
    ready_ms=$((($(date +%s%N) - t0) / 1000000))
    break
  fi
  sleep 0.01
done
echo "kill -9, restart on port $VPORT: ready in ${ready_ms:-(never)} ms"
[ -n "$ready_ms" ] && [ "$ready_ms" -le 2000 ] && ok || bad "restart: not ready within 2 s (${ready_ms:-never} ms): $(tail -3 "$WORK/restarted.log")"
want=$(cat "$WORK/one_cli.txt")
got=$(curl -s --max-time 30 -H 'Content-Type: application/json' \
  --data-binary "$(jq -n --rawfile q "$WORK/one.txt" '{q: ($q | rtrimstr("\n")), source: "en", target: "es"}')" \
  "http://127.0.0.1:$VPORT/translate" | jq -r .translatedText)
[ "$got" = "$want" ] && ok || bad "after the restart: '$got', tfm translate '$want'"
wait "$LOADER"
stop_server restarted "$SPID"
finish serve_faults
