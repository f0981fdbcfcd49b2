#!/usr/bin/env python3
"""A differential check of tfm's byte-level BPE against Hugging Face `tokenizers` on random text:
N strings of 1-16 code points drawn from all planes, ASCII-heavy, with many spaces, apostrophes,
contraction letters, digits, tabs, NBSP and CJK, encoded by both under each fixture tokenizer of
tests/fixtures/bpe/ (docs/BPE.md). Prints the strings that differ; exit 1 if any does. Not a ctest
test: it needs `tokenizers` (PyPI) and a built tfm.

    /tmp/venv-bpe/bin/python tests/reference/bpe_random_diff.py [--tfm build/tfm] [--n 20000] [--seed 1]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "bpe")
POOLS = [(0x20, 0x7F)] * 6 + [(0x80, 0x800)] * 2 + [(0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x20000),
                                                   (0x20000, 0x32000), (0xE0000, 0xE0200)]
FAVOURITES = list(" '''sStTlLmMdDrReEvV\t0123456789\u00a0\u3000\u2028\u017f\u0301中😀") + ["'s", "'LL", "  ", "<|endoftext|>"]


def random_text(rng):
    out = []
    for _ in range(rng.randint(1, 16)):
        if rng.random() < 0.5:
            out.append(rng.choice(FAVOURITES))
        else:
            lo, hi = rng.choice(POOLS)
            c = rng.randrange(lo, hi)
            if 0xD800 <= c < 0xE000 or c in (0x0A, 0x0D, 0x85, 0x2028, 0x2029, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E):
                c = 0x20  # no line breaks: one input a line
            out.append(chr(c))
    s = "".join(out).replace("\u2028", " ")
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm", default="build/tfm")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    texts = [random_text(rng) for _ in range(a.n)]
    bad = 0
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", suffix=".txt", delete=False) as f:
        f.write("".join(t + "\n" for t in texts))
    try:
        for name in ["gpt2", "llama3", "qwen2", "smollm"]:
            path = os.path.join(FIX, name + ".json")
            tok = Tokenizer.from_file(path)
            out = subprocess.run([a.tfm, "tokenize", "--encode", "--bpe", path, "--input", f.name],
                                 capture_output=True, text=True, check=True).stdout.split("\n")
            diff = 0
            for i, t in enumerate(texts):
                want = " ".join(map(str, tok.encode(t).ids))
                if out[i] != want:
                    diff += 1
                    if diff <= 5:
                        print("%s: %r\n  want %s\n  got  %s" % (name, t, want, out[i]))
            print("%s: %d/%d differ" % (name, diff, len(texts)))
            bad += diff
    finally:
        os.unlink(f.name)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
