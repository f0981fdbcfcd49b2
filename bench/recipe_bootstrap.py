"""Paired bootstrap resampling of two systems' test BLEU (Koehn 2004, "Statistical significance tests
for machine translation evaluation"), for bench/recipe.sh's comparisons (docs/TRAINING.md "A recipe
for a short budget"): is a BLEU difference between two recipes on the 302 test verses more than
the noise of the test set?

    /usr/bin/python3 bench/recipe_bootstrap.py REF HYP_A HYP_B [SAMPLES] [TFM]

Draws SAMPLES (default 300) test sets of the same size with replacement (seeded: the same draws
every time), scores both systems on each with `tfm bleu` (sacreBLEU's corpus BLEU) and prints
BLEU(A), BLEU(B) on the whole set, the mean difference B − A over the samples, its 95 % interval
(2.5th and 97.5th percentile) and the share of samples in which B is better. An interval that
contains 0 means: not shown to differ."""
import os
import random
import subprocess
import sys
import tempfile


def bleu(tfm, hyp_lines, ref_lines, tmp):
    hp, rp = os.path.join(tmp, "h"), os.path.join(tmp, "r")
    with open(hp, "w", encoding="utf-8") as f:
        f.writelines(hyp_lines)
    with open(rp, "w", encoding="utf-8") as f:
        f.writelines(ref_lines)
    out = subprocess.run([tfm, "bleu", "--hyp", hp, "--ref", rp], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 3 and w[0] == "BLEU" and w[1] == "=":
            return float(w[2])
    raise RuntimeError(f"no BLEU line in: {out!r}")


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: recipe_bootstrap.py REF HYP_A HYP_B [SAMPLES] [TFM]")
    here = os.path.dirname(os.path.abspath(__file__))
    samples = int(argv[3]) if len(argv) > 3 else 300
    tfm = argv[4] if len(argv) > 4 else os.path.join(here, "..", "build", "tfm")
    ref, a, b = ([ln if ln.endswith("\n") else ln + "\n" for ln in open(p, encoding="utf-8")] for p in argv[:3])
    if not len(ref) == len(a) == len(b):
        sys.exit(f"recipe_bootstrap.py: line counts differ: {len(ref)} {len(a)} {len(b)}")
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        full_a, full_b = bleu(tfm, a, ref, tmp), bleu(tfm, b, ref, tmp)
        d = []
        for _ in range(samples):
            idx = [rng.randrange(len(ref)) for _ in ref]
            r = [ref[i] for i in idx]
            d.append(bleu(tfm, [b[i] for i in idx], r, tmp) - bleu(tfm, [a[i] for i in idx], r, tmp))
    d.sort()
    lo, hi = d[int(0.025 * samples)], d[min(samples - 1, int(0.975 * samples))]
    print(f"A {full_a:.2f} B {full_b:.2f} B-A mean {sum(d) / samples:+.2f} 95% [{lo:+.2f}, {hi:+.2f}] "
          f"B better in {100.0 * sum(x > 0 for x in d) / samples:.0f}% of {samples} samples")


if __name__ == "__main__":
    main(sys.argv[1:])
