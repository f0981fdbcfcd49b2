#!/usr/bin/env bash
# tfm-test: slow (64 clients for 60 s)
# tfm serve under load (docs/SERVE.md), loopback only, bounded: tests/cli/serve_load.py runs 64
# clients for TFM_LOAD_SECONDS (default 60) on a server with three tiny models, a mix of every
# route (translations checked against tfm translate, completions and embeddings against the
# server's own first answers, streamed and not) and of bad requests on their own connections
# (invalid JSON or UTF-8, wrong types, unknown model, path or method, a body over --max-body,
# garbage bytes, a request cut short). Checked: every good request answered 200 with the right
# result, every bad one its status (or, for a body over the cap and garbage, a closed connection),
# the server alive and well afterwards, its resident memory flat (growth under 5 % from the end of
# the warm-up, the first half, to the end), and SIGTERM then exits 0. The warm-up is long because
# glibc's per-thread malloc arenas (a thread per connection) fill towards their high-water mark
# for a while: 2.4 % more from 15 s to 30 s, then 1.5 % per 15 s (docs/TESTING.md); LeakSanitizer
# finds no leak in the same load.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"
[ -r /proc/self/status ] || skip "no /proc: the server's resident memory cannot be read"
SECONDS_LOAD=${TFM_LOAD_SECONDS:-60}

tiny_models || { finish serve_load; exit 1; }
load_refs "$WORK/refs.json" || { finish serve_load; exit 1; }
start load --model "$MT@en:es" --model "$LM" --model "$BERT" --threads 2 --max-queue 64 --max-body 65536 \
  --timeout 10 || { finish serve_load; exit 1; }
timeout $((SECONDS_LOAD + 120)) python3 "$ROOT/tests/cli/serve_load.py" load "$PORT" "$SPID" 64 "$SECONDS_LOAD" \
  "$WORK/refs.json" > "$WORK/load.json" 2> "$WORK/load.err" || bad "the load client: exit $? $(tail -3 "$WORK/load.err")"
[ -s "$WORK/load.json" ] || echo '{"counts": {}, "failures": [], "rss_kb": []}' > "$WORK/load.json"
echo "load: $(jq -c '{seconds, counts}' "$WORK/load.json")"

# every request got what it should: no outcome but "ok", no client stuck
bad_outcomes=$(jq -r '.counts | to_entries[] | select(.key | endswith(" ok") | not) | "\(.key): \(.value)"' "$WORK/load.json")
[ -z "$bad_outcomes" ] && ok || bad "outcomes other than ok: $bad_outcomes; first failures: $(jq -c '.failures[:8]' "$WORK/load.json")"
[ "$(jq .stuck_clients "$WORK/load.json")" = 0 ] && ok || bad "$(jq .stuck_clients "$WORK/load.json") clients still stuck"
# each kind of request was sent, good and bad
kinds=$(jq '[.counts | keys[] | split(" ")[0]] | unique | length' "$WORK/load.json")
[ "$kinds" -ge 20 ] && ok || bad "only $kinds kinds of request were sent (want all 21)"
n_good=$(jq '[.counts | to_entries[] | select(.key | test("^(translate|complete|embed|health|languages|models|metrics|page)")) | .value] | add // 0' "$WORK/load.json")
[ "$n_good" -ge $((SECONDS_LOAD * 10)) ] && ok || bad "only $n_good good requests in $SECONDS_LOAD s"

# resident memory: the largest sample of the last 5 s within 5 % of the largest of the 5 s before
# the end of the warm-up (the first half, at least 10 s)
rss=$(jq -r --argjson T "$SECONDS_LOAD" '
  .rss_kb | map(select(.[1] != null)) as $s | ([($T / 2), 10] | max) as $w |
  ([$s[] | select(.[0] > $w - 5 and .[0] <= $w) | .[1]] | max) as $base |
  ([$s[] | select(.[0] > $T - 5) | .[1]] | max) as $last |
  if $base and $last then "\($base) \($last)" else "none" end' "$WORK/load.json")
echo "resident memory after the warm-up and at the end (kB): $rss"
echo "resident memory every 5 s (kB): $(jq -c '[.rss_kb[] | select((.[0] * 2 | floor) % 10 == 0) | .[1]]' "$WORK/load.json")"
if sanitizer_build; then echo "resident memory not checked: a sanitizer build (its quarantine holds freed memory)"
elif [ "$rss" = none ]; then bad "no resident memory samples"; else
  read -r base last <<< "$rss"
  [ $((last * 100)) -lt $((base * 105)) ] && ok || bad "resident memory grew from $base kB to $last kB (5 % allowed)"
fi

# the server is well, and stops cleanly
[ "$(curl -s --max-time 10 "http://127.0.0.1:$PORT/health")" = '{"status":"ok"}' ] && ok || bad "health after the load"
no_crash "server log" "$(cat "$WORK/load.log")"
stop_server load "$SPID"
finish serve_load
