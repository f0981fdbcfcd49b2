#!/usr/bin/python3
"""Golden files for the FLOATER position encoding (pe = floater; docs/POSITION.md "floater"): a
small nn.Transformer encoder-decoder whose positions are p(pos*DELTA) for dp/dt = h(t, p), h an MLP
W2*tanh(W1*[p; t] + b1) + b2, integrated by the same fixed-step classic RK4 as src/ops/ode_rk4.c
(one step per DELTA, float32, stage times t_i = i*DELTA, t_i + DELTA/2, t_i + DELTA), one network
and p(0) per side. Autograd differentiates through the RK4 steps, which is what the C backward
computes by hand.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_floater.py
Writes tests/golden/floater/{model.safetensors, src.ids, tgt.ids, logits.f32, scores.txt, loss.txt,
grads.safetensors, table_src.f32}. The C test (tests/unit/model/test_floater.c) needs no Python."""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402
from make_golden import BOS, EOS, LABEL_SMOOTHING, OUT, PAD, Seq2Seq, pad_rows, random_pairs, randomize  # noqa: E402

DELTA = 0.1  # time between positions; as a float32 it is C's 0.1f


def hidden_of(d):
    return max(4, d // 4)


class Floater(nn.Module):
    """FLOATER (Liu et al., ICML 2020): p(0) = p0, dp/dt = linear2(tanh(linear1([p; t])))."""

    def __init__(self, d):
        super().__init__()
        self.linear1 = nn.Linear(d + 1, hidden_of(d))
        self.linear2 = nn.Linear(hidden_of(d), d)
        self.p0 = nn.Parameter(torch.zeros(d))

    def field(self, t, p):
        return self.linear2(torch.tanh(self.linear1(torch.cat([p, t.reshape(1)]))))

    def table(self, n):
        """(n, d): rows p(i*DELTA), classic RK4 with one step per DELTA, in float32 as the C code."""
        h = torch.tensor(DELTA, dtype=torch.float32)
        half = torch.tensor(0.5, dtype=torch.float32) * h
        p, rows = self.p0, [self.p0]
        for i in range(n - 1):
            ti = torch.tensor(float(i), dtype=torch.float32) * h
            k1 = self.field(ti, p)
            k2 = self.field(ti + half, p + half * k1)
            k3 = self.field(ti + half, p + half * k2)
            k4 = self.field(ti + h, p + h * k3)
            p = p + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            rows.append(p)
        return torch.stack(rows)


class FloaterSeq2Seq(Seq2Seq):
    """make_golden's Seq2Seq with a Floater per side in place of the sinusoid, registered under
    transformer.encoder.floater / transformer.decoder.floater (the C tensor names)."""

    def add_floater(self, gen):
        d = self.c["d_model"]
        for stack in (self.transformer.encoder, self.transformer.decoder):
            stack.floater = Floater(d)
            with torch.no_grad():  # non-trivial everywhere, p0 included (C initialises it to 0)
                for name, p in stack.floater.named_parameters():
                    if name.endswith("weight"):
                        p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))
                    else:
                        p.copy_(0.3 * torch.randn(p.shape, generator=gen))

    def forward(self, src, tgt_in):
        d = self.c["d_model"]
        xs = self.src_embed(src) * math.sqrt(d) + self.transformer.encoder.floater.table(src.shape[1])
        xt = self.tgt_embed(tgt_in) * math.sqrt(d) + self.transformer.decoder.floater.table(tgt_in.shape[1])
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad, tgt_pad = src == PAD, tgt_in == PAD
        out = self.transformer(xs, xt, tgt_mask=causal, src_key_padding_mask=src_pad,
                               tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(out)


def main():
    torch.manual_seed(0)
    c = dict(d_model=16, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=32, src_vocab=23, tgt_vocab=19,
             max_len=64, norm_first=0, activation="relu", layer_norm_eps=1e-5)
    lens = [(7, 9), (3, 4), (12, 11), (1, 2), (6, 6)]  # padding on both sides; 11 source steps of RK4
    gen = torch.Generator().manual_seed(10)
    model = FloaterSeq2Seq(c)
    randomize(model, gen, False)
    model.add_floater(gen)
    model.eval()
    src, tgt = random_pairs(gen, c, lens)
    S, T = pad_rows(src), pad_rows(tgt)
    d = os.path.join(OUT, "floater")
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="encoder-decoder", pe="floater", pad_id=PAD, bos_id=BOS, eos_id=EOS, tie_embeddings=0,
                format="pytorch-reference")
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in src)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in tgt)
    model.transformer.encoder.floater.table(S.shape[1]).detach().numpy().astype("<f4").tofile(
        os.path.join(d, "table_src.f32"))
    logits = model(S, T[:, :-1])
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    logp = torch.log_softmax(logits.double(), dim=-1)
    y = T[:, 1:]
    tok_lp = logp.gather(-1, y[..., None])[..., 0] * (y != PAD)
    with open(os.path.join(d, "scores.txt"), "w") as f:
        for b in range(len(src)):
            f.write("%.6f %d\n" % (tok_lp[b].sum().item(), int((y[b] != PAD).sum())))
    lossf = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=PAD)
    model.zero_grad()
    loss = lossf(model(S, T[:, :-1]).reshape(-1, c["tgt_vocab"]), y.reshape(-1))
    loss.backward()
    st_io.save(os.path.join(d, "grads.safetensors"), {n: p.grad for n, p in model.named_parameters()})
    with open(os.path.join(d, "loss.txt"), "w") as f:
        f.write("%.9f\n" % loss.item())
    print("floater B=%d S=%d T=%d loss=%.6f" % (S.shape[0], S.shape[1], T.shape[1], loss.item()))


if __name__ == "__main__":
    main()
