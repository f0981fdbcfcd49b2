#!/usr/bin/env bash
# tfm serve's batches across clients (docs/SERVE.md "Batching across clients") over loopback:
# many clients at once, each with its own sentence, while one worker is held by a long request so
# that they queue: each gets `tfm translate` of its sentence alone (greedy and beam 4), and
# /metrics shows the sentences ran in shared rounds (fewer rounds than requests); --max-batch-tokens
# bounds a round (1 token: a sentence a round); `alternatives` gives the beam's next best (the
# best unchanged); completions batched across clients (continuous batching: prompts of any length
# join a running batch) == tfm generate alone; a client that disconnects cancels its queued work
# (translation and completion); bench/serve_load.py runs.
# Every server started is killed on exit (trap); every wait is bounded.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
command -v jq > /dev/null || skip "jq is not installed (scripts/install-deps installs it)"
tiny_models || { finish serve_batch; exit 1; }

N=24 # clients at once
sed -n "1,${N}p" "$WORK/c/all.en" > "$WORK/many.txt"
for i in $(seq "$N"); do sed -n "${i}p" "$WORK/many.txt" | jq -R '{q: ., source: "en", target: "es"}' > "$WORK/one.$i.json"; done
T=$(wc -l < "$WORK/c/train.en")

# metric NAME: its value in the last GET /metrics
metric() { sed -n "s/^$1 //p" "$WORK/body"; }

# clients NAME BEAM COPIES ARGS...: a server with one worker and ARGS; the long request (every
# training line, COPIES times: L lines) that holds the worker, then N clients at once; each
# answer == tfm translate --beam BEAM of that sentence alone; leaves /metrics in body
clients() {
  local name=$1 beam=$2 copies=$3 i differ=0 hold
  shift 3
  L=$((copies * T))
  for _ in $(seq "$copies"); do cat "$WORK/c/train.en"; done | jq -R . | jq -s '{q: ., source: "en", target: "es"}' > "$WORK/hold.json"
  start "$name" --model "$MT@en:es" --threads 1 --beam "$beam" "$@" || return 1
  curl -s --max-time 120 -o "$WORK/hold.out" -H 'Content-Type: application/json' --data-binary "@$WORK/hold.json" \
    "http://127.0.0.1:$PORT/translate" &
  hold=$!
  sleep 0.2 # the long request is in the queue first
  local CC=()
  for i in $(seq "$N"); do
    curl -s --max-time 120 -H 'Content-Type: application/json' --data-binary "@$WORK/one.$i.json" \
      "http://127.0.0.1:$PORT/translate" > "$WORK/got.$i" &
    CC+=($!)
  done
  wait "$hold" "${CC[@]}" # each curl ends within its --max-time
  for i in $(seq "$N"); do
    if [ ! -s "$WORK/alone.$beam.$i" ]; then
      sed -n "${i}p" "$WORK/many.txt" > "$WORK/alone.in"
      "$TFM" translate --model "$MT" --beam "$beam" --input "$WORK/alone.in" --output "$WORK/alone.$beam.$i" 2> /dev/null ||
        bad "tfm translate line $i"
    fi
    [ "$(jq -r .translatedText "$WORK/got.$i" 2> /dev/null)" = "$(cat "$WORK/alone.$beam.$i")" ] || differ=$((differ + 1))
  done
  [ "$differ" = 0 ] && ok || bad "$name: $differ of $N concurrent clients differ from tfm translate of their sentence alone"
  [ "$(jq '.translatedText | length' "$WORK/hold.out")" = "$L" ] && ok || bad "$name: the long request: $(head -c 200 "$WORK/hold.out")"
  req GET /metrics
}

clients greedy 1 8
rounds=$(metric tfm_serve_translate_batches_total) sent=$(metric tfm_serve_translate_batch_sentences_total)
# the long request alone needs ceil(L / 32) rounds; its last one and a few more take the N clients
[ "$sent" = $((L + N)) ] && [ -n "$rounds" ] && [ "$rounds" -le $(((L + N + 31) / 32 + 3)) ] && ok ||
  bad "greedy: $sent sentences in $rounds rounds: not shared (each client alone would need $(((L + 31) / 32 + N)))"
kill -9 "$SPID"

