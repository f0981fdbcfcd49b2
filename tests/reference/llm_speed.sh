#!/usr/bin/env bash
# Speed and peak memory of `tfm generate` against transformers on the same threads (docs/LLM.md,
# issue 29 "Speed and memory"): a GPT-2 124M and a Llama of SmolLM-135M's shape, random weights
# (made once with transformers into $DIR, F32 safetensors), batch 1, greedy. For each model and
# each tool: prompt processing tokens/s, generation tokens/s, peak RSS (whole process, model load
# included; /usr/bin/time -f %M). Run it on a quiet machine (load < 1.5), after `make`:
#
#   tests/reference/llm_speed.sh                 full size (downloads nothing; ~1.1 GB of F32 files in $DIR)
#   SIZE=tiny tests/reference/llm_speed.sh       the committed fixtures instead (checks the script runs)
#
# Environment: TFM (build/tfm), PY (the transformers venv, /work/venv-hf/bin/python), DIR (where the
# random models go, data/llm-speed), THREADS (2), PROMPT_TOKENS (128), NEW (128), CLOCK (wall; cpu:
# tfm's figures from user + system CPU time instead, for a busy machine — with THREADS 1, as
# OpenMP's waiting threads also burn CPU; transformers' stay wall).
# Both tools run the prompt as one batched forward (tfm: the prefill of the KV cache, docs/LLM.md);
# tfm's prompt processing = prompt tokens / (time(1 token) − time(0 tokens)): --max-tokens 0 loads
# the model and tokenizes but runs nothing, --max-tokens 1 runs the prefill. Generation tokens/s =
# (NEW − 1) / (wall(NEW tokens) − wall(1 token)) for tfm (both whole processes); transformers
# times its own calls (min_new_tokens = NEW); tfm stops at EOS, which random weights rarely choose
# (SIZE=tiny: the trained fixtures may, so their generation figures are not meaningful). llama.cpp is not in Debian 12 or on PyPI as a CPU build we can pin: not
# compared.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
TFM=${TFM:-build/tfm}
PY=${PY:-/work/venv-hf/bin/python}
DIR=${DIR:-data/llm-speed}
THREADS=${THREADS:-2}
PROMPT_TOKENS=${PROMPT_TOKENS:-128}
NEW=${NEW:-128}
SIZE=${SIZE:-full}
export OMP_NUM_THREADS=$THREADS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$SIZE" = tiny ]; then
  models=("gpt2:tests/fixtures/gpt2" "llama:tests/fixtures/llama")
  PROMPT_TOKENS=${PROMPT_TOKENS_TINY:-16}
  NEW=${NEW_TINY:-16}
else
  mkdir -p "$DIR"
  "$PY" - "$DIR" <<'PY'
import json, os, shutil, sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
out = sys.argv[1]
fix = os.path.join("tests", "fixtures")
torch.manual_seed(0)
def save(name, model, tok_dir, tok_files):
    d = os.path.join(out, name)
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        model.save_pretrained(d, safe_serialization=True)
    for f in tok_files:  # the fixtures' small BPE: its ids fit the larger vocabularies
        shutil.copy(os.path.join(tok_dir, f), d)
    # random weights generate any id of the model's vocabulary: filler tokens ("fill123", never
    # made by a merge) give every id a text, so the generated ids decode
    tj = os.path.join(d, "tokenizer.json")
    t = json.load(open(tj, encoding="utf-8"))
    vocab = t["model"]["vocab"]
    used = set(vocab.values()) | {a["id"] for a in t.get("added_tokens", [])}
    for i in range(model.config.vocab_size):
        if i not in used:
            vocab[f"fill{i}"] = i
    json.dump(t, open(tj, "w", encoding="utf-8"), ensure_ascii=False)
    if os.path.exists(os.path.join(d, "vocab.json")):
        json.dump(vocab, open(os.path.join(d, "vocab.json"), "w", encoding="utf-8"), ensure_ascii=False)
