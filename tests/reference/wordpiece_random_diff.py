#!/usr/bin/env python3
"""A differential check of tfm's WordPiece against Hugging Face `tokenizers` on random text: N
strings of 1-12 code points drawn from all planes (ASCII-heavy), encoded by both, and for every
string that differs, the single characters that explain it (docs/WORDPIECE.md, "Known
differences"). Not a ctest test: it needs `tokenizers` (PyPI) and a built tfm.

    /work/venv-wp/bin/python tests/reference/wordpiece_random_diff.py \
        [--tfm build/tfm] [--tokenizer data/all-MiniLM-L6-v2/tokenizer.json] [--n 30000] [--seed 1]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unicodedata

from tokenizers import Tokenizer

POOLS = [(0x20, 0x7F)] * 6 + [(0x80, 0x800)] * 3 + [(0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x20000),
                                                   (0x20000, 0x32000), (0xE0000, 0xE0200)]


def tfm_encode(tfm, tokenizer, lines):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="", suffix=".txt", delete=False) as f:
        f.write("".join(s + "\n" for s in lines))
    try:
        out = subprocess.run([tfm, "tokenize", "--encode", "--wordpiece", tokenizer, "--max-tokens", "1000000",
                              "--input", f.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    return out.split("\n")[:-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm", default="build/tfm")
    ap.add_argument("--tokenizer", default="data/all-MiniLM-L6-v2/tokenizer.json")
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    import random
    rng = random.Random(args.seed)
    tok = Tokenizer.from_file(args.tokenizer)
    tok.no_padding()
    tok.no_truncation()

    def hf(s):
        return " ".join(map(str, tok.encode(s).ids))

    lines = []
    for _ in range(args.n):
        s = "".join(chr(rng.randrange(*rng.choice(POOLS))) for _ in range(rng.randint(1, 12)))
        lines.append(s.replace("\n", " ").replace("\r", " ").replace("\x00", " "))
    ours = tfm_encode(args.tfm, args.tokenizer, lines)
    assert len(ours) == len(lines)
    bad = [s for s, o in zip(lines, ours) if hf(s) != o]
    print(f"{len(bad)} of {len(lines)} random strings differ")
    chars = sorted({c for s in bad for c in s})
    probes = ["a" + c + "b" for c in chars]
    theirs = [hf(p) for p in probes]
    mine = tfm_encode(args.tfm, args.tokenizer, probes) if probes else []
    for c, t, m in zip(chars, theirs, mine):
        if t != m:
            print(f"U+{ord(c):04X} {unicodedata.category(c)} {unicodedata.name(c, '?')}: "
                  f"tokenizers {t} | tfm {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
