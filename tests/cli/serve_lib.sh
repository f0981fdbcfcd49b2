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
