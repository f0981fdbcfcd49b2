#!/usr/bin/env bash
# tfm-test: slow (installs PyPI's openai into a venv the first time: needs the network)
# OpenAI's own Python client against tfm serve (docs/SERVE.md): tests/cli/serve_openai.py lists the
# models, asks for a completion (plain and streamed: equal to tfm generate's for the same seed) and
# embeddings (the client's default base64 and "float": tfm embed's floats bit for bit), validates
# each reply against the client's pydantic types, and checks that errors come as the client's
# exceptions. The client is PyPI's `openai` (pinned below) in a venv under the build folder
# (venv-openai/, made on the first run, kept); when pip cannot reach PyPI this test SKIPs, and the
# shapes are still checked by test_serve.sh (jq).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
OPENAI_VERSION=3.60.0
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
VENV=$(cd "$(dirname "$TFM")" && pwd)/venv-openai
if ! "$VENV/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$OPENAI_VERSION')" 2> /dev/null; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" > "$WORK/venv.log" 2>&1 ||
    skip "cannot make a venv with $PY -m venv (Debian: python3-venv; scripts/install-deps installs it): $(tail -1 "$WORK/venv.log")"
  PIP_DEFAULT_TIMEOUT=20 timeout 300 "$VENV/bin/pip" install -q --disable-pip-version-check "openai==$OPENAI_VERSION" \
    > "$WORK/pip.log" 2>&1 || {
    rm -rf "$VENV"
    skip "pip cannot install openai==$OPENAI_VERSION from PyPI (no network?): $(tail -1 "$WORK/pip.log")"
  }
fi

tiny_models || { finish serve_openai; exit 1; }
start openai --model "$MT@en:es" --model "$LM" --model "$BERT" --api-key sk-tfm-test || { finish serve_openai; exit 1; }
prompt="In the beginning"
gen=$("$TFM" generate --model "$LM" --prompt "$prompt" --max-tokens 12 --temperature 0.8 --top-k 20 --top-p 0.9 \
  --seed 7 2> /dev/null) || bad "tfm generate"
"$TFM" embed --model "$BERT" --input "$BERT/sentences.txt" --npy "$WORK/embed.npy" 2> /dev/null || bad "tfm embed"
timeout 120 "$VENV/bin/python" "$ROOT/tests/cli/serve_openai.py" "http://127.0.0.1:$PORT/v1" sk-tfm-test "$prompt" \
  "$gen" "$WORK/embed.npy" "$BERT/sentences.txt" > "$WORK/client.out" 2>&1
rc=$?
n_ok=$(grep -c '^ok: ' "$WORK/client.out")
grep '^FAIL: ' "$WORK/client.out" | while IFS= read -r line; do echo "$line" >&2; done
n_fail=$(grep -c '^FAIL: ' "$WORK/client.out")
PASS=$((PASS + n_ok)) FAILS=$((FAILS + n_fail))
[ "$rc" = 0 ] && [ "$n_ok" -ge 17 ] && ok || bad "the client script: exit $rc, $n_ok checks passed (want 17): $(tail -5 "$WORK/client.out")"
finish serve_openai
