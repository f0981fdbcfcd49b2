#!/usr/bin/env python3
"""The paper model of data-parallel step time vs the number of ranks N (docs/MPI.md).

No measurement: arithmetic from stated assumptions, so that anyone can change one and rerun.
  python3 bench/mpi_scaling_model.py [--flops-per-s F] [--latency-us A]

Step time T(N) = W / (N·F) + C(N)   (same global batch split N ways: "strong" scaling)
             or W / F + C(N)        (each rank keeps the 1-rank batch: "weak" scaling)
C(N) = 3·2(N−1)·α + 2(N−1)/N · 4P / BW   the ring allreduce of 4·P bytes of fp32 gradients
(Patarasuk & Yuan 2009; Thakur, Rabenseifner & Gropp 2005), not overlapped with the backward pass
(tfm sums the gradient after the whole backward pass), plus the latency of two small ring
allreduces per step (the stop decision; the loss and target count).
W: FLOP of one step = 3 × forward (backward twice the forward), forward = 2 × the weights each
token meets (encoder layers for a source token; decoder layers and the generator for a target
token) + attention's score and value products (4·L·d per token per attention, L the sequence
length). P: the exact parameter count of tfm's model (tied embeddings: one V×d matrix)."""
import argparse


def params(d, dff, n_enc, n_dec, vocab):
    attn = 4 * d * d + 4 * d
    ffn = 2 * d * dff + dff + d
    enc = attn + ffn + 2 * 2 * d
    dec = 2 * attn + ffn + 3 * 2 * d
    return n_enc * enc + n_dec * dec + 2 * 2 * d + vocab * d + vocab


def step_flops(d, dff, n_enc, n_dec, vocab, src_tokens, tgt_tokens, length):
    enc_w = n_enc * (4 * d * d + 2 * d * dff)
    dec_w = n_dec * (8 * d * d + 2 * d * dff) + vocab * d
    fwd = 2 * (enc_w * src_tokens + dec_w * tgt_tokens)
    fwd += 4 * length * d * (n_enc * src_tokens + 2 * n_dec * tgt_tokens)
    return 3 * fwd


MODELS = [
    # name, d_model, d_ff, layers, vocabulary, (source, target) tokens of one global batch, mean length
    ("README model (7.6 M)", 256, 1024, 3, 3, 8000, 3000, 3000, 30),
    ("paper base model (Vaswani et al. 2017, tied 37k vocabulary)", 512, 2048, 6, 6, 37000, 25000, 25000, 27),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flops-per-s", type=float, default=117e9,
                    help="sustained FLOP/s of one rank (default: one 2-core machine of this project running "
                         "the README recipe, 2,024 steps of ~139 GFLOP in 40 min)")
    ap.add_argument("--latency-us", type=float, default=50.0, help="per-message latency α, µs (TCP over Ethernet)")
    a = ap.parse_args()
    F, alpha = a.flops_per_s, a.latency_us * 1e-6
    ns = [1, 2, 4, 8, 16, 32, 64]
    for name, d, dff, ne, nd, v, src, tgt, length in MODELS:
        P = params(d, dff, ne, nd, v)
        W = step_flops(d, dff, ne, nd, v, src, tgt, length)
        print(f"\n{name}: P = {P:,} parameters, 4P = {4 * P / 1e6:.1f} MB of gradients per step; "
              f"W = {W / 1e9:.0f} GFLOP per global batch of {src:,}+{tgt:,} tokens; "
              f"T(1) = {W / F:.2f} s at {F / 1e9:.0f} GFLOP/s per rank")
        print(f"  bytes each rank sends (and receives) per step: 2(N-1)/N x 4P = "
              + ", ".join(f"N={n}: {2 * (n - 1) / n * 4 * P / 1e6:.0f} MB" for n in (2, 8, 64)))
        for mode in ("strong", "weak"):
            label = ("same global batch split N ways: step time s (speed-up)" if mode == "strong"
                     else "each rank a full batch: step time s (throughput x)")
            print(f"  {label}")
            print("  | link | " + " | ".join(f"N={n}" for n in ns) + " |")
            print("  |---|" + "---|" * len(ns))
            for gbit in (1, 10, 100):
                bw = gbit * 1e9 / 8
                cells = []
                for n in ns:
                    comm = 0.0 if n == 1 else 3 * 2 * (n - 1) * alpha + 2 * (n - 1) / n * 4 * P / bw
                    t = (W / (n * F) if mode == "strong" else W / F) + comm
                    gain = (W / F) / t if mode == "strong" else n * (W / F) / t
                    cells.append(f"{t:.3g} ({gain:.1f}x)")
                print(f"  | {gbit} Gbit/s | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
