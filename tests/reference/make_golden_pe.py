#!/usr/bin/python3
"""Golden files for the absolute position encodings of docs/POSITION.md (sinusoidal in both layouts
and with TF's zero_pad / scale, none, learned): the model of make_golden.py (nn.Transformer plus
embeddings and generator, docs/FORMATS.md names) with its position encoding written here, in torch,
from the formulas (not from tfm's code), and what PyTorch computes: logits, scores, the
label-smoothed loss, every parameter's gradient (autograd), and for `learned` the parameters after
three Adam steps.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_pe.py
Writes tests/golden/pe_<variant>/{model.safetensors, src.ids, tgt.ids, logits.f32, scores.txt,
loss.txt, grads.safetensors[, adam3.safetensors]}, read by tests/unit/model/test_golden_pe.c."""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as mg  # noqa: E402  (randomize, random_pairs, pad_rows, constants)
import st_io  # noqa: E402


def sinusoid_table(n, d, layout, zero_pad, scale):
    """Vaswani et al. 2017, §3.5: angle(p, i) = p / 10000^(2i/d) for pair i, in float64.
    interleaved: sin at column 2i, cos at 2i+1; concat: all sines, then all cosines (tensor2tensor,
    fairseq column order; their frequencies are not used). zero_pad: row 0 is zero; scale: the table
    times sqrt(d) (TF positional_encoding(zero_pad, scale))."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange((d + 1) // 2, dtype=torch.float64)
    ang = pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), 2.0 * i / d)
    s, c = torch.sin(ang), torch.cos(ang)[:, : d // 2]
    if layout == "concat":
        pe = torch.cat([s, c], dim=1)
    else:
        pe = torch.zeros(n, d, dtype=torch.float64)
        pe[:, 0::2] = s
        pe[:, 1::2] = c
    if zero_pad:
        pe[0] = 0.0
    if scale:
        pe = pe * math.sqrt(d)
    return pe.float()


class Seq2SeqPE(nn.Module):
    """make_golden.Seq2Seq with a choice of absolute position encoding. The learned tables live
    inside the encoder and decoder modules so their state_dict names are
    transformer.encoder.pos_embed.weight / transformer.decoder.pos_embed.weight."""

    def __init__(self, c, pe):
        super().__init__()
        self.c, self.pe = c, pe
        self.src_embed = nn.Embedding(c["src_vocab"], c["d_model"])
        self.tgt_embed = nn.Embedding(c["tgt_vocab"], c["d_model"])
        self.transformer = nn.Transformer(
            d_model=c["d_model"], nhead=c["n_heads"], num_encoder_layers=c["n_enc_layers"],
            num_decoder_layers=c["n_dec_layers"], dim_feedforward=c["d_ff"], dropout=0.0,
            activation=c["activation"], batch_first=True, norm_first=bool(c["norm_first"]),
            layer_norm_eps=c["layer_norm_eps"])
        if pe["pe"] == "learned":
            self.transformer.encoder.pos_embed = nn.Embedding(c["max_len"], c["d_model"])
            self.transformer.decoder.pos_embed = nn.Embedding(c["max_len"], c["d_model"])
        self.generator = nn.Linear(c["d_model"], c["tgt_vocab"])

    def positions(self, which, n):
        d, pe = self.c["d_model"], self.pe
        if pe["pe"] == "none":
            return 0.0
        if pe["pe"] == "learned":
            table = self.transformer.encoder.pos_embed if which == "src" else self.transformer.decoder.pos_embed
            return table(torch.arange(n))
        return sinusoid_table(n, d, pe.get("pe_layout", "interleaved"), pe.get("pe_zero_pad", 0),
                              pe.get("pe_scale", 0))

    def forward(self, src, tgt_in):
        d = self.c["d_model"]
        xs = self.src_embed(src) * math.sqrt(d) + self.positions("src", src.shape[1])
        xt = self.tgt_embed(tgt_in) * math.sqrt(d) + self.positions("tgt", tgt_in.shape[1])
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad, tgt_pad = src == mg.PAD, tgt_in == mg.PAD
        out = self.transformer(xs, xt, tgt_mask=causal, src_key_padding_mask=src_pad,
                               tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(out)


def write_case(name, c, pe, lens, seed, tie=False, adam=False):
    gen = torch.Generator().manual_seed(seed)
    model = Seq2SeqPE(c, pe)
    mg.randomize(model, gen, tie)  # "embed" in the name: pos_embed tables get 0.5·N(0, 1) too
    model.eval()
    src, tgt = mg.random_pairs(gen, c, lens)
    S, T = mg.pad_rows(src), mg.pad_rows(tgt)
    logits = model(S, T[:, :-1])
    logp = torch.log_softmax(logits.double(), dim=-1)
    y = T[:, 1:]
    tok_lp = logp.gather(-1, y[..., None])[..., 0] * (y != mg.PAD)
    d = os.path.join(mg.OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = dict(c, arch="encoder-decoder", pad_id=mg.PAD, bos_id=mg.BOS, eos_id=mg.EOS, tie_embeddings=int(tie),
                format="pytorch-reference", **pe)
    st_io.save(os.path.join(d, "model.safetensors"), model.state_dict(), meta)
    with open(os.path.join(d, "src.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in src)
    with open(os.path.join(d, "tgt.ids"), "w") as f:
        f.writelines(" ".join(map(str, r)) + "\n" for r in tgt)
    logits.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, "logits.f32"))
    with open(os.path.join(d, "scores.txt"), "w") as f:
        for b in range(len(src)):
            f.write("%.6f %d\n" % (tok_lp[b].sum().item(), int((y[b] != mg.PAD).sum())))
    init = {k: v.clone() for k, v in model.state_dict().items()}
    lossf = nn.CrossEntropyLoss(label_smoothing=mg.LABEL_SMOOTHING, ignore_index=mg.PAD)

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
    if adam:
        opt = torch.optim.Adam(model.parameters(), lr=mg.ADAM_LR, betas=(0.9, 0.98), eps=1e-9)
        for _ in range(3):
            opt.zero_grad()
            loss_of().backward()
            opt.step()
        st_io.save(os.path.join(d, "adam3.safetensors"), model.state_dict())
        model.load_state_dict(init)
    print(name, pe, "B=%d S=%d T=%d loss=%.6f" % (S.shape[0], S.shape[1], T.shape[1], loss.item()))


def main():
    torch.manual_seed(0)
    # tiny: every case's files stay under ~100 KB
    base = dict(d_model=16, n_heads=4, n_enc_layers=1, n_dec_layers=2, d_ff=24, src_vocab=17, tgt_vocab=13,
                max_len=12, norm_first=0, activation="relu", layer_norm_eps=1e-5)
    lens = [(7, 9), (3, 4), (5, 9), (1, 2), (6, 6)]  # padding on both sides
    write_case("pe_interleaved", base, dict(pe="sinusoidal", pe_layout="interleaved"), lens, seed=11)
    write_case("pe_concat", base, dict(pe="sinusoidal", pe_layout="concat"), lens, seed=12)
    write_case("pe_zero_pad", dict(base, norm_first=1), dict(pe="sinusoidal", pe_zero_pad=1), lens, seed=13)
    write_case("pe_scale", base, dict(pe="sinusoidal", pe_scale=1), lens, seed=14)
    write_case("pe_none", base, dict(pe="none"), lens, seed=15)
    # learned: a joint vocabulary with tied embeddings (the position tables are never tied), and
    # three Adam steps (the optimizer state covers the tables)
    write_case("pe_learned", dict(base, src_vocab=15, tgt_vocab=15), dict(pe="learned"), lens, seed=16, tie=True,
               adam=True)


if __name__ == "__main__":
    main()
