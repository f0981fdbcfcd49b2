#!/usr/bin/python3
"""Golden files for the optimizers, gradient clipping and the label-smoothed cross-entropy:
torch.optim.Adam / torch.optim.SGD steps, torch.nn.utils.clip_grad_norm_, and
nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=pad) with its gradient.

Run with Debian's python3 and python3-torch (1.13):  /usr/bin/python3 tests/reference/make_golden_optim.py
Writes tests/golden/optim/{adam,sgd,clip}.txt and tests/golden/loss/ce.txt.
Format (read by tests/unit/train/test_optim.c): lines "name count" followed by `count` float32 values
printed with 9 significant digits (exact round trip); '#' lines are comments."""
import os

import torch
import torch.nn as nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")


class Writer:
    def __init__(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "w")
        self.f.write("# made by tests/reference/make_golden_optim.py, torch %s\n" % torch.__version__)

    def put(self, name, x):
        x = torch.as_tensor(x).detach().reshape(-1)
        self.f.write("%s %d\n" % (name, x.numel()))
        self.f.write(" ".join("%.9g" % float(v) for v in x.tolist()) + "\n")

    def close(self):
        self.f.close()


def optim_case(path, make_opt, gen, n=50, steps=3):
    p0 = torch.randn(n, generator=gen)
    grads = [torch.randn(n, generator=gen) for _ in range(steps)]
    grads[0][:3] = 0.0  # zero gradients: Adam's ε keeps the step finite (m = v = 0)
    grads[1][3:6] *= 1e-6  # tiny gradients: ε matters next to √v
    p = nn.Parameter(p0.clone())
    opt = make_opt([p])
    w = Writer(path)
    w.put("params0", p0)
    for t in range(steps):
        p.grad = grads[t].clone()
        opt.step()
        w.put("grads%d" % (t + 1), grads[t])
        w.put("params%d" % (t + 1), p)
    w.close()


def clip_case(path, gen, n=50):
    w = Writer(path)
    g = torch.randn(n, generator=gen) * 3.0
    for name, max_norm in (("above", 1.0), ("below", 1000.0)):
        p = nn.Parameter(torch.zeros(n))
        p.grad = g.clone()
        total = nn.utils.clip_grad_norm_([p], max_norm)
        w.put(name + "_max_norm", torch.tensor([max_norm]))
        w.put(name + "_grads", g)
        w.put(name + "_total_norm", total)
        w.put(name + "_clipped", p.grad)
    w.close()


def ce_case(path, gen, N=12, V=7, pad=0):
    w = Writer(path)
    logits0 = torch.randn(N, V, generator=gen) * 2.0
    targets = torch.randint(1, V, (N,), generator=gen)
    targets[[2, 7, 11]] = pad  # ignored rows
    targets[4] = V - 1
    w.put("sizes", torch.tensor([N, V, pad], dtype=torch.float32))
    w.put("logits", logits0)
    w.put("targets", targets.float())
    for eps in (0.0, 0.1):
        logits = logits0.clone().requires_grad_(True)
        loss = nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=pad)(logits, targets)
        loss.backward()
        tag = "eps%g" % eps
        w.put(tag + "_loss", loss)
        w.put(tag + "_dlogits", logits.grad)
    w.close()


def main():
    gen = torch.Generator().manual_seed(1234)
    optim_case(os.path.join(ROOT, "optim", "adam.txt"),
               lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.9, 0.98), eps=1e-9), gen)
    optim_case(os.path.join(ROOT, "optim", "sgd.txt"), lambda ps: torch.optim.SGD(ps, lr=0.1), gen)
    clip_case(os.path.join(ROOT, "optim", "clip.txt"), gen)
    ce_case(os.path.join(ROOT, "loss", "ce.txt"), gen)


if __name__ == "__main__":
    main()
