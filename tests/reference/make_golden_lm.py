#!/usr/bin/python3
"""Golden files for arch = decoder-only (docs/LM.md): the PyTorch twin of a GPT-style language
model as src/model/stack_desc.c describes it — one causal stack over the target ids, named
transformer.decoder (nn.TransformerEncoderLayer blocks: self_attn, linear1/2, norm1/2), its final
LayerNorm transformer.decoder.norm, tgt_embed.weight (× √d_model) and the generator.

The forward is written out (make_golden_rel.py's mha/sublayer/Encoding, so relative encodings hook
into self-attention as in C) and checked against a causal nn.TransformerEncoder on the sinusoidal
encoding before any file is written. Each case is a padded batch of rows BOS ... EOS; the loss is
the label-smoothed cross-entropy of make_golden.py (mean over non-pad targets).
Writes tests/golden/lm_<case>/{model.safetensors, src.ids (empty lines: no source), tgt.ids,
logits.f32, loss.txt, grads.safetensors}.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_lm.py"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402
from make_golden import BOS, EOS, LABEL_SMOOTHING, OUT, PAD, pad_rows, sinusoidal  # noqa: E402
from make_golden_rel import Encoding, mha, sublayer  # noqa: E402


class LM(nn.Module):
    """Embedding, a causal stack of nn.TransformerEncoderLayer with its final norm, generator."""

    def __init__(self, c, tie):
        super().__init__()
        self.c = c
        d = c["d_model"]
        self.tgt_embed = nn.Embedding(c["tgt_vocab"], d)
        self.transformer = nn.Module()
        layer = nn.TransformerEncoderLayer(d, c["n_heads"], c["d_ff"], dropout=0.0, activation=c["activation"],
                                           layer_norm_eps=c["layer_norm_eps"], batch_first=True,
                                           norm_first=bool(c["norm_first"]))
        self.transformer.decoder = nn.TransformerEncoder(layer, c["n_dec_layers"],
                                                         norm=nn.LayerNorm(d, eps=c["layer_norm_eps"]),
                                                         enable_nested_tensor=False)
        if c["pe"] == "learned":
            self.transformer.decoder.pos_embed = nn.Embedding(c["max_len"], d)
        if c["pe"] == "t5":
            self.transformer.decoder.relative_attention_bias = nn.Embedding(c["pe_buckets"], c["n_heads"])
        self.generator = nn.Linear(d, c["tgt_vocab"])
        self.tie = tie

    def randomize(self, gen):
        """Random weights everywhere (biases and LayerNorm parameters non-trivial), as make_golden."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "norm" in name and name.endswith("weight"):
                    p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
                elif name.endswith("bias") and "relative_attention_bias" not in name:
                    p.copy_(0.2 * torch.randn(p.shape, generator=gen))
                elif "embed" in name or "relative_attention_bias" in name:
                    p.copy_(0.5 * torch.randn(p.shape, generator=gen))
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))
        if self.tie:  # one shared Parameter: its gradient is the sum of both uses
            self.generator.weight = self.tgt_embed.weight


def forward(model, ids):
    """Logits (B, T, V) of ids (B, T): x0 = E[ids]·√d (+ absolute PE), causal blocks, norm, generator."""
    c = model.c
    d, nf = c["d_model"], bool(c["norm_first"])
    act = F.relu if c["activation"] == "relu" else F.gelu
    T = ids.shape[1]
    x = model.tgt_embed(ids) * math.sqrt(d)
    if c["pe"] == "sinusoidal":
        x = x + sinusoidal(T, d)
    elif c["pe"] == "learned":
        x = x + model.transformer.decoder.pos_embed.weight[:T]
    enc = Encoding(c["pe"], c, model)
    pad = ids == PAD
    for lay in model.transformer.decoder.layers:
        x = sublayer(lay.norm1, x, lambda h: mha(lay.self_attn, h, None, pad, True, enc, "decoder"), nf)
        x = sublayer(lay.norm2, x, lambda h: lay.linear2(act(lay.linear1(h))), nf)
    return model.generator(model.transformer.decoder.norm(x))


BASE = dict(d_model=16, n_heads=4, n_enc_layers=0, n_dec_layers=2, d_ff=32, src_vocab=19, tgt_vocab=19,
            max_len=32, norm_first=1, activation="gelu", layer_norm_eps=1e-5, pe="sinusoidal")
LENS = [9, 4, 7, 2, 6]  # whole rows, BOS and EOS included: padding in every row but the first


def random_rows(gen, c):
    return [[BOS] + torch.randint(3, c["tgt_vocab"], (n - 2,), generator=gen).tolist() + [EOS] for n in LENS]


def check_twin():
    """The written-out forward equals a causal nn.TransformerEncoder (sinusoidal, both norms)."""
    for nf, act in ((0, "relu"), (1, "gelu")):
        c = dict(BASE, norm_first=nf, activation=act)
        gen = torch.Generator().manual_seed(5)
        model = LM(c, False)
        model.randomize(gen)
        model.eval()
        ids = pad_rows(random_rows(gen, c))[:, :-1]
        T = ids.shape[1]
        x = model.tgt_embed(ids) * math.sqrt(c["d_model"]) + sinusoidal(T, c["d_model"])
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        want = model.generator(model.transformer.decoder(x, mask=causal, src_key_padding_mask=ids == PAD))
        got = forward(model, ids)
        rows = ids != PAD  # nn.TransformerEncoder's fast path may zero padded rows; compare the real ones
        err = (want - got)[rows].abs().max().item()
        assert err < 1e-5, "the written-out LM differs from nn.TransformerEncoder by %g" % err


def write_case(name, c, seed, tie):
    gen = torch.Generator().manual_seed(seed)
    model = LM(c, tie)
    model.randomize(gen)
    model.eval()
    rows = random_rows(gen, c)
    T = pad_rows(rows)
    lossf = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=PAD)
    model.zero_grad()
    logits = forward(model, T[:, :-1])
    loss = lossf(logits.reshape(-1, c["tgt_vocab"]), T[:, 1:].reshape(-1))
    loss.backward()
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="decoder-only", pad_id=PAD, bos_id=BOS, eos_id=EOS, tie_embeddings=int(tie),
                format="pytorch-reference")
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines("\n" for _ in rows)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in rows)
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    with open(os.path.join(d, "loss.txt"), "w") as f:
        f.write("%.9f\n" % loss.item())
    grads = {n: p.grad for n, p in model.named_parameters()}
    named = {k: grads[k] if k in grads else grads["tgt_embed.weight"] for k in model.state_dict()}
    st_io.save(os.path.join(d, "grads.safetensors"), named)
    print(name, "loss=%.6f" % loss.item())


def main():
    torch.manual_seed(0)
    check_twin()
    # the decoder-only defaults: pre-LN, tied, sinusoidal
    write_case("lm_pre_tied", BASE, seed=21, tie=True)
    # post-LN ReLU, untied, learned positions (GPT-2's kind)
    write_case("lm_post_learned", dict(BASE, norm_first=0, activation="relu", pe="learned"), seed=22, tie=False)
    # relative encodings in a causal-only model: rope (half pairing) and t5 (causal buckets)
    write_case("lm_rope", dict(BASE, n_heads=2, pe="rope", rope_pairing="half"), seed=23, tie=True)
    write_case("lm_t5", dict(BASE, pe="t5", pe_buckets=8, pe_max_distance=20), seed=24, tie=True)


if __name__ == "__main__":
    main()
