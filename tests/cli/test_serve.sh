#!/usr/bin/env bash
# tfm serve (docs/SERVE.md) over loopback with curl, on tiny models trained here in a second (a
# translation model, a decoder-only LM) and tests/golden/bert_tiny: each route's response shape;
# /translate (JSON, form, q as an array), /v1/completions (plain, streamed, with stop sequences)
# and /v1/embeddings give what tfm translate, tfm generate and tfm embed give; concurrent clients
# get their own results; every error case answers its status and a JSON error naming the field
# (LibreTranslate's {"error": "..."}, OpenAI's {"error": {"message", "type", "param", "code"}} on /v1/);
# the API key; the queue limit (503 + Retry-After); a slow client timed out; SIGTERM exits 0.
# Every server started is killed on exit (trap); every wait is bounded.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/serve_lib.sh"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"

# the models: a tiny en->es translation model and a tiny LM (seconds); BERT from the golden folder
tiny_models || { finish serve; exit 1; }

start main --model "$MT@en:es" --model "$LM" --model "$BERT" --threads 2 --max-body 200000 || { finish serve; exit 1; }
MAIN_PID=$SPID MAIN_PORT=$PORT

# --- routes and shapes
req GET /health
want "health" 200 '.status == "ok"'
req GET /languages
want "languages" 200 '. == [{"code": "en", "name": "English", "targets": ["es"]}]'
req GET /v1/models
want "models" 200 '.object == "list" and ([.data[].id] == ["mt", "lm", "bert_tiny"]) and all(.data[]; .object == "model")'
# GET /: the web page (tests/cli/test_serve_page.sh drives it in a browser), HTML with a CSP that
# allows no other origin; served without a key
hdr=$(curl -s -D - -o "$WORK/page.html" --max-time 10 "http://127.0.0.1:$PORT/" | tr -d '\r')
grep -q '^HTTP/1.1 200' <<< "$hdr" && grep -qi '^Content-Type: text/html; charset=utf-8$' <<< "$hdr" &&
  grep -qi "^Content-Security-Policy: default-src 'none';.* connect-src 'self'" <<< "$hdr" &&
  grep -q '<select id="model"' "$WORK/page.html" && ! grep -Eq '(src|href)="?(https?:)?//' "$WORK/page.html" && ok ||
  bad "GET /: $hdr $(head -c 200 "$WORK/page.html")"

# --- /translate == tfm translate (same default settings)
head -8 "$WORK/c/valid.en" > "$WORK/src.txt"
"$TFM" translate --model "$MT" --input "$WORK/src.txt" --output "$WORK/cli.txt" 2> /dev/null || bad "tfm translate"
line1=$(head -1 "$WORK/src.txt") cli1=$(head -1 "$WORK/cli.txt")
post /translate "$(jq -n --arg q "$line1" '{q: $q, source: "en", target: "es", format: "text"}')"
want "translate: one string == tfm translate" 200 ".translatedText == $(jq -n --arg t "$cli1" '$t')"
req POST /translate --data-urlencode "q=$line1" --data-urlencode source=en --data-urlencode target=es
want "translate: a form == tfm translate" 200 ".translatedText == $(jq -n --arg t "$cli1" '$t')"
post /translate "$(jq -R . "$WORK/src.txt" | jq -s '{q: ., source: "en", target: "es"}')"
want "translate: q an array == tfm translate, line by line" 200 ".translatedText == $(jq -R . "$WORK/cli.txt" | jq -s .)"

# texts of q longer than the model's max_len (64 tokens here) are cut to it, as tfm translate cuts
# them (with a warning): the reply is the CLI's translation and says how many were cut in
# X-Tfm-Truncated: COUNT; max_len=64 (docs/SERVE.md); a reply with none cut has no such header
long=$(head -c 2000 "$WORK/c/train.en" | tr '\n' ' ')
printf '%s\n%s\n%s\n' "$long" "$line1" "$long" > "$WORK/long_src.txt"
"$TFM" translate --model "$MT" --input "$WORK/long_src.txt" --output "$WORK/long_cli.txt" 2> "$WORK/long_cli.err" || bad "tfm translate (long)"
hdr=$(curl -s -D - -o "$WORK/body" --max-time 20 -H 'Content-Type: application/json' \
  --data-binary "$(jq -R . "$WORK/long_src.txt" | jq -s '{q: ., source: "en", target: "es"}')" \
  "http://127.0.0.1:$PORT/translate" | tr -d '\r')
