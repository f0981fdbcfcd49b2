#!/usr/bin/env python3
"""Golden data for the Hugging Face decoder-only language models (GPT-2, Llama; docs/LLM.md): small
models made with transformers, briefly trained, saved as a user downloads them, and what
transformers computes with them.

Pinned (never needed by the product, CI or the C tests: the outputs are committed):
    transformers 4.40.2, tokenizers 0.19.1, torch 1.13 (Debian 12's python3-torch), safetensors,
    numpy < 2 — e.g. the venv /work/venv-hf of the development machine.
Run from the repository root:
    /work/venv-hf/bin/python tests/reference/make_llm_golden.py

Models (random initialisation, seed fixed, then 300 AdamW steps on tests/fixtures/tok_train.txt,
each line as [BOS] + ids + [EOS], so that logits are not near-ties and EOS is learnt):
  tests/fixtures/gpt2/        GPT2LMHeadModel: n_embd 48, 2 layers, 4 heads, n_positions 128,
                              layer_norm_epsilon 1e-5, gelu_new; tokenizer: the byte-level BPE of
                              tests/fixtures/bpe (vocab.json + merges.txt, GPT-2's setup), 657 ids,
                              "<|endoftext|>" (id 0) BOS = EOS = UNK; no BOS added when encoding.
  tests/fixtures/llama/       LlamaForCausalLM, untied lm_head: hidden 32, 2 layers, 4 heads,
                              2 KV heads (grouped-query attention), intermediate 64, rope_theta
                              50000, rms_norm_eps 1e-6, no biases; tokenizer tests/fixtures/bpe/
                              llama3.json (Llama-3's setup: BOS <|begin_of_text|> 657 added by the
                              template, EOS <|end_of_text|> 658), 659 ids.
  tests/fixtures/llama_tied/  the same family, tied embeddings, 1 KV head (multi-query),
                              attention_bias true, rope_theta 500000, rms_norm_eps 1e-5.
  tests/fixtures/qwen2/       Qwen2ForCausalLM, tied: hidden 32, 2 layers, 4 heads, 2 KV heads,
                              intermediate 64, rope_theta 1e6, rms_norm_eps 1e-6, biases on q/k/v
                              (none on o_proj), use_sliding_window false (sliding_window 128,
                              max_window_layers 2, as Qwen2's own configs); tokenizer tests/fixtures/
                              bpe/qwen2.json (Qwen2's setup: no BOS added, <|endoftext|> 0 is BOS
                              and EOS), 662 ids.
  tests/fixtures/mistral/     MistralForCausalLM, untied: hidden 32, 2 layers, 4 heads, 1 KV head,
                              intermediate 64, rope_theta 1e6, rms_norm_eps 1e-5, sliding_window
                              null (Mistral v0.2's); tokenizer llama3.json as the llama folder.
Each folder: config.json, model.safetensors (save_pretrained(safe_serialization=True)),
generation_config.json, tokenizer files (save_pretrained of the tokenizer: tokenizer.json,
tokenizer_config.json, special_tokens_map.json, and for GPT-2 vocab.json + merges.txt).

References, tests/golden/hf_<name>/ for name in gpt2, llama, llama_tied:
  prompts.txt     the prompts (one a line)
  prompt_ids.txt  the ids the tokenizer gives each prompt (tokenizer(prompt), its template)
  logits.f32      for each prompt in order, the logits of every position (T_i, V) as little-endian
                  float32, from model(ids).logits
  greedy.txt      for each prompt, model.generate(ids, do_sample=False, max_new_tokens=MAX_NEW)
                  decoded whole with skip_special_tokens=True, one a line
  greedy_ids.txt  the generated ids (without the prompt), one line per prompt
  perplexity.txt  "perplexity P nll_per_token X tokens N lines L" of tests/golden/hf_lm_ppl.txt:
                  each non-blank line encoded by the tokenizer (its template), model(ids,
                  labels=ids).loss (every token after the first predicted), summed over lines:
                  P = exp(Σ loss_i·(n_i − 1) / Σ (n_i − 1)).
  VERSIONS        the versions used.
Low precision (tfm widens BF16 / F16 weights to F32 at load): tests/fixtures/llama_bf16 and
gpt2_f16 are the llama and gpt2 folders with their weights converted (model.to(dtype),
save_pretrained), and tests/golden/hf_<name>/{prompt_ids.txt, logits.f32} the logits transformers
gives loading them back with torch_dtype=float32. `--lowp-only` remakes only these from the
committed float32 folders. `--only NAME,...` makes only the named float32 families (gpt2, llama,
llama_tied, qwen2, mistral) and no low-precision folder: the others' bytes stay as committed.
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import tokenizers
import torch
import transformers
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast, LlamaConfig,
                          LlamaForCausalLM, MistralConfig, MistralForCausalLM, PreTrainedTokenizerFast, Qwen2Config,
                          Qwen2ForCausalLM)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
FIX = os.path.join(ROOT, "tests", "fixtures")
GOLD = os.path.join(ROOT, "tests", "golden")
BPE = os.path.join(FIX, "bpe")

MAX_NEW = 24
STEPS = 300
PROMPTS = [
    "In the beginning",
    "And the king said to",
    "Then Jesus answered them,",
    "The LORD is my",
    "emoji 😀 and 中文 with   spaces",
]


def train_lines():
    with open(os.path.join(FIX, "tok_train.txt"), encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def train(model, tok, bos, eos, seed):
    """STEPS AdamW steps of batches of 16 lines, each [bos?] + ids + [eos], cut at 64 tokens."""
    torch.manual_seed(seed)
    seqs = []
    for line in train_lines():
        ids = tok(line, add_special_tokens=False)["input_ids"]
        seq = ([bos] if bos is not None else []) + ids + [eos]
        seqs.append(seq[:64])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    model.train()
    g = torch.Generator().manual_seed(seed)
    for step in range(STEPS):
        idx = torch.randint(len(seqs), (16,), generator=g).tolist()
        batch = [seqs[i] for i in idx]
        T = max(len(s) for s in batch)
        ids = torch.full((16, T), eos, dtype=torch.long)
        labels = torch.full((16, T), -100, dtype=torch.long)
        mask = torch.zeros((16, T), dtype=torch.long)
        for b, s in enumerate(batch):
            ids[b, :len(s)] = torch.tensor(s)
            labels[b, :len(s)] = torch.tensor(s)
            mask[b, :len(s)] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == STEPS - 1:
            print(f"  step {step} loss {loss.item():.3f}")
    model.eval()


def references(name, model, tok):
    out = os.path.join(GOLD, "hf_" + name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "prompts.txt"), "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in PROMPTS))
    logits_all, pid_lines, greedy, greedy_ids = [], [], [], []
    with torch.no_grad():
        for p in PROMPTS:
            ids = tok(p, return_tensors="pt")["input_ids"]
            pid_lines.append(" ".join(str(i) for i in ids[0].tolist()))
            logits_all.append(model(ids).logits[0].float().numpy())
            eos = model.generation_config.eos_token_id
            gen = model.generate(ids, do_sample=False, max_new_tokens=MAX_NEW,
                                 pad_token_id=eos[0] if isinstance(eos, list) else eos)
            new = gen[0, ids.shape[1]:].tolist()
            greedy_ids.append(" ".join(str(i) for i in new))
            greedy.append(tok.decode(gen[0], skip_special_tokens=True).replace("\n", " "))
    np.concatenate(logits_all, axis=0).astype("<f4").tofile(os.path.join(out, "logits.f32"))
    for fname, lines in (("prompt_ids.txt", pid_lines), ("greedy.txt", greedy), ("greedy_ids.txt", greedy_ids)):
        with open(os.path.join(out, fname), "w", encoding="utf-8") as f:
            f.write("".join(l + "\n" for l in lines))
    # perplexity of the fixture file, line by line as the tokenizer encodes each
    nll, count, nlines = 0.0, 0, 0
    with open(os.path.join(GOLD, "hf_lm_ppl.txt"), encoding="utf-8") as f:
        text_lines = [l.rstrip("\n") for l in f]
    with torch.no_grad():
        for line in text_lines:
            if not line.strip():
                continue
            ids = tok(line, return_tensors="pt")["input_ids"]
            nlines += 1
            n = ids.shape[1] - 1
            if n <= 0:
                continue
            loss = model(ids, labels=ids).loss.double().item()
            nll += loss * n
            count += n
    with open(os.path.join(out, "perplexity.txt"), "w") as f:
        f.write(f"perplexity {math.exp(nll / count):.9g} nll_per_token {nll / count:.9g} tokens {count} lines {nlines}\n")
    with open(os.path.join(out, "VERSIONS"), "w") as f:
        f.write(f"transformers {transformers.__version__}\ntokenizers {tokenizers.__version__}\ntorch {torch.__version__}\n")
    print(f"  {name}: greedy {greedy[0]!r}; perplexity {math.exp(nll / count):.4f}")


def save(name, model, tok):
    d = os.path.join(FIX, name)
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    tok.save_pretrained(d)


def make_gpt2():
    tok = GPT2TokenizerFast(vocab_file=os.path.join(BPE, "vocab.json"), merges_file=os.path.join(BPE, "merges.txt"),
                            unk_token="<|endoftext|>", bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=48, n_layer=2, n_head=4, bos_token_id=eos,
                     eos_token_id=eos, activation_function="gelu_new", layer_norm_epsilon=1e-5,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(1)
    model = GPT2LMHeadModel(cfg)
    train(model, tok, None, eos, 1)
    model.generation_config = GenerationConfig(bos_token_id=eos, eos_token_id=eos)
    save("gpt2", model, tok)
    references("gpt2", model, tok)


def llama3_json(name="llama3.json"):
    """bpe/<name> with its merges as "a b" strings: tokenizers 0.19 reads no ["a", "b"] pairs (the
    same merges: a byte-level token never holds a space)."""
    with open(os.path.join(BPE, name), encoding="utf-8") as f:
        d = json.load(f)
    d["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in d["model"]["merges"]]
    path = os.path.join(GOLD, "llama3_merges_as_strings.json.tmp")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
    return path


def make_llama(name, tied, kv_heads, theta, eps, attn_bias, seed, family="llama"):
    """A Llama-family model: family llama (attention_bias as given), qwen2 (biases on q/k/v: Qwen2's
    block; tokenizer qwen2.json) or mistral (no biases, sliding_window null)."""
    tokfile, bos_tok, eos_tok = ("qwen2.json", None, "<|endoftext|>") if family == "qwen2" else \
        ("llama3.json", "<|begin_of_text|>", "<|end_of_text|>")
    tmp = llama3_json(tokfile)
    tok = PreTrainedTokenizerFast(tokenizer_file=tmp, bos_token=bos_tok, eos_token=eos_tok)
    os.remove(tmp)
    eos = tok.convert_tokens_to_ids(eos_tok)
    bos = tok.convert_tokens_to_ids(bos_tok) if bos_tok else eos  # Qwen2: bos_token_id = eos, never added
    common = dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=kv_heads, max_position_embeddings=128,
                  rope_theta=theta, rms_norm_eps=eps, tie_word_embeddings=tied,
                  bos_token_id=bos, eos_token_id=eos, hidden_act="silu")
    if family == "qwen2":
        cfg, cls = Qwen2Config(use_sliding_window=False, sliding_window=128, max_window_layers=2, **common), Qwen2ForCausalLM
    elif family == "mistral":
        cfg, cls = MistralConfig(sliding_window=None, **common), MistralForCausalLM
    else:
        cfg, cls = LlamaConfig(attention_bias=attn_bias, **common), LlamaForCausalLM
    torch.manual_seed(seed)
    model = cls(cfg)
    if attn_bias:  # nn.Linear's biases start at 0 in Llama's init: give them values that matter
        with torch.no_grad():
            for n, p in model.named_parameters():
                if n.endswith("proj.bias"):
                    p.normal_(0.0, 0.1)
    train(model, tok, bos if bos_tok else None, eos, seed)
    model.generation_config = GenerationConfig(bos_token_id=bos, eos_token_id=eos)
    save(name, model, tok)
    references(name, model, tok)


def make_lowp(src, name, dtype):
    """The folder `src` with its weights converted to `dtype` (save_pretrained writes BF16 / F16
    tensors), and the logits transformers gives when it loads that folder back in float32 (the
    weights widened exactly, as tfm does at load)."""
    d = os.path.join(FIX, name)
    shutil.rmtree(d, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(FIX, src)).to(dtype)
    model.save_pretrained(d, safe_serialization=True)
    AutoTokenizer.from_pretrained(os.path.join(FIX, src)).save_pretrained(d)
    model = AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(d)
    out = os.path.join(GOLD, "hf_" + name)
    os.makedirs(out, exist_ok=True)
    logits_all, pid_lines = [], []
    with torch.no_grad():
        for p in PROMPTS:
            ids = tok(p, return_tensors="pt")["input_ids"]
            pid_lines.append(" ".join(str(i) for i in ids[0].tolist()))
            logits_all.append(model(ids).logits[0].float().numpy())
    np.concatenate(logits_all, axis=0).astype("<f4").tofile(os.path.join(out, "logits.f32"))
    with open(os.path.join(out, "prompt_ids.txt"), "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in pid_lines))
    print(f"  {name}: {dtype} weights")


FAMILIES = {
    "gpt2": make_gpt2,
    "llama": lambda: make_llama("llama", tied=False, kv_heads=2, theta=50000.0, eps=1e-6, attn_bias=False, seed=2),
    "llama_tied": lambda: make_llama("llama_tied", tied=True, kv_heads=1, theta=500000.0, eps=1e-5, attn_bias=True, seed=3),
    "qwen2": lambda: make_llama("qwen2", tied=True, kv_heads=2, theta=1e6, eps=1e-6, attn_bias=True, seed=4, family="qwen2"),
    "mistral": lambda: make_llama("mistral", tied=False, kv_heads=1, theta=1e6, eps=1e-5, attn_bias=False, seed=5,
                                  family="mistral"),
}


def main():
    torch.set_num_threads(1)
    if "--only" in sys.argv:
        for name in sys.argv[sys.argv.index("--only") + 1].split(","):
            FAMILIES[name]()
        return
    if "--lowp-only" not in sys.argv:  # the float32 models (the low-precision ones are made from them)
        for name in ("gpt2", "llama", "llama_tied"):
            FAMILIES[name]()
    make_lowp("llama", "llama_bf16", torch.bfloat16)
    make_lowp("gpt2", "gpt2_f16", torch.float16)


if __name__ == "__main__":
    main()
