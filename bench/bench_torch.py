#!/usr/bin/python3
"""PyTorch twin of `bench_tfm train` (make bench, docs/BENCH.md): the same training step, timed
part by part (forward with the loss, backward, optimizer: zero_grad + Adam step), for the same
named configurations:
  ref   d_model 256, 4 heads, d_ff 1024, 3+3 layers, vocab 8000, 32 sentences × 32 tokens
  base  512, 8 heads, 2048, 6+6, vocab 32000, 16 × 32 (Vaswani et al. 2017, Table 3)
  tiny  32, 2 heads, 64, 1+1, vocab 64, 4 × 8
The model is bench/train_step_torch.py's Seq2Seq (nn.Transformer, post-LN like tfm's default,
ReLU, dropout 0.1, embeddings × √d_model + sinusoid, CrossEntropyLoss(label_smoothing 0.1),
Adam β (0.9, 0.98) ε 1e-9). The CPU tuning (OpenBLAS core type, ATen kernels) comes from
bench/cpu_tuning.sh, which bench/bench.sh sources before starting Python.

    bench_torch.py --config ref [--reps N] [--warmup W] [--threads T]

Last line: RESULT train impl=torch-<version> config=... step_med=... (the keys of bench_tfm).
"""
import argparse
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_step_torch import Seq2Seq  # noqa: E402

SHAPES = {  # d, heads, ff, n_enc, n_dec, vocab, batch, len
    "ref": (256, 4, 1024, 3, 3, 8000, 32, 32),
    "base": (512, 8, 2048, 6, 6, 32000, 16, 32),
    "tiny": (32, 2, 64, 1, 1, 64, 4, 8),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", choices=sorted(SHAPES), default="ref")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    d, heads, ff, ne, nd, V, B, L = SHAPES[args.config]
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = Seq2Seq(V, d, heads, ff, ne, nd, 0.1)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0)
    g = torch.Generator().manual_seed(42)
    src = torch.randint(4, V, (B, L), generator=g)
    tgt = torch.randint(4, V, (B, L + 1), generator=g)
    tgt[:, 0], tgt[:, -1] = 1, 2
    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # torch < 2.0
        cap = os.environ.get("ATEN_CPU_CAPABILITY", "default")
    print(f"torch {torch.__version__} train step, config {args.config}: threads {torch.get_num_threads()}, "
          f"CPU capability {cap}, OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', '-')}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, batch {B} x {L}")
    parts = {"step": [], "fwd": [], "bwd": [], "upd": []}
    for i in range(args.warmup + args.reps):
        t0 = time.perf_counter()
        logits = model(src, tgt[:, :-1])
        loss = loss_fn(logits.reshape(-1, V), tgt[:, 1:].reshape(-1))
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        print(f"  step {i + 1:2d}{' (warm-up)' if i < args.warmup else '          '} {t3 - t0:.4f} s "
              f"(forward {t1 - t0:.4f}, backward {t2 - t1:.4f}, update {t3 - t2:.4f}) loss {loss.item():.4f}")
        if i >= args.warmup:
            for k, v in zip(parts, (t3 - t0, t1 - t0, t2 - t1, t3 - t2)):
                parts[k].append(v)
    kv = " ".join(f"{k}_med={statistics.median(v):.6f} {k}_min={min(v):.6f}" for k, v in parts.items())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"RESULT train impl=torch-{torch.__version__} config={args.config} {kv} reps={args.reps} "
          f"threads={torch.get_num_threads()} rss_mib={rss:.1f}")


if __name__ == "__main__":
    main()
