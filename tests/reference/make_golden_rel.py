#!/usr/bin/python3
"""Golden files for the relative position encodings t5, alibi and rope (both pairings): the
PyTorch twin of src/model/pe_t5.c, pe_alibi.c and pe_rope.c.

nn.Transformer cannot rotate queries and keys, so the twin runs the parameters of make_golden.py's
Seq2Seq (the same names, docs/FORMATS.md) through a functional copy of nn.Transformer's forward with
the two position hooks of src/model/pe.h: a rotation of q and k, and an additive per-head bias on
the scores of self-attention. The copy is checked against nn.Transformer itself on the sinusoidal
encoding before any file is written. Each case has padding in source and target; the files are
those of make_golden.py minus the optimizer steps:
tests/golden/rel_<case>/{model.safetensors, src.ids, tgt.ids, logits.f32, loss.txt, grads.safetensors}.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_rel.py
With --buckets it prints T5's bucket ids for offsets −200..200 (defaults 32 / 128) as runs, the
table written into tests/unit/model/test_pe_rel.c."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402
from make_golden import (BOS, EOS, LABEL_SMOOTHING, OUT, PAD, Seq2Seq, pad_rows, random_pairs,  # noqa: E402
                         randomize, sinusoidal)


# ---- the encodings -------------------------------------------------------------------------

def t5_bucket(n, bidirectional, num_buckets, max_distance):
    """Hugging Face's T5Attention._relative_position_bucket (mesh-tensorflow's), n = key − query,
    a LongTensor; float32 arithmetic as there."""
    buckets = torch.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        buckets += (n > 0).to(torch.long) * num_buckets
        n = torch.abs(n)
    else:
        n = -torch.min(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, n, large)


def alibi_slopes(n):
    """Press et al. 2022, the paper's get_slopes."""
    def pow2(k):
        start = 2 ** (-2 ** -(math.log2(k) - 3))
        return [start * start ** i for i in range(k)]
    if math.log2(n).is_integer():
        return pow2(n)
    p = 2 ** math.floor(math.log2(n))
    return pow2(p) + alibi_slopes(2 * p)[0::2][: n - p]