cut=$(sed -n 's/^X-Tfm-Truncated: //ip' <<< "$hdr")
n_cut=$(sed -n 's/.*warning: \([0-9]*\) .*/\1/p' "$WORK/long_cli.err") # the CLI's count
[ "$cut" = "$n_cut; max_len=64" ] && [ "$n_cut" -ge 2 ] && jq -e ".translatedText == $(jq -R . "$WORK/long_cli.txt" | jq -s .)" "$WORK/body" > /dev/null &&
  ok || bad "q over max_len: X-Tfm-Truncated '$cut' (want '$n_cut; max_len=64'), body $(head -c 200 "$WORK/body")"
hdr=$(curl -s -D - -o /dev/null --max-time 20 -H 'Content-Type: application/json' \
  --data-binary '{"q": "a", "source": "en", "target": "es"}' "http://127.0.0.1:$PORT/translate" | tr -d '\r')
grep -qi '^X-Tfm-Truncated' <<< "$hdr" && bad "X-Tfm-Truncated on a short q: $hdr" || ok

# concurrent clients get their own results: 8 at once, one line each
CC=()
for i in $(seq 8); do
  q=$(sed -n "${i}p" "$WORK/src.txt")
  curl -s --max-time 20 -H 'Content-Type: application/json' \
    --data-binary "$(jq -n --arg q "$q" '{q: $q, source: "en", target: "es"}')" \
    "http://127.0.0.1:$PORT/translate" > "$WORK/conc.$i" &
  CC+=($!)
done
wait "${CC[@]}" # each curl ends within its --max-time
differ=0
for i in $(seq 8); do
  got=$(jq -r .translatedText "$WORK/conc.$i" 2> /dev/null)
  [ "$got" = "$(sed -n "${i}p" "$WORK/cli.txt")" ] || differ=$((differ + 1))
done
[ "$differ" = 0 ] && ok || bad "concurrent clients: $differ of 8 translations differ from tfm translate's"
# 4 clients at once with 450 lines each (each its own rotation of the text), so that the two
# workers compute together: each gets tfm translate's output for its own lines
CC=()
for i in 1 2 3 4; do
  { tail -n +$((i * 50)) "$WORK/c/train.en"; head -n $((i * 50 - 1)) "$WORK/c/train.en"; } > "$WORK/rot.$i"
  cat "$WORK/rot.$i" "$WORK/rot.$i" > "$WORK/big.$i"
  "$TFM" translate --model "$MT" --input "$WORK/big.$i" --output "$WORK/big_cli.$i" 2> /dev/null || bad "tfm translate big.$i"
  jq -R . "$WORK/big.$i" | jq -s '{q: ., source: "en", target: "es"}' > "$WORK/big.$i.json"
done
for i in 1 2 3 4; do
  curl -s --max-time 60 -H 'Content-Type: application/json' --data-binary "@$WORK/big.$i.json" \
    "http://127.0.0.1:$PORT/translate" > "$WORK/bigconc.$i" &
  CC+=($!)
done
wait "${CC[@]}"
differ=0
for i in 1 2 3 4; do
  jq -r '.translatedText[]' "$WORK/bigconc.$i" 2> /dev/null | cmp -s - "$WORK/big_cli.$i" || differ=$((differ + 1))
done
[ "$differ" = 0 ] && ok || bad "4 concurrent clients of 450 lines: $differ of 4 differ from tfm translate's"

