#!/usr/bin/python3
"""Golden files for the forward and backward passes: small torch.nn.Transformer models with random
weights (non-zero biases, non-trivial LayerNorm weights), saved with the tensor names and metadata
of docs/FORMATS.md, plus id files with padding in source and target, and what PyTorch computes:
logits, scores, the label-smoothed loss and every parameter's gradient, and the parameters after
three Adam steps and after three SGD steps on that batch (dropout 0).

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden.py
Writes tests/golden/<case>/{model.safetensors, src.ids, tgt.ids, logits.f32, scores.txt, loss.txt,
grads.safetensors, adam3.safetensors, sgd3.safetensors}. The C tests need no Python."""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
PAD, BOS, EOS = 0, 1, 2
LABEL_SMOOTHING = 0.1
ADAM_LR, SGD_LR = 1e-3, 0.05


def sinusoidal(n, d):
    """Vaswani et al. 2017, §3.5, interleaved sin/cos, computed in float64."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)
    ang = pos * torch.exp(-i2 * math.log(10000.0) / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : d // 2]
    return pe.float()


class Seq2Seq(nn.Module):
    """nn.Transformer plus embeddings and generator, named as docs/FORMATS.md says."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.src_embed = nn.Embedding(c["src_vocab"], c["d_model"])
        self.tgt_embed = nn.Embedding(c["tgt_vocab"], c["d_model"])
        self.transformer = nn.Transformer(
            d_model=c["d_model"], nhead=c["n_heads"], num_encoder_layers=c["n_enc_layers"],
            num_decoder_layers=c["n_dec_layers"], dim_feedforward=c["d_ff"], dropout=0.0,
            activation=c["activation"], batch_first=True, norm_first=bool(c["norm_first"]),
            layer_norm_eps=c["layer_norm_eps"])
        self.generator = nn.Linear(c["d_model"], c["tgt_vocab"])

    def forward(self, src, tgt_in):
        d = self.c["d_model"]
        pe = sinusoidal(max(src.shape[1], tgt_in.shape[1]), d)
        xs = self.src_embed(src) * math.sqrt(d) + pe[: src.shape[1]]
        xt = self.tgt_embed(tgt_in) * math.sqrt(d) + pe[: tgt_in.shape[1]]
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad, tgt_pad = src == PAD, tgt_in == PAD
        out = self.transformer(xs, xt, tgt_mask=causal, src_key_padding_mask=src_pad,
                               tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(out)


def randomize(model, gen, tie):
    """Random weights everywhere: biases and LayerNorm parameters non-trivial."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))
            elif "embed" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))
    if tie:  # one shared Parameter: its gradient is the sum of the three uses
        model.tgt_embed.weight = model.src_embed.weight
        model.generator.weight = model.src_embed.weight


def random_pairs(gen, c, lens):
    src, tgt = [], []
    for ls, lt in lens:
        src.append(torch.randint(3, c["src_vocab"], (ls,), generator=gen).tolist())
        body = torch.randint(3, c["tgt_vocab"], (lt - 2,), generator=gen).tolist()
        tgt.append([BOS] + body + [EOS])
    return src, tgt


def pad_rows(rows):
    L = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (L - len(r)) for r in rows], dtype=torch.long)


def write_case(name, c, lens, seed, tie=False):
    gen = torch.Generator().manual_seed(seed)
    model = Seq2Seq(c)
    randomize(model, gen, tie)
    model.eval()
    src, tgt = random_pairs(gen, c, lens)
    S, T = pad_rows(src), pad_rows(tgt)
    logits = model(S, T[:, :-1])  # grad enabled: PyTorch's fast path (nested tensors) stays off
    logp = torch.log_softmax(logits.double(), dim=-1)
    y = T[:, 1:]
    tok_lp = logp.gather(-1, y[..., None])[..., 0] * (y != PAD)
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="encoder-decoder", pe="sinusoidal", pad_id=PAD, bos_id=BOS, eos_id=EOS,
                tie_embeddings=int(tie), format="pytorch-reference")
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in src)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in tgt)
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    with open(os.path.join(d, "scores.txt"), "w") as f:
        for b in range(len(src)):
            f.write("%.6f %d\n" % (tok_lp[b].sum().item(), int((y[b] != PAD).sum())))
    # the training objective: label-smoothed cross-entropy, mean over non-pad targets
    init = {k: v.clone() for k, v in model.state_dict().items()}
    lossf = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=PAD)
    def loss_of():
        return lossf(model(S, T[:, :-1]).reshape(-1, c["tgt_vocab"]), T[:, 1:].reshape(-1))
    model.zero_grad()
    loss = loss_of()
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    named = {k: grads[k] if k in grads else grads["src_embed.weight"] for k in model.state_dict()}
    st_io.save(os.path.join(d, "grads.safetensors"), named)
    with open(os.path.join(d, "loss.txt"), "w") as f:
        f.write("%.9f\n" % loss.item())
    for opt_name, make in (("adam3", lambda ps: torch.optim.Adam(ps, lr=ADAM_LR, betas=(0.9, 0.98), eps=1e-9)),
                           ("sgd3", lambda ps: torch.optim.SGD(ps, lr=SGD_LR))):
        model.load_state_dict(init)
        opt = make(model.parameters())
        for _ in range(3):
            opt.zero_grad()
            loss_of().backward()
            opt.step()
        st_io.save(os.path.join(d, opt_name + ".safetensors"), model.state_dict())
    model.load_state_dict(init)
    print(name, "B=%d S=%d T=%d V=%d loss=%.6f" % (S.shape[0], S.shape[1], T.shape[1], c["tgt_vocab"],
                                                   loss.item()))


def main():
    torch.manual_seed(0)
    base = dict(d_model=16, n_heads=4, n_enc_layers=2, n_dec_layers=2, d_ff=32, src_vocab=23,
                tgt_vocab=19, max_len=64, norm_first=0, activation="relu", layer_norm_eps=1e-5)
    # lengths (source, whole target with BOS/EOS): padding in both sides, one empty-ish source
    lens = [(7, 9), (3, 4), (5, 9), (1, 2), (6, 6)]
    write_case("post_ln_relu", base, lens, seed=1)
    write_case("pre_ln_gelu", dict(base, norm_first=1, activation="gelu"), lens, seed=2)
    write_case("post_ln_tied", dict(base, src_vocab=21, tgt_vocab=21, n_enc_layers=1, n_dec_layers=3,
                                    d_model=24, n_heads=3, d_ff=40), lens, seed=3, tie=True)


if __name__ == "__main__":
    main()
