#!/usr/bin/python3
"""Golden files for the `shaw` position encoding (Shaw, Uszkoreit & Vaswani 2018, "Self-Attention
with Relative Position Representations"): make_golden.py's Seq2Seq with every self-attention
replaced by one with learned relative key (and value) embeddings of the clipped offset j − i,
per layer and shared by the heads (eq. 3–5), no position term at the embeddings, cross-attention
unchanged. Saved like make_golden.py (tensor names of docs/FORMATS.md plus
transformer.<stack>.layers.{i}.self_attn.rel_k.weight / rel_v.weight, (2k+1, d_k)): model, id files
with padding, logits, per-pair scores, the label-smoothed loss and every parameter's gradient.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_shaw.py
Writes tests/golden/shaw_*/{model.safetensors, src.ids, tgt.ids, logits.f32, scores.txt, loss.txt,
grads.safetensors}."""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402
from make_golden import (BOS, EOS, LABEL_SMOOTHING, OUT, PAD, Seq2Seq, pad_rows,  # noqa: E402
                         random_pairs, randomize)


class ShawSelfAttention(nn.Module):
    """nn.MultiheadAttention's parameters (packed in_proj, out_proj) plus rel_k (and rel_v):
    e_ij = q_i·(k_j + a^K_ij)/√d_k,  z_i = Σ_j α_ij (v_j + a^V_ij),  a_ij = w[clip(j − i, k) + k]."""

    def __init__(self, d, n_heads, k, values):
        super().__init__()
        self.d, self.h, self.k = d, n_heads, k
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d, d))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * d))
        self.out_proj = nn.Linear(d, d)
        self.rel_k = nn.Embedding(2 * k + 1, d // n_heads)
        self.rel_v = nn.Embedding(2 * k + 1, d // n_heads) if values else None

    def forward(self, query, key, value, attn_mask=None, key_padding_mask=None, need_weights=False, **_):
        B, L, d = query.shape
        H, dk = self.h, d // self.h
        q, k, v = nn.functional.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (x.reshape(B, L, H, dk).transpose(1, 2) for x in (q, k, v))  # (B, H, L, dk)
        pos = torch.arange(L)
        idx = (pos[None, :] - pos[:, None]).clamp(-self.k, self.k) + self.k  # (L_i, L_j)
        a_k = self.rel_k.weight[idx]  # (L, L, dk)
        scores = (q @ k.transpose(-1, -2) + torch.einsum("bhid,ijd->bhij", q, a_k)) / math.sqrt(dk)
        if attn_mask is not None:
            scores = scores + attn_mask
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        p = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a query with no key: a zero row, as in C
        z = p @ v
        if self.rel_v is not None:
            z = z + torch.einsum("bhij,ijd->bhid", p, self.rel_v.weight[idx])
        return self.out_proj(z.transpose(1, 2).reshape(B, L, d)), None


class ShawSeq2Seq(Seq2Seq):
    """Seq2Seq whose self-attentions are ShawSelfAttention; nothing added at the embeddings."""

    def __init__(self, c):
        super().__init__(c)
        for stack in (self.transformer.encoder, self.transformer.decoder):
            for layer in stack.layers:
                layer.self_attn = ShawSelfAttention(c["d_model"], c["n_heads"], c["pe_max_distance"],
                                                    c["pe_shaw_values"])

    def forward(self, src, tgt_in):
        d = self.c["d_model"]
        xs = self.src_embed(src) * math.sqrt(d)
        xt = self.tgt_embed(tgt_in) * math.sqrt(d)
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad, tgt_pad = src == PAD, tgt_in == PAD
        out = self.transformer(xs, xt, tgt_mask=causal, src_key_padding_mask=src_pad,
                               tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(out)


def write_case(name, c, lens, seed):
    gen = torch.Generator().manual_seed(seed)
    model = ShawSeq2Seq(c)
    randomize(model, gen, False)
    model.train()  # dropout is 0; training mode keeps nn.Transformer off its fused fast path
    src, tgt = random_pairs(gen, c, lens)
    S, T = pad_rows(src), pad_rows(tgt)
    logits = model(S, T[:, :-1])
    logp = torch.log_softmax(logits.double(), dim=-1)
    y = T[:, 1:]
    tok_lp = logp.gather(-1, y[..., None])[..., 0] * (y != PAD)
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="encoder-decoder", pe="shaw", pad_id=PAD, bos_id=BOS, eos_id=EOS, tie_embeddings=0,
                format="pytorch-reference")
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in src)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in tgt)
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    with open(os.path.join(d, "scores.txt"), "w") as f:
        for b in range(len(src)):
            f.write("%.6f %d\n" % (tok_lp[b].sum().item(), int((y[b] != PAD).sum())))
    lossf = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=PAD)
    model.zero_grad()
    loss = lossf(model(S, T[:, :-1]).reshape(-1, c["tgt_vocab"]), T[:, 1:].reshape(-1))
    loss.backward()
    st_io.save(os.path.join(d, "grads.safetensors"), {n: p.grad for n, p in model.named_parameters()})
    with open(os.path.join(d, "loss.txt"), "w") as f:
        f.write("%.9f\n" % loss.item())
    print(name, "B=%d S=%d T=%d k=%d values=%d loss=%.6f" % (S.shape[0], S.shape[1], T.shape[1],
                                                           c["pe_max_distance"], c["pe_shaw_values"], loss.item()))


def main():
    torch.manual_seed(0)
    base = dict(d_model=16, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=32, src_vocab=23,
                tgt_vocab=19, max_len=64, norm_first=0, activation="relu", layer_norm_eps=1e-5)
    # lengths up to 9, clipping distance 2 or 3: offsets beyond ±k share the edge rows
    lens = [(7, 9), (3, 4), (5, 9), (1, 2), (9, 6)]
    write_case("shaw_keys", dict(base, pe_max_distance=2, pe_shaw_values=0), lens, seed=11)
    write_case("shaw_values", dict(base, norm_first=1, activation="gelu", pe_max_distance=3, pe_shaw_values=1),
               lens, seed=12)


if __name__ == "__main__":
    main()