# --- /v1/completions == tfm generate for the same seed and settings
prompt="In the beginning"
gen=$("$TFM" generate --model "$LM" --prompt "$prompt" --max-tokens 12 --temperature 0.8 --top-k 20 --top-p 0.9 \
  --seed 7 2> /dev/null)
body=$(jq -n --arg p "$prompt" '{model: "lm", prompt: $p, max_tokens: 12, temperature: 0.8, top_k: 20, top_p: 0.9, seed: 7}')
post /v1/completions "$body"
want "completions: shape" 200 '.object == "text_completion" and .model == "lm" and (.choices | length) == 1 and
  .choices[0].index == 0 and (.choices[0].finish_reason | IN("stop", "length")) and .usage.prompt_tokens > 0 and
  .usage.total_tokens == .usage.prompt_tokens + .usage.completion_tokens'
text=$(jq -r '.choices[0].text' "$WORK/body")
[ "$prompt$text" = "$gen" ] && ok || bad "completions: '$prompt$text' != tfm generate's '$gen'"
# usage: the prompt's tokens as tfm tokenize counts them (no BOS), and the tokens generated: all 12
# unless EOS came first (EOS is not counted)
python3 - "$LM" "$WORK/lm_tokenizer.model" << 'EOF' || bad "the LM's tokenizer.model tensor"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
a, b = json.loads(raw[8:8 + n])["tokenizer.model"]["data_offsets"]
open(sys.argv[2], "wb").write(raw[8 + n + a:8 + n + b])
EOF
n_prompt=$(printf '%s\n' "$prompt" | "$TFM" tokenize --encode --tokenizer "$WORK/lm_tokenizer.model" | wc -w)
want "completions: usage counts" 200 ".usage.prompt_tokens == $n_prompt and ($n_prompt > 0) and
  (if .choices[0].finish_reason == \"length\" then .usage.completion_tokens == 12 else .usage.completion_tokens < 12 end)"
# streamed: Server-Sent Events whose texts add up to the same text, then [DONE]
curl -sN --max-time 20 -H 'Content-Type: application/json' --data-binary "$(jq '. + {stream: true}' <<< "$body")" \
  "http://127.0.0.1:$PORT/v1/completions" > "$WORK/sse"
last=$(grep '^data: ' "$WORK/sse" | tail -1)
[ "$last" = "data: [DONE]" ] && ok || bad "stream: the last event is '$last', not [DONE]"
sed -n 's/^data: \({.*\)$/\1/p' "$WORK/sse" > "$WORK/events"
n_events=$(wc -l < "$WORK/events")
streamed=$(jq -j '.choices[0].text' "$WORK/events")
[ "$streamed" = "$text" ] && ok || bad "stream: '$streamed' != the plain completion '$text'"
[ "$n_events" -ge 3 ] && ok || bad "stream: $n_events events for 12 tokens"
jq -se 'all(.[]; .object == "text_completion" and .id == (.id | select(startswith("cmpl-")))) and
  (.[-1].choices[0].finish_reason | IN("stop", "length")) and all(.[:-1][]; .choices[0].finish_reason == null)' \
  "$WORK/events" > /dev/null && ok || bad "stream: event shapes: $(head -c 400 "$WORK/sse")"
# concurrent completions, four seeds at once, streamed and not: each equals tfm generate with its seed
CC=()
for seed in 1 2 3 4; do
  "$TFM" generate --model "$LM" --prompt "$prompt" --max-tokens 12 --seed "$seed" 2> /dev/null > "$WORK/gen.$seed"
  st=$([ $((seed % 2)) = 0 ] && echo true || echo false)
  curl -sN --max-time 20 -H 'Content-Type: application/json' \
    --data-binary "$(jq -n --arg p "$prompt" --argjson s "$seed" --argjson st "$st" '{prompt: $p, max_tokens: 12, seed: $s, stream: $st}')" \
    "http://127.0.0.1:$PORT/v1/completions" > "$WORK/cc.$seed" &
  CC+=($!)
done
wait "${CC[@]}" # each curl ends within its --max-time
differ=0
for seed in 1 2 3 4; do
  [ "$prompt$(completion_text "$WORK/cc.$seed")" = "$(cat "$WORK/gen.$seed")" ] || differ=$((differ + 1))
done
[ "$differ" = 0 ] && ok || bad "concurrent completions: $differ of 4 differ from tfm generate"
# a stop sequence: the text ends before its first occurrence, finish_reason "stop", streamed alike
stop=${text:3:2}
if [ ${#text} -ge 6 ] && [ -n "${stop// /}" ]; then
  cut=${text%%"$stop"*}
  post /v1/completions "$(jq --arg s "$stop" '. + {stop: [$s]}' <<< "$body")"
  want "stop: cut before '$stop'" 200 ".choices[0].text == $(jq -n --arg t "$cut" '$t') and .choices[0].finish_reason == \"stop\""
  curl -sN --max-time 20 -H 'Content-Type: application/json' \
    --data-binary "$(jq --arg s "$stop" '. + {stop: $s, stream: true}' <<< "$body")" \
    "http://127.0.0.1:$PORT/v1/completions" | sed -n 's/^data: \({.*\)$/\1/p' > "$WORK/events_stop"
  [ "$(jq -j '.choices[0].text' "$WORK/events_stop")" = "$cut" ] && ok || bad "stop, streamed: $(cat "$WORK/events_stop")"
else
  bad "stop: the completion '$text' is too short to pick a stop sequence from"
fi

# --- /v1/embeddings == tfm embed --npy, to the last bit of each float
"$TFM" embed --model "$BERT" --input "$BERT/sentences.txt" --npy "$WORK/embed_cli.npy" 2> /dev/null || bad "tfm embed"
post /v1/embeddings "$(jq -R . "$BERT/sentences.txt" | jq -s '{model: "bert_tiny", input: .}')"
want "embeddings: shape" 200 ".object == \"list\" and .model == \"bert_tiny\" and (.data | length) == $(wc -l < "$BERT/sentences.txt") and
  all(.data | to_entries[]; .value.index == .key and .value.object == \"embedding\")"
# usage: the tokens the encoder read, [CLS] and [SEP] included, each text cut at the model's
# max_seq_length (16 here): tfm tokenize's WordPiece ids of each line, summed; a long line is cut
n_embed=$("$TFM" tokenize --encode --wordpiece "$BERT/vocab.txt" --max-tokens 16 --input "$BERT/sentences.txt" | wc -w)
want "embeddings: usage" 200 ".usage == {\"prompt_tokens\": $n_embed, \"total_tokens\": $n_embed}"
cp "$WORK/body" "$WORK/embed_body"
long=$(tr '\n' ' ' < "$BERT/sentences.txt")
n_long=$(printf '%s\nA man eats.\n' "$long" | "$TFM" tokenize --encode --wordpiece "$BERT/vocab.txt" --max-tokens 16 | wc -w)
post /v1/embeddings "$(jq -n --arg l "$long" '{input: [$l, "A man eats."]}')"
want "embeddings: usage of a text over max_seq_length" 200 ".usage.prompt_tokens == $n_long and $n_long < 16 + 10 and
  .usage.total_tokens == $n_long"
cp "$WORK/embed_body" "$WORK/body"
python3 - "$WORK/body" "$WORK/embed_cli.npy" << 'EOF' && ok || bad "embeddings differ from tfm embed's"
import json, struct, sys
got = [x for d in json.load(open(sys.argv[1]))["data"] for x in d["embedding"]]
raw = open(sys.argv[2], "rb").read()
start = 10 + struct.unpack("<H", raw[8:10])[0]
cli = struct.unpack("<%df" % ((len(raw) - start) // 4), raw[start:])
# each number, rounded to a float, is tfm embed's float exactly
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
sys.exit(0 if len(got) == len(cli) and all(f32(x) == y for x, y in zip(got, cli)) else 1)
EOF
# encoding_format "base64" (OpenAI's Python client asks for it): the same floats' little-endian bytes
post /v1/embeddings "$(jq -R . "$BERT/sentences.txt" | jq -s '{input: ., encoding_format: "base64"}')"
python3 - "$WORK/body" "$WORK/embed_cli.npy" << 'EOF' && ok || bad "base64 embeddings differ from tfm embed's"
import base64, json, struct, sys
got = b"".join(base64.b64decode(d["embedding"], validate=True) for d in json.load(open(sys.argv[1]))["data"])
raw = open(sys.argv[2], "rb").read()
sys.exit(0 if got == raw[10 + struct.unpack("<H", raw[8:10])[0]:] else 1)
EOF

# --- errors: status, and a JSON error naming the field
post /translate '{"q": "x", "source": "en"'
want_error "invalid JSON" 400 "invalid JSON"
post /translate '{"q": "x"} trailing'
want_error "text after the JSON" 400 "invalid JSON"
printf '{"q": "caf\xe9", "source": "en", "target": "es"}' > "$WORK/bad_utf8.json"
req POST /translate -H 'Content-Type: application/json' --data-binary "@$WORK/bad_utf8.json"
want_error "invalid UTF-8" 400 "UTF-8"
post /translate '{"q": "a\u0000b", "source": "en", "target": "es"}'
want_error "a NUL in a string" 400 "NUL"
post /translate '{"q": "a\\u0000b", "source": "en", "target": "es"}'
want "an escaped backslash before u0000 is text" 200 '.translatedText | type == "string"'
printf '{"q": "a\0b", "source": "en", "target": "es"}' > "$WORK/nul.json"
req POST /translate -H 'Content-Type: application/json' --data-binary "@$WORK/nul.json"
want_error "a NUL byte in the body" 400 "NUL byte"
post /translate '[1, 2]'
want_error "not an object" 400 "JSON object"
post /translate '{"q": 5, "source": "en", "target": "es"}'
want_error "q a number" 400 "q:"
post /translate '{"q": ["a", 3], "source": "en", "target": "es"}'
want_error "q[1] a number" 400 "q[1]"
post /translate '{"q": "", "source": "en", "target": "es"}'
want_error "empty q" 400 "q: empty"
post /translate '{"q": [], "source": "en", "target": "es"}'
want_error "empty q array" 400 "q: empty"
post /translate '{"source": "en", "target": "es"}'
want_error "no q" 400 "q: required"
post /translate '{"q": "x", "source": "en", "target": "fr"}'
want_error "unknown target" 400 "target:"
post /translate '{"q": "x", "source": "de", "target": "es"}'
want_error "unknown source" 400 "source:"
post /translate '{"q": "x", "source": "auto", "target": "es"}'
want_error "source auto" 400 "source:"
post /translate '{"q": "x", "target": "es"}'
want_error "no source" 400 "source:"
post /translate '{"q": "x", "source": "en", "target": "es", "format": "html"}'
want_error "format html" 400 "format:"
req POST /translate -H 'Content-Type: text/plain' --data-binary 'hello'
want_error "Content-Type" 400 "Content-Type"
post /v1/completions '{"model": "nope", "prompt": "x"}'
want_oai_error "unknown model" 400 "model:" invalid_request_error '"model"'
post /v1/completions '{"model": "mt", "prompt": "x"}'
want_oai_error "model of the wrong kind" 400 "model:" invalid_request_error '"model"'
post /v1/completions '{"prompt": 3}'
want_oai_error "prompt a number" 400 "prompt:" invalid_request_error '"prompt"'
post /v1/completions '{"prompt": "x", "max_tokens": -1}'
want_oai_error "max_tokens < 0" 400 "max_tokens:" invalid_request_error '"max_tokens"'
post /v1/completions '{"prompt": "x", "max_tokens": 2.5}'
want_oai_error "max_tokens not an integer" 400 "max_tokens:" invalid_request_error '"max_tokens"'
post /v1/completions '{"prompt": "x", "temperature": "hot"}'
want_oai_error "temperature a string" 400 "temperature:" invalid_request_error '"temperature"'
post /v1/completions '{"prompt": "x", "top_p": 0}'
want_oai_error "top_p 0" 400 "top_p: top_p must be in (0, 1]" invalid_request_error '"top_p"'
post /v1/completions '{"prompt": "x", "stream": "yes"}'
want_oai_error "stream a string" 400 "stream:" invalid_request_error '"stream"'
post /v1/completions '{"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}'
want_oai_error "five stop sequences" 400 "stop:" invalid_request_error '"stop"'
post /v1/embeddings '{"input": ["a", null]}'
want_oai_error "input[1] null" 400 "input[1]" invalid_request_error '"input[1]"'
post /v1/embeddings '{"input": "a", "encoding_format": "hex"}'
want_oai_error "encoding_format hex" 400 "encoding_format:" invalid_request_error '"encoding_format"'
req GET /nope
want_error "unknown path" 404 "/nope"
req GET /translate
want_error "wrong method" 405 "POST"
req GET /v1/nope
want_oai_error "unknown /v1/ path" 404 "/v1/nope" not_found_error null
req GET /v1/completions
want_oai_error "wrong method on /v1/" 405 "POST" invalid_request_error null
allow=$(curl -s -o /dev/null -D - --max-time 10 "http://127.0.0.1:$PORT/v1/completions" | tr -d '\r' | sed -n 's/^Allow: //ip')
[ "$allow" = POST ] && ok || bad "405 without 'Allow: POST' ($allow)"
# HEAD on a GET route: the GET's status and headers, no body (RFC 9110 §9.3.2); other methods on
# a GET route: 405 with Allow: GET, HEAD
for p in / /health /languages /v1/models; do
  hdr=$(curl -s -I --max-time 10 "http://127.0.0.1:$PORT$p" | tr -d '\r')
  get=$(curl -s -D - -o "$WORK/get.body" --max-time 10 "http://127.0.0.1:$PORT$p" | tr -d '\r')
  len=$(sed -n 's/^Content-Length: //ip' <<< "$hdr")
  grep -q '^HTTP/1.1 200' <<< "$hdr" && [ "$len" = "$(wc -c < "$WORK/get.body")" ] &&
    [ "$(sed -n 's/^Content-Type: //ip' <<< "$hdr")" = "$(sed -n 's/^Content-Type: //ip' <<< "$get")" ] && ok ||
    bad "HEAD $p: $hdr (GET: $get)"
done
allow=$(curl -s -o "$WORK/body" -D - --max-time 10 -X DELETE "http://127.0.0.1:$PORT/languages" | tr -d '\r' | sed -n 's/^Allow: //ip')
[ "$allow" = "GET, HEAD" ] && grep -q 'takes GET (or HEAD)' "$WORK/body" && ok || bad "DELETE /languages: Allow '$allow', $(cat "$WORK/body")"
head -c 250000 /dev/zero | tr '\0' 'a' > "$WORK/big.txt"
req POST /translate -H 'Content-Type: application/json' --data-binary "@$WORK/big.txt"
want_error "a body over --max-body" 413 "max-body"
req POST /translate -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$WORK/big.txt"
want_error "a chunked body over --max-body" 413 "max-body"
req POST /v1/embeddings -H 'Content-Type: application/json' --data-binary "@$WORK/big.txt"
want_oai_error "a body over --max-body on /v1/" 413 "max-body" invalid_request_error null
grep -q "POST /translate 413" "$WORK/main.log" && ok || bad "no access-log line for the 413"
# the server is still well after all that
req GET /health
want "health after the errors" 200 '.status == "ok"'

# GET /metrics: Prometheus text; the counts of what this test sent
req GET /metrics
m=$(cat "$WORK/body")
n413=$(grep -c 'POST /translate 413' "$WORK/main.log")
n_tr=$(grep -c 'POST /translate 200' "$WORK/main.log")
if [ "$CODE" = 200 ] && grep -q '^# TYPE tfm_serve_requests_total counter$' <<< "$m" &&
   grep -qx "tfm_serve_requests_total{route=\"/translate\",code=\"200\"} $n_tr" <<< "$m" &&
   grep -qx "tfm_serve_requests_total{route=\"/translate\",code=\"413\"} $n413" <<< "$m" &&
   grep -qx 'tfm_serve_requests_total{route="other",code="404"} 2' <<< "$m" &&
   grep -qx 'tfm_serve_requests_total{route="/v1/completions",code="405"} 2' <<< "$m" &&
   grep -q '^tfm_serve_request_seconds_bucket{le="+Inf"} [1-9]' <<< "$m" &&
   grep -q '^tfm_serve_tokens_out_total [1-9]' <<< "$m" && grep -qx 'tfm_serve_workers_busy 0' <<< "$m"; then ok; else
  bad "metrics ($CODE; $n_tr translations, $n413 413s): $m"
fi

# SIGTERM: exits 0 promptly
kill -TERM "$MAIN_PID"
for _ in $(seq 100); do kill -0 "$MAIN_PID" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$MAIN_PID" 2> /dev/null; then bad "SIGTERM: still running after 10 s"; else
  wait "$MAIN_PID"
  rc=$?
  [ "$rc" = 0 ] && ok || bad "SIGTERM: exit $rc, want 0 ($(tail -3 "$WORK/main.log"))"
fi

# --- the API key (compared in constant time), the queue, slow clients: a second server
start keyed --model "$MT@en:es" --api-key s3cret --threads 1 --max-queue 0 --beam 4 --timeout 1 --drain 300 || { finish serve; exit 1; }
post /translate '{"q": "x", "source": "en", "target": "es"}'
want_error "no key" 403 "api_key"
post /translate '{"q": "x", "source": "en", "target": "es", "api_key": "s3creT"}'
want_error "wrong key" 403 "api_key"
req POST /translate -H 'Authorization: Bearer s3cre' -H 'Content-Type: application/json' \
  --data-binary '{"q": "x", "source": "en", "target": "es"}'
want_error "a prefix of the key" 403 "api_key"
post /translate '{"q": "x", "source": "en", "target": "es", "api_key": "s3cret"}'
want "key in the body" 200 '.translatedText | type == "string"'
req POST /translate -H 'Authorization: Bearer s3cret' -H 'Content-Type: application/json' \
  --data-binary '{"q": "x", "source": "en", "target": "es"}'
want "key as a bearer token" 200 '.translatedText | type == "string"'
req GET /v1/models
want_oai_error "models without a key" 403 "api_key" authentication_error null
req GET /languages
want "languages need no key" 200 'length == 1'

# a slow client (half a request line, then nothing) is disconnected after --timeout 1 s
exec 3<> "/dev/tcp/127.0.0.1/$PORT"
printf 'POST /translate HTTP/1.1\r\n' >&3
t0=$(date +%s%N)
timeout 5 cat <&3 > /dev/null
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
exec 3<&-
[ "$rc" = 0 ] && [ "$ms" -lt 4000 ] && ok || bad "slow client: not disconnected in 4 s (rc $rc, $ms ms)"
req GET /health
want "health after the slow client" 200 '.status == "ok"'

# queue full: one worker, no queue; a long request (a thousand lines at beam 4) holds the worker,
# so a second one gets 503 with Retry-After while it runs
for _ in 1 2 3 4 5; do cat "$WORK/c/train.en"; done | jq -R . | jq -s '{q: ., source: "en", target: "es", api_key: "s3cret"}' > "$WORK/long.json"
curl -s --max-time 300 -o "$WORK/long.out" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary "@$WORK/long.json" "http://127.0.0.1:$PORT/translate" > "$WORK/long.code" &
LONG=$!
# probe only once the long request computes (were a probe first, the long one would get the 503)
for _ in $(seq 300); do
  curl -s --max-time 5 -H 'Authorization: Bearer s3cret' "http://127.0.0.1:$PORT/metrics" |
    grep -q '^tfm_serve_translate_busy 1$' && break
  sleep 0.05
done
busy=0
for _ in $(seq 100); do
  hdr=$(curl -s -D - -o "$WORK/body" --max-time 10 -H 'Content-Type: application/json' \
    --data-binary '{"q": "x", "source": "en", "target": "es", "api_key": "s3cret"}' "http://127.0.0.1:$PORT/translate" | tr -d '\r')
  if grep -q '^HTTP/1.1 503' <<< "$hdr"; then
    grep -qi '^Retry-After: 1$' <<< "$hdr" && busy=1 || busy=2
    break
  fi
  sleep 0.02
done
# SIGTERM while the long request runs: it is still answered, then the server exits 0
kill -TERM "$SPID"
wait "$LONG"
for _ in $(seq 150); do kill -0 "$SPID" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$SPID" 2> /dev/null; then bad "SIGTERM mid-request: still running after 15 s"; else
  wait "$SPID"
  rc=$?
  [ "$rc" = 0 ] && ok || bad "SIGTERM mid-request: exit $rc, want 0 ($(tail -3 "$WORK/keyed.log"))"
fi
[ "$busy" = 1 ] && ok || bad "queue full: no 503 with Retry-After while a request held the only worker (busy=$busy)"
jq -e '.error | contains("busy")' "$WORK/body" > /dev/null && ok || bad "queue full: body $(cat "$WORK/body")"
[ "$(cat "$WORK/long.code")" = 200 ] && [ "$(jq '.translatedText | length' "$WORK/long.out")" = $((5 * $(wc -l < "$WORK/c/train.en"))) ] &&
  ok || bad "the long request, SIGTERM meanwhile: $(cat "$WORK/long.code") $(head -c 200 "$WORK/long.out")"

# --max-connections 2: a third connection is refused while two idle ones are open, then served
start limited --model "$LM" --max-connections 2 --timeout 20 || { finish serve; exit 1; }
exec 4<> "/dev/tcp/127.0.0.1/$PORT" 5<> "/dev/tcp/127.0.0.1/$PORT"
sleep 0.2
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/health")
[ "$code" = 000 ] && ok || bad "a third connection past --max-connections 2 was answered ($code)"
exec 4<&- 5<&-
code=
for _ in $(seq 50); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/health")
  [ "$code" = 200 ] && break
  sleep 0.1
done
[ "$code" = 200 ] && ok || bad "no connection served after the two idle ones closed ($code)"

# startup errors: each before the server binds — an exit status, the error, and no "listening" line
# (the models are loaded before binding: a model that fails to load, here a FIFO that cannot seek
# once its writer is done, stops it the same way)
startup_error() {
  local label=$1 want=$2 needle=$3 err rc
  shift 3
  err=$(timeout 30 "$TFM" serve --port 0 "$@" 2>&1 > /dev/null)
  rc=$?
  [ "$rc" = "$want" ] && has_text_ "$needle" "$err" && ! grep -q 'listening on' <<< "$err" && ok ||
    bad "$label: exit $rc (want $want), stderr ${err:0:400} (want '$needle', no 'listening on')"
}
startup_error "a translation model without its pair" 1 "@SRC:TGT" --model "$MT"
startup_error "a second model without its pair" 1 "@SRC:TGT" --model "$LM" --model "$MT"
startup_error "a bad pair" 1 "SRC:TGT" --model "$MT@en"
startup_error "a pair on an LM" 1 "only a translation" --model "$LM@en:es"
startup_error "a missing model" 1 "$WORK/none.st" --model "$WORK/none.st"
startup_error "two models of one name" 1 "the same name" --model "$LM" --model "$LM"
startup_error "a bad host" 1 "--host" --host localhost --model "$LM"
startup_error "--threads 0" 2 "--threads" --model "$LM" --threads 0
mkfifo "$WORK/fifo.st"
(timeout 10 cp "$LM" "$WORK/fifo.st" 2> /dev/null) &
writer=$!
startup_error "a model failing to load (a FIFO)" 1 "fifo.st" --model "$WORK/fifo.st"
wait "$writer"

finish serve
