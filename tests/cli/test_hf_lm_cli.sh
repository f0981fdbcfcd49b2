#!/usr/bin/env bash
# tfm generate / tfm perplexity on Hugging Face language-model folders (docs/LLM.md): the GPT-2, the
# two Llama, the Qwen2 and the Mistral fixtures of tests/reference/make_llm_golden.py (transformers 4.40.2). Greedy text equals
# transformers' generate(do_sample=False) on every fixture prompt (streamed, with and without the
# KV cache); perplexity of tests/golden/hf_lm_ppl.txt within 1e-4 of transformers' loss; sampling
# is reproducible for a seed and --top-k 1 is greedy; and each kind of bad folder is one clear
# error naming the file or tensor: missing merges, unknown model_type, key/value heads that do not
# divide the heads, a misshaped tensor, rope_scaling, a missing tensor, an unexpected one, a
# sliding window that binds (Qwen2's use_sliding_window, Mistral's sliding_window; one that cannot
# bind is accepted), an o_proj bias under a Qwen2 config; a list of EOS ids stops at any.
source "$(dirname "$0")/lib.sh"
ROOT=${TFM_SOURCE_DIR:-.}
export OMP_NUM_THREADS=2

for name in gpt2 llama llama_tied qwen2 mistral; do
  M="$ROOT/tests/fixtures/$name"
  G="$ROOT/tests/golden/hf_$name"
  : > "$WORK/$name.greedy"
  : > "$WORK/$name.nocache"
  while IFS= read -r p; do
    "$TFM" generate --model "$M" --prompt "$p" --temperature 0 --max-tokens 24 >> "$WORK/$name.greedy" 2> "$WORK/gen.log" ||
      bad "$name: generate '$p': $(cat "$WORK/gen.log")"
    "$TFM" generate --model "$M" --prompt "$p" --temperature 0 --max-tokens 24 --no-kv-cache >> "$WORK/$name.nocache" 2> /dev/null
  done < "$G/prompts.txt"
  cmp -s "$WORK/$name.greedy" "$G/greedy.txt" && ok || bad "$name: greedy text differs from transformers: $(diff "$WORK/$name.greedy" "$G/greedy.txt" | head -4)"
  cmp -s "$WORK/$name.nocache" "$G/greedy.txt" && ok || bad "$name: greedy without the KV cache differs from transformers"
  read -r _ ppl _ nll _ tok _ lines _ < <("$TFM" perplexity --model "$M" --text "$ROOT/tests/golden/hf_lm_ppl.txt" 2> /dev/null)
  read -r _ want _ want_nll _ want_tok _ want_lines < "$G/perplexity.txt"
  awk -v a="$ppl" -v b="$want" -v x="$nll" -v y="$want_nll" 'BEGIN { d = a - b; e = x - y;
      exit !(d < 1e-4 * b && -d < 1e-4 * b && e < 1e-5 && -e < 1e-5) }' && [ "$tok" = "$want_tok" ] && [ "$lines" = "$want_lines" ] && ok ||
    bad "$name: perplexity $ppl nll $nll tokens $tok lines $lines, transformers $want $want_nll $want_tok $want_lines"
  # sampling: the same seed gives the same text; --top-k 1 is greedy
  S=(--model "$M" --prompt "In the beginning" --max-tokens 16 --temperature 0.9 --top-p 0.95)
  a=$("$TFM" generate "${S[@]}" --seed 5 2> /dev/null); b=$("$TFM" generate "${S[@]}" --seed 5 2> /dev/null)
  [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$name: sampling with a seed is not reproducible: '$a' vs '$b'"
  k1=$("$TFM" generate --model "$M" --prompt "In the beginning" --max-tokens 24 --temperature 1 --top-k 1 2> /dev/null)
  [ "$k1" = "$(head -1 "$G/greedy.txt")" ] && ok || bad "$name: --top-k 1 is not greedy: '$k1'"
done
# an empty prompt starts from BOS (transformers' generate without input ids)
"$TFM" generate --model "$ROOT/tests/fixtures/gpt2" --temperature 0 --max-tokens 5 > /dev/null 2>&1 && ok || bad "gpt2: empty prompt"

# ---- bad folders: one clear error each ----
badcopy() { rm -rf "$WORK/bad"; cp -r "$ROOT/tests/fixtures/$1" "$WORK/bad"; }
GEN=("$TFM" generate --model "$WORK/bad" --prompt "In the" --max-tokens 2)

badcopy gpt2; rm "$WORK/bad/tokenizer.json" "$WORK/bad/merges.txt"
expect_fail "gpt2 without merges" 1 "vocab.json without merges.txt" "${GEN[@]}"

badcopy llama; sed -i 's/"model_type": "llama"/"model_type": "mamba"/' "$WORK/bad/config.json"
expect_fail "unknown model_type" 1 "config.json: model_type 'mamba' is not supported" "${GEN[@]}"

badcopy llama; sed -i 's/"num_key_value_heads": 2/"num_key_value_heads": 3/' "$WORK/bad/config.json"
expect_fail "kv heads that do not divide the heads" 1 "config.json: num_key_value_heads 3 must divide num_attention_heads 4" "${GEN[@]}"

badcopy llama; sed -i 's/"intermediate_size": 64/"intermediate_size": 80/' "$WORK/bad/config.json"
expect_fail "misshaped tensor" 1 "model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight' has shape [64, 32], expected [80, 32]" "${GEN[@]}"

badcopy llama; sed -i 's/"rope_scaling": null/"rope_scaling": {"type": "linear", "factor": 2.0}/' "$WORK/bad/config.json"
expect_fail "rope_scaling" 1 "config.json: rope_scaling is not supported" "${GEN[@]}"

badcopy llama; sed -i 's/"num_hidden_layers": 2/"num_hidden_layers": 3/' "$WORK/bad/config.json"
expect_fail "a missing tensor" 1 "tensor 'model.layers.2.input_layernorm.weight' is missing" "${GEN[@]}"

badcopy llama; sed -i 's/"num_hidden_layers": 2/"num_hidden_layers": 1/' "$WORK/bad/config.json"
expect_fail "an unexpected tensor" 1 "unexpected tensor 'model.layers.1." "${GEN[@]}"

badcopy gpt2; sed -i 's/"activation_function": "gelu_new"/"activation_function": "swish"/' "$WORK/bad/config.json"
expect_fail "unknown activation" 1 "activation_function 'swish' is not supported" "${GEN[@]}"

badcopy llama; rm "$WORK/bad/tokenizer.json"
expect_fail "no tokenizer" 1 "no tokenizer: a Hugging Face language model folder holds tokenizer.json" "${GEN[@]}"
# sliding windows: refused where they bind within max_position_embeddings (128), accepted where not
badcopy qwen2; sed -i 's/"use_sliding_window": false/"use_sliding_window": true/; s/"sliding_window": 128/"sliding_window": 64/' "$WORK/bad/config.json"
expect_fail "qwen2 sliding window" 1 "config.json: sliding-window attention (sliding_window 64 < max_position_embeddings 128, use_sliding_window true) is not supported" "${GEN[@]}"
sed -i 's/"max_window_layers": 2/"max_window_layers": 0/' "$WORK/bad/config.json"
"${GEN[@]}" > /dev/null 2>&1 && ok || bad "qwen2: use_sliding_window with max_window_layers 0 (no layer windowed) is refused"
badcopy qwen2; sed -i 's/"sliding_window": 128/"sliding_window": 64/' "$WORK/bad/config.json"
"${GEN[@]}" > /dev/null 2>&1 && ok || bad "qwen2: sliding_window with use_sliding_window false is refused"
badcopy mistral; sed -i 's/"sliding_window": null/"sliding_window": 64/' "$WORK/bad/config.json"
expect_fail "mistral sliding window" 1 "config.json: sliding-window attention (sliding_window 64 < max_position_embeddings 128) is not supported" "${GEN[@]}"
sed -i 's/"sliding_window": 64/"sliding_window": 128/' "$WORK/bad/config.json"
"${GEN[@]}" > /dev/null 2>&1 && ok || bad "mistral: sliding_window 128 = max_position_embeddings (never binds) is refused"

# Qwen2 has no o_proj bias: llama_tied's file (attention_bias: q, k, v and o) under a Qwen2 config
badcopy llama_tied; sed -i 's/"model_type": "llama"/"model_type": "qwen2"/' "$WORK/bad/config.json"
expect_fail "qwen2 with an o_proj bias" 1 "unexpected tensor 'model.layers.0.self_attn.o_proj.bias'" "${GEN[@]}"
# several EOS ids (generation_config.json's eos_token_id list, Llama-3's [128001, 128009]): greedy
# stops at any; 336 (" “") is the 6th greedy id of the first prompt (golden greedy_ids.txt), so the
# text is transformers' greedy text up to it (tfm prints no EOS token; transformers would decode a
# non-special one)
badcopy qwen2; printf '{"bos_token_id": 0, "eos_token_id": [0, 336]}\n' > "$WORK/bad/generation_config.json"
[ "$(head -1 "$ROOT/tests/golden/hf_qwen2/greedy_ids.txt" | cut -d' ' -f6)" = 336 ] || bad "qwen2 greedy ids changed: pick another second EOS"
got=$("$TFM" generate --model "$WORK/bad" --prompt "In the beginning" --temperature 0 --max-tokens 24 2> /dev/null)
[ "$got" = "In the beginning, and he said," ] && ok || bad "two EOS ids in generation_config.json: '$got'"
rm "$WORK/bad/generation_config.json"; sed -i 's/"eos_token_id": 0/"eos_token_id": [0, 336]/' "$WORK/bad/config.json"
got=$("$TFM" generate --model "$WORK/bad" --prompt "In the beginning" --temperature 0 --max-tokens 24 2> /dev/null)
[ "$got" = "In the beginning, and he said," ] && ok || bad "two EOS ids in config.json: '$got'"
printf '{"eos_token_id": 0}\n' > "$WORK/bad/generation_config.json" # replaces config.json's list whole
got=$("$TFM" generate --model "$WORK/bad" --prompt "In the beginning" --temperature 0 --max-tokens 24 2> /dev/null)
[ "$got" = "$(head -1 "$ROOT/tests/golden/hf_qwen2/greedy.txt")" ] && ok || bad "generation_config.json's one EOS id does not replace config.json's list: '$got'"
printf '{"eos_token_id": [0, 1, 2, 3, 4, 5, 6, 7, 8]}\n' > "$WORK/bad/generation_config.json"
expect_fail "nine EOS ids" 1 "generation_config.json: 'eos_token_id' lists 9 ids: tfm stops at 8 at most" "${GEN[@]}"
finish hf_lm_cli
