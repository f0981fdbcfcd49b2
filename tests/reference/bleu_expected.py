#!/usr/bin/env python3
"""Pins sacreBLEU's corpus BLEU and chrF2 for the fixtures in tests/fixtures/bleu/.

tfm's BLEU/chrF (src/infer/bleu.c, chrf.c, tokenize_13a.c) must reproduce sacreBLEU's defaults;
this script is how the expected values were made. sacreBLEU is not needed to build or test tfm:
its outputs are committed. To regenerate (from the repository root):

    /usr/bin/python3 -m venv /tmp/sbvenv && /tmp/sbvenv/bin/pip install sacrebleu==2.6.0
    /tmp/sbvenv/bin/python tests/reference/bleu_expected.py               # expected.tsv, tok13a.out
    /tmp/sbvenv/bin/python tests/reference/bleu_expected.py --make-inputs # also the seeded inputs

Writes, in tests/fixtures/bleu/:
  expected.tsv  one row per <name>.hyp / <name>.ref pair: name, line count, BLEU (full precision),
                sacreBLEU's BLEU line, chrF2 (full precision), sacreBLEU's chrF2 line. Files are read
                as sacreBLEU's command line reads them (UTF-8, newline="\\n", each line rstrip()ed).
                Pairs of empty files are skipped: sacreBLEU refuses them ("contains no sentence").
  tok13a.out    sacreBLEU's Tokenizer13a output (after BLEU's rstrip()) for each line of tok13a.in.
With --make-inputs it first (re)writes the seeded random inputs tricky.hyp, tricky.ref and the
random half of tok13a.in (the hand-written half is the list HAND_TOK below).
"""
import argparse
import os
import random
import sys

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'bleu')

# Hand-written tokenizer cases: every rule of mteval-v13a and its corners.
HAND_TOK = [
    'Hello, world.', 'The total was $1,000.50, or 3.14 times that.', 'a.b a,b 1.b b.1 1,b b,1',
    '3.14. .5 ,5 5, 5. a. .a', 'x-ray 5-6 -5 5- a-5 5--6', 'a..b 1..2 ,,,, ...', 'U.S.A. e.g., i.e.',
    '&quot;quoted&quot; &amp; &lt;tag&gt;', '&amp;quot; &amp;lt; &amp;amp; &QUOT; &amp', '<skipped>a b<skipped>',
    "it's 'single' \"double\" `back`", '$5 50% a/b C++ (a) [x] {y} ~^_| @#!?;:', 'a*b+c=d<e>f\\g',
    'é.ñ, «hola». ¿qué? ¡sí! — ’ … €5,00', 'Tabs\tand\x0bvertical\x0ctabs', 'NBSP\xa0and\u3000ideo\u2009thin',
    'trailing spaces   ', '   leading spaces', '', '   ', 'zero\u200bwidth is not a space',
    '\ufeffBOM first', 'line\rwith a carriage return', 'smile 😀. done', '1,000,000.00-2', '-', '.', ',',
]

ATOMS = list("ab .,-0123456789'\"&;<>()[]{}!?/\\:@#$%^*_+=|~`") + [
    '&quot;', '&amp;', '&lt;', '&gt;', '&amp;quot;', '<skipped>', '\r', '\t', '\x0b', '\x0c', '\x1c',
    '\x85', '\xa0', '\u2009', '\u3000', '\u200b', 'é', 'ñ', '¿', '¡', '«', '»', '—', '’', '…', '€', '😀',
    'Ω', '1,000.50', '3.14', 'U.S.', 'e.g.,', 'x-ray', '5-6', 'casa', 'perro', 'the', 'of']


def read_lines(path):
    """As sacreBLEU's CLI: smart_open (utf-8, newline='\\n'), then line.rstrip()."""
    with open(path, encoding='utf-8', newline='\n') as f:
        return [line.rstrip() for line in f]


def write_lines(path, lines):
    with open(path, 'w', encoding='utf-8', newline='\n') as f:
        for line in lines:
            f.write(line + '\n')


def make_inputs():
    rng = random.Random(20240601)
    refs, hyps = [], []
    for _ in range(200):
        words = [''.join(rng.choice(ATOMS) for _ in range(rng.randint(1, 3)))
                 for _ in range(rng.randint(0, 14))]
        refs.append(' '.join(words))
        h = list(words)
        for _ in range(rng.randint(0, 3)):  # MT-like edits: drop, insert, replace, swap
            op = rng.randrange(4)
            if op == 0 and h:
                h.pop(rng.randrange(len(h)))
            elif op == 1:
                h.insert(rng.randrange(len(h) + 1), rng.choice(ATOMS))
            elif op == 2 and h:
                h[rng.randrange(len(h))] = rng.choice(ATOMS)
            elif op == 3 and len(h) > 1:
                i = rng.randrange(len(h) - 1)
                h[i], h[i + 1] = h[i + 1], h[i]
        hyps.append(' '.join(h))
    write_lines(os.path.join(FIX, 'tricky.ref'), refs)
    write_lines(os.path.join(FIX, 'tricky.hyp'), hyps)
    rand_tok = [''.join(rng.choice(ATOMS) for _ in range(rng.randint(0, 20))) for _ in range(300)]
    write_lines(os.path.join(FIX, 'tok13a.in'), HAND_TOK + rand_tok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--make-inputs', action='store_true', help='rewrite the seeded random inputs')
    args = ap.parse_args()
    if args.make_inputs:
        make_inputs()

    tok = Tokenizer13a()
    with open(os.path.join(FIX, 'tok13a.in'), encoding='utf-8', newline='\n') as f:
        tok_in = [line[:-1] if line.endswith('\n') else line for line in f]
    write_lines(os.path.join(FIX, 'tok13a.out'), [tok(line.rstrip()) for line in tok_in])

    names = sorted(n[:-4] for n in os.listdir(FIX) if n.endswith('.hyp'))
    rows = []
    bleu_sig = chrf_sig = None
    for name in names:
        hyp = read_lines(os.path.join(FIX, name + '.hyp'))
        ref = read_lines(os.path.join(FIX, name + '.ref'))
        assert len(hyp) == len(ref), name
        if not hyp:
            continue
        bleu, chrf = BLEU(), CHRF()
        b = bleu.corpus_score(hyp, [ref])
        c = chrf.corpus_score(hyp, [ref])
        bleu_sig, chrf_sig = str(bleu.get_signature()), str(chrf.get_signature())
        rows.append([name, str(len(hyp)), repr(b.score), str(b), repr(c.score), str(c)])
        print(f'{name:16s} {b}  {c}')

    with open(os.path.join(FIX, 'expected.tsv'), 'w', encoding='utf-8', newline='\n') as f:
        f.write(f'# made by tests/reference/bleu_expected.py with sacreBLEU {sacrebleu.__version__} '
                f'(Python {sys.version.split()[0]}); do not edit by hand\n')
        f.write(f'# BLEU|{bleu_sig}\n# chrF2|{chrf_sig}\n')
        f.write('# name\tlines\tbleu\tbleu_line\tchrf2\tchrf2_line\n')
        for r in rows:
            f.write('\t'.join(r) + '\n')


if __name__ == '__main__':
    main()
