#!/usr/bin/python3
"""PyTorch twin of bench/train_step.c: the time of one training step of the reference
configuration of issue 3 with torch.nn.Transformer.

Same model and step as tfm's: nn.Transformer (batch_first, post-LN, ReLU, dropout 0.1), d_model
256, 4 heads, d_ff 1024, 3+3 layers, source and target embeddings of 8000 × 256 scaled by
√d_model plus the sinusoidal position encoding (with dropout), a generator Linear(256, 8000); the
causal mask and (all-false) key padding masks from pad = 0; CrossEntropyLoss(label_smoothing=0.1,
ignore_index=0); Adam(β 0.9, 0.98, ε 1e-9). A batch of 32 sentences × 32 tokens: source (32, 32),
target rows BOS + 31 ids + EOS, the decoder reading the first 32 and predicting the last 32.

The first --warmup steps are not timed; then --steps steps are timed one by one (zero_grad,
forward, loss, backward, optimizer step) and the median is reported. The last line is
machine-readable:  RESULT torch median_s=... min_s=... max_s=... steps=N params=P version=V

Tuning (docs/BENCH.md): OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS=1 and ATEN_CPU_CAPABILITY, picked
from this CPU by bench/cpu_tuning.sh (AVX-512: SkylakeX/avx512; AVX2: Zen or Haswell/avx2), must be
set before Python starts (they are read when the libraries load; bench/run_train_step.sh sources
the helper), and --threads (default 2) goes to torch.set_num_threads. Run with Debian's python3
(python3-torch 1.13) or any Python with torch.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d, heads, ff, n_enc, n_dec, dropout, max_len=256):
        super().__init__()
        self.d = d
        self.src_embed = nn.Embedding(vocab, d)
        self.tgt_embed = nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(d_model=d, nhead=heads, num_encoder_layers=n_enc,
                                          num_decoder_layers=n_dec, dim_feedforward=ff,
                                          dropout=dropout, batch_first=True)
        self.generator = nn.Linear(d, vocab)
        self.drop = nn.Dropout(dropout)
        pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def embed(self, table, ids):
        return self.drop(table(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]])

    def forward(self, src, tgt_in, pad=0):
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        src_pad = src == pad
        tgt_pad = tgt_in == pad
        h = self.transformer(self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt_in),
                             tgt_mask=causal, src_key_padding_mask=src_pad,
                             tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        return self.generator(h)


def cpu_tuning():
    """The tuning bench/cpu_tuning.sh picks for this CPU, as {variable: value}."""
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_tuning.sh")
    out = subprocess.run(["sh", "-c", '. "$1" 2>/dev/null; cpu_tuning_env', "sh", helper],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--len", type=int, default=32)
    args = ap.parse_args()
    for k, v in cpu_tuning().items():
        if os.environ.get(k) != v:
            print(f"train_step_torch: warning: {k} is not {v}: PyTorch is not tuned",
                  file=sys.stderr)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    V, B, L = 8000, args.batch, args.len
    model = Seq2Seq(V, 256, 4, 1024, 3, 3, 0.1)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0)
    g = torch.Generator().manual_seed(42)
    src = torch.randint(4, V, (B, L), generator=g)
    tgt = torch.randint(4, V, (B, L + 1), generator=g)
    tgt[:, 0] = 1
    tgt[:, -1] = 2
    n_params = sum(p.numel() for p in model.parameters())
    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # torch < 2.0
        cap = os.environ.get("ATEN_CPU_CAPABILITY", "default")
    print(f"torch {torch.__version__} train step: threads {torch.get_num_threads()}, CPU capability {cap}, "
          f"{n_params} parameters, batch {B} x {L} tokens")
    times = []
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt[:, :-1])
        loss = loss_fn(logits.reshape(-1, V), tgt[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        if i >= args.warmup:
            times.append(dt)
        print(f"  step {i + 1:2d}{' (warm-up)' if i < args.warmup else '          '} {dt:.4f} s  "
              f"loss {loss.item():.4f}")
    med = statistics.median(times)
    print(f"torch: median {med:.4f} s per step over {len(times)} steps (min {min(times):.4f}, "
          f"max {max(times):.4f}), {B * L / med:.0f} target tokens/s")
    print(f"RESULT torch median_s={med:.6f} min_s={min(times):.6f} max_s={max(times):.6f} "
          f"steps={len(times)} params={n_params} version={torch.__version__}")


if __name__ == "__main__":
    main()