save("gpt2-124m", GPT2LMHeadModel(GPT2Config()), os.path.join(fix, "gpt2"),
     ["vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json"])
save("smollm-135m-shape", LlamaForCausalLM(LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536,
     num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
     rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=657, eos_token_id=658)),
     os.path.join(fix, "llama"), ["tokenizer.json", "tokenizer_config.json"])
PY
  models=("gpt2-124m:$DIR/gpt2-124m" "smollm-135m-shape:$DIR/smollm-135m-shape")
fi

# a prompt of about PROMPT_TOKENS tokens of the fixtures' BPE (Bible verses)
head -c $((PROMPT_TOKENS * 3)) tests/fixtures/tok_train.txt | tr '\n' ' ' > "$work/prompt.txt"

cat > "$work/hf.py" <<'PY'
import sys, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
path, prompt, new, threads = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32).eval()
ids = tok(prompt, return_tensors="pt")["input_ids"]
with torch.no_grad():
    model(ids)  # warm-up
    t0 = time.perf_counter(); model(ids); t1 = time.perf_counter()
    out = model.generate(ids, do_sample=False, max_new_tokens=new, min_new_tokens=new,
                         pad_token_id=model.generation_config.eos_token_id)
    t2 = time.perf_counter()
n_new = out.shape[1] - ids.shape[1]
print(f"RESULT transformers prompt_tokens {ids.shape[1]} prompt_tok_s {ids.shape[1] / (t1 - t0):.1f} "
      f"gen_tok_s {n_new / (t2 - t1 - (t1 - t0)):.1f}")
PY

CLOCK=${CLOCK:-wall}
wall() { # seconds of a whole command (wall, or CPU with CLOCK=cpu), stdout/stderr discarded; peak RSS KiB into $work/rss
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M %U %S' -o "$work/time" "$@" > /dev/null 2>&1
  t1=$(date +%s.%N)
  cut -d' ' -f1 "$work/time" > "$work/rss"
  if [ "$CLOCK" = cpu ]; then
    awk '{ printf "%.3f", $2 + $3 }' "$work/time"
  else
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
  fi
}

printf '%-20s %-13s %14s %14s %12s\n' model tool "prompt tok/s" "gen tok/s" "peak RSS MiB"
for entry in "${models[@]}"; do
  name=${entry%%:*}
  path=${entry#*:}
  p=$(cat "$work/prompt.txt")
  np=$("$TFM" tokenize --encode --bpe "$path/tokenizer.json" --input "$work/prompt.txt" 2> /dev/null | wc -w || echo 0)
  t0=$(wall "$TFM" --threads "$THREADS" generate --model "$path" --prompt "$p" --max-tokens 0 --temperature 0)
  t1=$(wall "$TFM" --threads "$THREADS" generate --model "$path" --prompt "$p" --max-tokens 1 --temperature 0)
  tn=$(wall "$TFM" --threads "$THREADS" generate --model "$path" --prompt "$p" --max-tokens "$NEW" --temperature 0)
  rss=$(cat "$work/rss")
  awk -v n="$name" -v np="$np" -v t0="$t0" -v t1="$t1" -v tn="$tn" -v new="$NEW" -v rss="$rss" 'BEGIN {
      pp = (t1 - t0) > 0 ? np / (t1 - t0) : 0; g = (tn - t1) > 0 ? (new - 1) / (tn - t1) : 0
      printf "%-20s %-13s %14.1f %14.1f %12.1f\n", n, "tfm", pp, g, rss / 1024 }'
  /usr/bin/time -f %M -o "$work/rss" "$PY" "$work/hf.py" "$path" "$work/prompt.txt" "$NEW" "$THREADS" > "$work/hf.out" 2> /dev/null
  awk -v n="$name" -v rss="$(cat "$work/rss")" '/^RESULT/ {
      printf "%-20s %-13s %14.1f %14.1f %12.1f\n", n, "transformers", $6, $8, rss / 1024 }' "$work/hf.out"
done
