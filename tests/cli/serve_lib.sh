# Shared helpers for the tfm serve tests (sourced after lib.sh; docs/TESTING.md): skips without curl
# or a tfm built with libmicrohttpd; every server started by launch is killed on exit (trap).
command -v curl > /dev/null || skip "curl is not installed (scripts/install-deps installs it)"
"$TFM" --version | grep -q "^HTTP server (tfm serve): libmicrohttpd" ||
  skip "this tfm was built without libmicrohttpd (scripts/install-deps installs libmicrohttpd-dev; then reconfigure)"

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do { kill -9 "$p" && wait "$p"; } 2> /dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# tiny_models: MT (a tiny en->es translation model) and LM (a tiny decoder-only LM), trained here in
# seconds on tiny_corpus $WORK/c; BERT (tests/golden/bert_tiny, embeddings). Returns 1 after a failure.
tiny_models() {
  tiny_corpus "$WORK/c" || return 1
  MT=$WORK/mt.safetensors LM=$WORK/lm.safetensors BERT=$ROOT/tests/golden/bert_tiny
  "$TFM" train --data "$WORK/c" --save "$MT" --steps 20 --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 \
    --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --warmup 10 --eval-every 20 --log-every 20 --max-len 64 \
    --seed 1 > /dev/null 2> "$WORK/train_mt.log" || { bad "train the translation model: $(tail -2 "$WORK/train_mt.log")"; return 1; }
  "$TFM" train --arch decoder-only --text "$WORK/c/train.en" --vocab-size 500 --d-model 32 --n-heads 2 \
    --n-dec-layers 1 --d-ff 64 --batch-tokens 1000 --warmup 10 --lr 1 --steps 20 --seed 3 --max-len 64 \
    --save "$LM" > /dev/null 2> "$WORK/train_lm.log" || { bad "train the LM: $(tail -2 "$WORK/train_lm.log")"; return 1; }
}

# launch NAME ARGS...: starts tfm serve --port 0 ARGS in the background (log $WORK/NAME.log) and
# waits (at most 10 s) for its "listening on" line; sets SPID and PORT. SERVE_PORT, when set, is
# the port instead of 0.
launch() {
  local name=$1
  shift
  "$TFM" serve --port "${SERVE_PORT:-0}" "$@" 2> "$WORK/$name.log" &
  SPID=$!
  PIDS+=("$SPID")
  PORT=
  for _ in $(seq 100); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/$name.log" 2> /dev/null)
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  bad "$name: no 'listening on' line in 10 s: $(cat "$WORK/$name.log")"
  return 1
}

# start NAME ARGS...: launch, then wait (at most 10 s) for GET /health to say 200.
start() {
  local name=$1
  launch "$@" || return 1
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/health")" = 200 ] && return 0
    sleep 0.1
  done
  bad "$name: /health not 200 in 10 s: $(cat "$WORK/$name.log")"
  return 1
}

# load_refs FILE: the reference file of tests/cli/serve_load.py: the first 60 lines of the tiny
# corpus' train.en, their translations by tfm translate (MT), the completion prompt.
load_refs() {
  head -60 "$WORK/c/train.en" > "$WORK/load_src.txt"
  "$TFM" translate --model "$MT" --input "$WORK/load_src.txt" --output "$WORK/load_cli.txt" 2> /dev/null ||
    { bad "tfm translate of the load sentences"; return 1; }
  jq -n --rawfile s "$WORK/load_src.txt" --rawfile t "$WORK/load_cli.txt" \
    '{sentences: ($s | rtrimstr("\n") | split("\n")), translations: ($t | rtrimstr("\n") | split("\n")),
      prompt: "In the beginning"}' > "$1"
}

# stop_server NAME PID: SIGTERM, then (at most 15 s) its exit status must be 0.
stop_server() {
  kill -TERM "$2" 2> /dev/null
  for _ in $(seq 150); do kill -0 "$2" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$2" 2> /dev/null; then bad "$1: still running 15 s after SIGTERM"; return; fi
  wait "$2"
  local rc=$?
  [ "$rc" = 0 ] && ok || bad "$1: exit $rc after SIGTERM, want 0: $(tail -3 "$WORK/$1.log")"
}

# req METHOD PATH [curl args...]: the response body in $WORK/body, the status in CODE.
req() {
  local method=$1 path=$2
  shift 2
  CODE=$(curl -s --max-time 20 -o "$WORK/body" -w '%{http_code}' -X "$method" "$@" "http://127.0.0.1:$PORT$path")
}
# post PATH JSON: POST a JSON body.
post() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
# want LABEL CODE JQ_FILTER: the last response had status CODE and a body jq -e FILTER accepts.
want() {
  if [ "$CODE" = "$2" ] && jq -e "$3" "$WORK/body" > /dev/null 2>&1; then ok; else
    bad "$1: status $CODE (want $2), body $(head -c 300 "$WORK/body") (want $3)"
  fi
}
# want_error LABEL CODE NEEDLE: status CODE and {"error": "...NEEDLE..."}.
want_error() { want "$1" "$2" ".error | type == \"string\" and contains(\"$3\")"; }
# want_oai_error LABEL CODE NEEDLE TYPE PARAM: status CODE and OpenAI's {"error": {"message":
# "...NEEDLE...", "type": TYPE, "param": PARAM (a jq value: "\"max_tokens\"" or null), "code": null}}.
want_oai_error() {
  want "$1" "$2" ".error | type == \"object\" and (.message | contains(\"$3\")) and .type == \"$4\" and .param == $5 and
    has(\"code\") and .code == null"
}

# completion_text FILE: the text of a /v1/completions answer saved in FILE, plain JSON or
# Server-Sent Events (the events' texts joined).
completion_text() {
  if grep -q '^data: ' "$1"; then sed -n 's/^data: \({.*\)$/\1/p' "$1" | jq -j '.choices[0].text'; else jq -r '.choices[0].text' "$1"; fi
}
