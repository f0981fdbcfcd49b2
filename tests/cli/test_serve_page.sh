#!/usr/bin/env bash
# tfm-test: slow (a headless browser: about 10 s)
# tfm serve's web page (docs/SERVE.md, "The web page") in a real browser: headless Chromium driven by
# Selenium (Debian's chromium, chromium-driver, python3-selenium; tests/cli/serve_page.py) on a server
# with an API key and three tiny models. The page lists only the translation pairs until the key is
# typed, then all the models; it translates a typed sentence to what tfm translate gives, streams a
# completion equal to tfm generate's for the same seed, shows the cosine similarity of two sentences
# from tfm embed's vectors, and shows an error message holding HTML as text (nothing injected).
# A screenshot of the translation is kept: test-tmp/cli_test_serve_page/serve_page.png in the build
# folder (docs/img/serve.png in the README is one of these). SKIPs without Chromium or Selenium.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
PY=/usr/bin/python3 # Debian's: python3-selenium is installed for it
[ -x "$PY" ] && "$PY" -c 'import selenium' 2> /dev/null ||
  skip "Selenium is not installed (scripts/install-deps installs python3-selenium)"
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] ||
  skip "Chromium is not installed (scripts/install-deps installs chromium and chromium-driver)"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"

tiny_models || { finish serve_page; exit 1; }
start page --model "$MT@en:es" --model "$LM" --model "$BERT" --api-key 'k<e>y"1' || { finish serve_page; exit 1; }

sentence=$(sed -n 3p "$WORK/c/valid.en")
prompt="In the beginning" seed=5 max_tokens=12
sent_a=$(sed -n 1p "$BERT/sentences.txt") sent_b=$(sed -n 2p "$BERT/sentences.txt")
SHOT=${TMPDIR:-$WORK}/serve_page.png
rm -f "$SHOT"
timeout 120 "$PY" "$ROOT/tests/cli/serve_page.py" "http://127.0.0.1:$PORT/" 'k<e>y"1' "$SHOT" "$sentence" "$prompt" \
  "$seed" "$max_tokens" "$sent_a" "$sent_b" > "$WORK/page.json" 2> "$WORK/page.err" ||
  bad "the browser session failed (rc $?): $(tail -5 "$WORK/page.err") $(cat "$WORK/page.json")"
[ -s "$WORK/page.json" ] || echo '{}' > "$WORK/page.json"
# page FIELD: what the page showed
page() { jq -r --arg f "$1" 'if has($f) then .[$f] else "(none)" end' "$WORK/page.json"; }

# without the key: the translation pair only, and a note asking for the key
[ "$(jq -c .options_without_key "$WORK/page.json")" = '["translate:en:es"]' ] && ok ||
  bad "before the key: options $(jq -c .options_without_key "$WORK/page.json")"
[[ "$(page status_without_key)" == *"API key"* ]] && ok || bad "before the key: status '$(page status_without_key)'"
[ "$(jq -c .options "$WORK/page.json")" = '["translate:en:es","complete:lm","embed:bert_tiny"]' ] && ok ||
  bad "with the key: options $(jq -c .options "$WORK/page.json")"

# the translation == tfm translate of the sentence
want=$(printf '%s\n' "$sentence" | "$TFM" translate --model "$MT" 2> /dev/null)
[ "$(page translate_state)" = "done" ] && [ "$(page translation)" = "$want" ] && [ -n "$want" ] && ok ||
  bad "translation: page '$(page translation)' ($(page translate_state): $(page translate_status)), tfm translate '$want'"

# the streamed completion == tfm generate with the same seed and settings
gen=$("$TFM" generate --model "$LM" --prompt "$prompt" --max-tokens "$max_tokens" --temperature 0.8 --seed "$seed" 2> /dev/null)
[ "$(page complete_state)" = "done" ] && [ "$prompt$(page completion)" = "$gen" ] && ok ||
  bad "completion: page '$prompt$(page completion)' ($(page complete_state): $(page complete_status)), tfm generate '$gen'"

# the similarity == the cosine of tfm embed's two vectors, to the 4 decimals shown
printf '%s\n%s\n' "$sent_a" "$sent_b" > "$WORK/two.txt"
"$TFM" embed --model "$BERT" --input "$WORK/two.txt" --npy "$WORK/two.npy" 2> /dev/null || bad "tfm embed"
cos=$("$PY" - "$WORK/two.npy" << 'PYEOF'
import math, struct, sys
raw = open(sys.argv[1], "rb").read()
start = 10 + struct.unpack("<H", raw[8:10])[0]
v = struct.unpack("<%df" % ((len(raw) - start) // 4), raw[start:])
d = len(v) // 2
u, w = v[:d], v[d:]
print("%.6f" % (sum(a * b for a, b in zip(u, w)) / math.sqrt(sum(a * a for a in u) * sum(b * b for b in w))))
PYEOF
)
sim=$(page similarity)
[ "$(page embed_state)" = "done" ] && awk -v a="$sim" -v b="$cos" 'BEGIN { d = a - b; exit !(a != "" && d < 0.00051 && d > -0.00051) }' &&
  ok || bad "similarity: page '$sim' ($(page embed_state): $(page embed_status)), tfm embed's cosine $cos"

# an error message holding HTML is shown as text, nothing injected
[ "$(page xss_state)" = error ] && [[ "$(page xss_status)" == *"<img src=x onerror=window.pwned=1>"* ]] &&
  [ "$(page xss_pwned)" = false ] && ok ||
  bad "escaping: $(page xss_state) '$(page xss_status)', injected: $(page xss_pwned)"

# the screenshot, kept as an artifact (a PNG)
if [ "$(head -c 8 "$SHOT" 2> /dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then ok
  echo "screenshot: $SHOT"
else bad "no PNG screenshot at $SHOT"; fi
finish serve_page