def rope_rotate(x, pairing):
    """x (B, H, L, d_k) rotated by position l (Su et al. 2021, eq. 13-15), base 10000; cos/sin
    computed in float64, applied in float32."""
    L, dk = x.shape[2], x.shape[3]
    theta = 10000.0 ** (-torch.arange(0, dk // 2, dtype=torch.float64) * 2.0 / dk)
    ang = torch.arange(L, dtype=torch.float64)[:, None] * theta[None, :]
    c, s = torch.cos(ang).float(), torch.sin(ang).float()
    if pairing == "half":
        a, b = x[..., : dk // 2], x[..., dk // 2:]
        return torch.cat([a * c - b * s, a * s + b * c], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(-2)


class Encoding:
    """What a pe kind does to self-attention: bias(H, L, causal, stack) (H, L, L) or None;
    rotate(q, k) or None. Cross-attention never sees it."""

    def __init__(self, kind, c, model):
        self.kind, self.c, self.model = kind, c, model

    def bias(self, H, L, causal, stack):
        i = torch.arange(L)[:, None]
        j = torch.arange(L)[None, :]
        if self.kind == "alibi":
            m = torch.tensor(alibi_slopes(H), dtype=torch.float32)
            return -m[:, None, None] * (i - j).abs().float()[None]
        if self.kind == "t5":
            table = getattr(self.model.transformer, stack).relative_attention_bias.weight  # (nb, H)
            b = t5_bucket(j - i, not causal, self.c["pe_buckets"], self.c["pe_max_distance"])
            return table[b].permute(2, 0, 1)
        return None

    def rotate(self, q, k):
        if self.kind != "rope":
            return q, k
        return rope_rotate(q, self.c["rope_pairing"]), rope_rotate(k, self.c["rope_pairing"])


# ---- nn.Transformer, written out -----------------------------------------------------------

def mha(m, x, mem, key_pad, causal, enc, stack):
    """nn.MultiheadAttention (batch_first) with the position hooks when mem is None."""
    B, L, d = x.shape
    H = m.num_heads
    dk = d // H
    W, bW = m.in_proj_weight, m.in_proj_bias
    q = F.linear(x, W[:d], bW[:d])
    src = x if mem is None else mem
    k = F.linear(src, W[d:2 * d], bW[d:2 * d])
    v = F.linear(src, W[2 * d:], bW[2 * d:])
    S = src.shape[1]
    q, k, v = (t.reshape(B, -1, H, dk).transpose(1, 2) for t in (q, k, v))
    if mem is None:
        q, k = enc.rotate(q, k)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dk)
    if mem is None:
        bias = enc.bias(H, L, causal, stack)
        if bias is not None:
            scores = scores + bias[None]
    mask = key_pad[:, None, None, :].expand(B, H, L, S)
    if causal:
        mask = mask | torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    att = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, L, d)
    return m.out_proj(att)


def sublayer(norm, x, f, norm_first):
    return x + f(norm(x)) if norm_first else norm(x + f(x))


def forward(model, enc, src, tgt_in, pe_add):
    c = model.c
    d, nf = c["d_model"], bool(c["norm_first"])
    act = F.relu if c["activation"] == "relu" else F.gelu
    S, T = src.shape[1], tgt_in.shape[1]
    xs = model.src_embed(src) * math.sqrt(d)
    xt = model.tgt_embed(tgt_in) * math.sqrt(d)
    if pe_add:
        pe = sinusoidal(max(S, T), d)
        xs, xt = xs + pe[:S], xt + pe[:T]
    src_pad, tgt_pad = src == PAD, tgt_in == PAD
    tr = model.transformer
    x = xs
    for lay in tr.encoder.layers:
        x = sublayer(lay.norm1, x, lambda h: mha(lay.self_attn, h, None, src_pad, False, enc, "encoder"), nf)
        x = sublayer(lay.norm2, x, lambda h: lay.linear2(act(lay.linear1(h))), nf)
    memory = tr.encoder.norm(x)
    y = xt
    for lay in tr.decoder.layers:
        y = sublayer(lay.norm1, y, lambda h: mha(lay.self_attn, h, None, tgt_pad, True, enc, "decoder"), nf)
        y = sublayer(lay.norm2, y, lambda h: mha(lay.multihead_attn, h, memory, src_pad, False, enc, None), nf)
        y = sublayer(lay.norm3, y, lambda h: lay.linear2(act(lay.linear1(h))), nf)
    return model.generator(tr.decoder.norm(y))


# ---- the cases -----------------------------------------------------------------------------

BASE = dict(d_model=16, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=32, src_vocab=23, tgt_vocab=19,
            max_len=64, norm_first=0, activation="relu", layer_norm_eps=1e-5)
LENS = [(7, 9), (3, 4), (5, 9), (1, 2), (6, 6)]


def check_twin():
    """The written-out forward equals nn.Transformer (sinusoidal, both norm placements)."""
    for nf, act in ((0, "relu"), (1, "gelu")):
        c = dict(BASE, norm_first=nf, activation=act)
        gen = torch.Generator().manual_seed(5)
        model = Seq2Seq(c)
        randomize(model, gen, False)
        model.eval()
        src, tgt = random_pairs(gen, c, LENS)
        S, T = pad_rows(src), pad_rows(tgt)[:, :-1]
        want = model(S, T)
        got = forward(model, Encoding("sinusoidal", c, model), S, T, True)
        err = (want - got).abs().max().item()
        assert err < 1e-5, "the written-out transformer differs from nn.Transformer by %g" % err


def write_case(name, kind, c, seed):
    gen = torch.Generator().manual_seed(seed)
    model = Seq2Seq(c)
    if kind == "t5":  # one table (n_buckets, n_heads) per stack, under the stack's prefix
        for stack in (model.transformer.encoder, model.transformer.decoder):
            stack.relative_attention_bias = nn.Embedding(c["pe_buckets"], c["n_heads"])
    randomize(model, gen, False)
    model.eval()
    enc = Encoding(kind, c, model)
    src, tgt = random_pairs(gen, c, LENS)
    S, T = pad_rows(src), pad_rows(tgt)
    lossf = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=PAD)
    model.zero_grad()
    logits = forward(model, enc, S, T[:, :-1], False)
    loss = lossf(logits.reshape(-1, c["tgt_vocab"]), T[:, 1:].reshape(-1))
    loss.backward()
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="encoder-decoder", pe=kind, pad_id=PAD, bos_id=BOS, eos_id=EOS, format="pytorch-reference")
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in src)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in tgt)
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    with open(os.path.join(d, "loss.txt"), "w") as f:
        f.write("%.9f\n" % loss.item())
    st_io.save(os.path.join(d, "grads.safetensors"), {n: p.grad for n, p in model.named_parameters()})
    print(name, "loss=%.6f" % loss.item())


def bucket_runs(bidirectional):
    """T5's bucket ids (32 buckets, max distance 128) of offsets −200..200 as runs (first, last, id)."""
    n = torch.arange(-200, 201)
    b = t5_bucket(n, bidirectional, 32, 128).tolist()
    runs, start = [], 0
    for i in range(1, len(b) + 1):
        if i == len(b) or b[i] != b[start]:
            runs.append((start - 200, i - 1 - 200, b[start]))
            start = i
    return runs


def main():
    if "--buckets" in sys.argv:
        for bidir in (True, False):
            print("bidirectional" if bidir else "causal")
            print(", ".join("{%d, %d, %d}" % r for r in bucket_runs(bidir)))
        print("alibi 6 heads:", alibi_slopes(6))
        return
    torch.manual_seed(0)
    check_twin()
    # t5: few buckets and a short maximum distance, so these short sentences reach the log buckets
    write_case("rel_t5", "t5", dict(BASE, pe_buckets=8, pe_max_distance=20), seed=11)
    # alibi: 6 heads (not a power of two; d_k = 2), pre-LN GELU
    write_case("rel_alibi", "alibi", dict(BASE, d_model=12, n_heads=6, d_ff=24, norm_first=1, activation="gelu"),
               seed=12)
    for pairing, seed in (("interleaved", 13), ("half", 14)):  # d_k = 8: four pairs per head, per pairing
        write_case("rel_rope_" + pairing, "rope", dict(BASE, n_heads=2, rope_pairing=pairing), seed=seed)


if __name__ == "__main__":
    main()