clients beam4 4 2
[ "$(metric tfm_serve_translate_batch_sentences_total)" = $((L + N)) ] && ok || bad "beam 4: $(grep translate_batch "$WORK/body")"
# alternatives (LibreTranslate's field): the beam's next best; the best stays tfm translate's
post /translate "$(jq '. + {alternatives: 3}' "$WORK/one.1.json")"
want "alternatives: 3" 200 ".translatedText == $(jq -R . "$WORK/alone.4.1") and (.alternatives | type == \"array\" and
  length >= 1 and length <= 3 and all(.[]; type == \"string\"))"
post /translate "$(jq -s '{q: [.[0].q, .[1].q], source: "en", target: "es", alternatives: 2}' "$WORK/one.1.json" "$WORK/one.2.json")"
want "alternatives: 2, q an array" 200 ".translatedText == [$(jq -R . "$WORK/alone.4.1"), $(jq -R . "$WORK/alone.4.2")] and
  (.alternatives | length == 2 and all(.[]; type == \"array\" and length >= 1 and length <= 2))"
post /translate "$(jq '. + {alternatives: 4}' "$WORK/one.1.json")"
want_error "alternatives past the beam" 400 "alternatives:"
post /translate "$(jq '. + {alternatives: "two"}' "$WORK/one.1.json")"
want_error "alternatives a string" 400 "alternatives:"
post /translate "$(jq '. + {alternatives: "2"}' "$WORK/one.1.json")"
want_error "alternatives a string of digits in JSON" 400 "alternatives:"
# in an HTML form every field is a string (LibreTranslate's form clients send alternatives=2): digits
# are read as the number, with the same checks
form="q=$(jq -r '.q | @uri' "$WORK/one.1.json")&source=en&target=es"
req POST /translate --data-binary "$form&alternatives=2"
want "alternatives=2 in a form" 200 ".translatedText == $(jq -R . "$WORK/alone.4.1") and
  (.alternatives | type == \"array\" and length >= 1 and length <= 2 and all(.[]; type == \"string\"))"
req POST /translate --data-binary "$form&alternatives=0"
want "alternatives=0 in a form" 200 ".translatedText == $(jq -R . "$WORK/alone.4.1") and (has(\"alternatives\") | not)"
req POST /translate --data-binary "$form&alternatives=4"
want_error "alternatives=4 in a form: past the beam" 400 "alternatives:"
for v in two -1 1.5 '' 99999999999; do
  req POST /translate --data-binary "$form&alternatives=$v"
  want_error "alternatives='$v' in a form" 400 "alternatives:"
done
kill -9 "$SPID"

# --max-batch-tokens 1: no round can take a second sentence; the results stay the same
clients tokens1 1 1 --max-batch-tokens 1
[ "$(metric tfm_serve_translate_batches_total)" = $((L + N)) ] && ok ||
  bad "--max-batch-tokens 1: $(grep translate_batch "$WORK/body") (want $((L + N)) rounds of one sentence)"
kill -9 "$SPID"

# completions batched: 16 clients with one prompt (seeds 1-16, every third streamed) and 4 with a
# longer one, one worker whose batch waits 400 ms for requests when it starts: each text == tfm
# generate alone with its seed; at most 8 rows a step
start groups --model "$LM" --threads 1 --batch-wait-ms 400 || { finish serve_batch; exit 1; }
CC=()
for i in $(seq 20); do
  p="In the beginning"
  [ "$i" -gt 16 ] && p="And God said unto Moses"
  st=$([ $((i % 3)) = 0 ] && echo true || echo false)
  "$TFM" generate --model "$LM" --prompt "$p" --max-tokens 10 --temperature 0.9 --top-k 30 --seed "$i" 2> /dev/null > "$WORK/gen.$i"
  jq -n --arg p "$p" --argjson s "$i" --argjson st "$st" \
    '{prompt: $p, max_tokens: 10, temperature: 0.9, top_k: 30, seed: $s, stream: $st}' > "$WORK/gen.$i.json"
done
for i in $(seq 20); do
  curl -sN --max-time 60 -H 'Content-Type: application/json' --data-binary "@$WORK/gen.$i.json" \
    "http://127.0.0.1:$PORT/v1/completions" > "$WORK/gc.$i" &
  CC+=($!)
done
wait "${CC[@]}"
differ=0
for i in $(seq 20); do
  p="In the beginning"
  [ "$i" -gt 16 ] && p="And God said unto Moses"
  [ "$p$(completion_text "$WORK/gc.$i")" = "$(cat "$WORK/gen.$i")" ] || differ=$((differ + 1))
done
[ "$differ" = 0 ] && ok || bad "completions batched: $differ of 20 differ from tfm generate alone"
req GET /metrics
steps=$(metric tfm_serve_generate_steps_total) step_rows=$(metric tfm_serve_generate_step_rows_total)
# the first batch waits 400 ms for 8 requests; the other 12 join it as rows leave (or start another)
[ "$(metric tfm_serve_generate_group_rows_total)" = 20 ] && [ -n "$steps" ] && [ "$step_rows" -gt "$steps" ] &&
  [ "$step_rows" -le $((8 * steps)) ] && ok ||
  bad "completions batched: $(grep '^tfm_serve_generate' "$WORK/body") (want 20 rows, more than 1 and at most 8 a step)"
kill -9 "$SPID"

# continuous batching: an untrained model large enough that a long completion takes a while (2 layers
# of d_model 256, max_len 1024) holds the one worker; 6 more completions, each prompt of another
# length, budgets 3-60, streamed or not, greedy or sampled, arrive while it generates, 50 ms apart,
# and join its batch (tfm_serve_generate_joined_total); each of the 7 texts == tfm generate alone
# with its settings. --max-queue 0: the one worker's batch has 7 free rows, so each is answered
# 200 (counting busy threads, not rows, answered them 503)
"$TFM" tokenize --train --input "$WORK/c/train.en,$WORK/c/train.es" --vocab-size 400 --save-model "$WORK/cb.tok" 2> /dev/null &&
  "$TFM" init --tokenizer "$WORK/cb.tok" --arch decoder-only --d-model 256 --n-heads 4 --d-ff 1024 --n-dec-layers 2 \
    --max-len 1024 --pe rope --seed 5 --save "$WORK/cb.safetensors" 2> /dev/null || bad "a model for continuous batching"
CB=$WORK/cb.safetensors
start cbatch --model "$CB" --threads 1 --max-queue 0 || { finish serve_batch; exit 1; }
PROMPTS=("In the beginning" "And God said" "Let there be light: and there was light and it was good" "And"
  "And the evening and the morning were the first day" "The earth was without form, and void" "Unto Moses")
BUDGET=(900 3 25 60 8 40 12) # the first holds the worker
for i in $(seq 0 6); do
  temp=$([ $((i % 2)) = 0 ] && echo 0 || echo 0.8)
  st=$([ $((i % 3)) = 1 ] && echo true || echo false)
  "$TFM" generate --model "$CB" --prompt "${PROMPTS[$i]}" --max-tokens "${BUDGET[$i]}" --temperature "$temp" \
    --top-p 0.9 --seed $((i + 7)) 2> /dev/null > "$WORK/cb.want.$i"
  jq -n --arg p "${PROMPTS[$i]}" --argjson m "${BUDGET[$i]}" --argjson t "$temp" --argjson s $((i + 7)) --argjson st "$st" \
    '{prompt: $p, max_tokens: $m, temperature: $t, top_p: 0.9, seed: $s, stream: $st}' > "$WORK/cb.$i.json"
done
CC=()
for i in $(seq 0 6); do
  curl -sN --max-time 120 -D "$WORK/cb.hdr.$i" -H 'Content-Type: application/json' --data-binary "@$WORK/cb.$i.json" \
    "http://127.0.0.1:$PORT/v1/completions" > "$WORK/cb.got.$i" &
  CC+=($!)
  [ "$i" = 0 ] && sleep 0.2 || sleep 0.05 # the long one first; the others while it generates
done
wait "${CC[@]}"
differ=0
for i in $(seq 0 6); do
  [ "${PROMPTS[$i]}$(completion_text "$WORK/cb.got.$i")" = "$(cat "$WORK/cb.want.$i")" ] || differ=$((differ + 1))
done
req GET /metrics
joined=$(metric tfm_serve_generate_joined_total)
echo "continuous batching: $joined of 7 joined a running batch; $(metric tfm_serve_generate_step_rows_total) rows in $(metric tfm_serve_generate_steps_total) steps; the long one $(jq .usage.completion_tokens "$WORK/cb.got.0") tokens"
[ "$differ" = 0 ] && ok || bad "continuous batching: $differ of 7 completions differ from tfm generate alone"
codes=$(for i in $(seq 0 6); do head -1 "$WORK/cb.hdr.$i" | tr -d '\r' | cut -d' ' -f2; done | tr '\n' ' ')
[ "$codes" = "200 200 200 200 200 200 200 " ] && ok ||
  bad "continuous batching, --max-queue 0: statuses $codes (want 200 each: the batch had free rows); $(head -c 200 "$WORK/cb.got.1")"
[ "$(jq .usage.completion_tokens "$WORK/cb.got.0")" -ge 500 ] 2> /dev/null && ok ||
  bad "continuous batching: the long completion stopped early: $(head -c 300 "$WORK/cb.got.0")"
[ "$(metric tfm_serve_generate_group_rows_total)" = 7 ] && [ -n "$joined" ] && [ "$joined" -ge 1 ] && ok ||
  bad "continuous batching: no completion joined a running batch: $(grep '^tfm_serve_generate' "$WORK/body")"
kill -9 "$SPID"
# a completion whose client gives up while its batch waits to start is cancelled: 499, counted
start gcancel --model "$LM" --threads 1 --batch-wait-ms 1500 || { finish serve_batch; exit 1; }
curl -s --max-time 0.5 -o /dev/null -H 'Content-Type: application/json' --data-binary "@$WORK/gen.1.json" \
  "http://127.0.0.1:$PORT/v1/completions"
for _ in $(seq 50); do grep -q "POST /v1/completions" "$WORK/gcancel.log" && break; sleep 0.1; done
req GET /metrics
[ "$(metric tfm_serve_cancelled_total)" = 1 ] && grep -q "POST /v1/completions 499" "$WORK/gcancel.log" && ok ||
  bad "completion cancelled: $(metric tfm_serve_cancelled_total) cancelled; $(tail -2 "$WORK/gcancel.log")"
kill -9 "$SPID"

# bench/serve_load.py runs: a tiny model, 5 sentences, 1 and 8 clients (its timings mean nothing here)
if timeout 120 python3 "$ROOT/bench/serve_load.py" --tfm "$TFM" --model "$MT@en:es" --lm "$LM" --input "$WORK/many.txt" \
  --limit 5 --levels 1,8 --max-tokens 4 --out "$WORK/load.md" > "$WORK/load.log" 2>&1 &&
  [ "$(grep -c '^| translate |' "$WORK/load.md")" = 3 ] && [ "$(grep -c '^| completions |' "$WORK/load.md")" = 3 ]; then
  ok
  cat "$WORK/load.md"
else
  bad "bench/serve_load.py: $(tail -5 "$WORK/load.log")"
fi

# a client that disconnects cancels its work: rounds of 4 sentences at beam 4, a request of 10 × the
# training text; its client gives up after 1 s. The server logs it (499), counts it, stops after
# the round in flight (fewer rounds than the request's), and answers the next client at once.
start cancel --model "$MT@en:es" --threads 1 --beam 4 --batch-size 4 || { finish serve; exit 1; }
for _ in $(seq 10); do cat "$WORK/c/train.en"; done | jq -R . | jq -s '{q: ., source: "en", target: "es"}' > "$WORK/long.json"
long=$((10 * $(wc -l < "$WORK/c/train.en"))) # 560 rounds: about 3.5 s on an idle machine
curl -s --max-time 1 -o /dev/null -H 'Content-Type: application/json' --data-binary "@$WORK/long.json" \
  "http://127.0.0.1:$PORT/translate"
t0=$(date +%s%N)
post /translate '{"q": "In the beginning.", "source": "en", "target": "es"}'
ms=$((($(date +%s%N) - t0) / 1000000))
want "after a cancelled request" 200 '.translatedText | type == "string"'
sleep 0.3 # the cancelled request's thread notices within 50 ms; its log line follows
req GET /metrics
rounds=$(metric tfm_serve_translate_batches_total)
if [ "$(metric tfm_serve_cancelled_total)" = 1 ] && grep -q "POST /translate 499" "$WORK/cancel.log" &&
  [ -n "$rounds" ] && [ "$rounds" -lt $((long / 4)) ] && [ "$ms" -lt 3000 ]; then ok; else
  bad "cancel: cancelled $(metric tfm_serve_cancelled_total), $rounds rounds of the $((long / 4)) the request needs, next answered in $ms ms; $(tail -3 "$WORK/cancel.log")"
fi

finish serve_batch
