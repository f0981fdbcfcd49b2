#!/usr/bin/python3
"""Reference values for `--pe-layout tensor2tensor` (docs/POSITION.md): tensor2tensor's
get_timing_signal_1d (tensor2tensor/layers/common_attention.py, min_timescale 1, max_timescale 1e4)
reimplemented in NumPy float64 from its source, and checked against fairseq's
SinusoidalPositionalEmbedding.get_embedding (fairseq/modules/sinusoidal_positional_embedding.py,
reimplemented the same way; its positions start at padding_idx + 1, ours and t2t's at 0) for
d >= 4, where the two agree.

Run with Debian's python3:  /usr/bin/python3 tests/reference/make_golden_t2t_timing.py
Writes tests/golden/pe_tensor2tensor/signal.txt, read by tests/unit/model/test_pe_tensor2tensor.c: blocks
of a line "d pos0 T" then T lines of d values (the signal of positions pos0 .. pos0 + T - 1)."""
import math
import os

import numpy as np


def t2t_timing_signal(length, channels, start_index=0, min_timescale=1.0, max_timescale=1.0e4):
    """get_timing_signal_1d: sin(p * inv_timescales) then cos(p * inv_timescales), an odd channel
    count padded with one zero column."""
    position = np.arange(length, dtype=np.float64) + start_index
    num_timescales = channels // 2
    log_timescale_increment = math.log(float(max_timescale) / float(min_timescale)) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * np.exp(np.arange(num_timescales, dtype=np.float64) * -log_timescale_increment)
    scaled_time = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)
    return np.pad(signal, [[0, 0], [0, channels % 2]])


def fairseq_embedding(num_embeddings, embedding_dim):
    """get_embedding without padding_idx: row p is position p (fairseq looks up row
    padding_idx + 1 + t for token t)."""
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=np.float64) * -emb)
    emb = np.arange(num_embeddings, dtype=np.float64)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1))], axis=1)
    return emb


def main():
    blocks = [(2, 0, 8), (4, 0, 16), (8, 0, 64), (16, 5, 20), (64, 0, 10), (64, 1000, 4), (512, 0, 3)]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "pe_tensor2tensor")
    os.makedirs(out, exist_ok=True)
    lines = []
    for d, pos0, T in blocks:
        sig = t2t_timing_signal(T, d, start_index=pos0)
        if d >= 4:
            fs = fairseq_embedding(pos0 + T, d)[pos0:]
            assert np.max(np.abs(fs - sig)) < 1e-12, (d, pos0)
        lines.append("%d %d %d" % (d, pos0, T))
        for row in sig:
            lines.append(" ".join("%.9g" % v for v in row))
    with open(os.path.join(out, "signal.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.join(out, "signal.txt"), len(lines), "lines")


if __name__ == "__main__":
    main()
