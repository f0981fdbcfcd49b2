#!/usr/bin/env python3
"""Golden beam-search outputs where the length penalty's length rule decides the ranking
(docs/NLLB.md, "Search"; tfm_config.lenpen_count_forced).

transformers 4.40.2 normalises a finished hypothesis by generated_len ** length_penalty, with
generated_len = cur_len - decoder_prompt_len: every token after the decoder start, so the forced
language code (forced_bos_token_id), the tokens and EOS. tfm's default rule (fairseq's) counts
the tokens and EOS but not a forced first token: one less. This script runs
generate(num_beams=4, length_penalty=a, early_stopping=True) on the committed NLLB fixture
(tests/fixtures/nllb, made by make_nllb_golden.py) twice per English sentence of
tests/fixtures/tok_train.txt and target code (spa_Latn, then fra_Latn): as transformers is, and with BeamHypotheses.add patched to divide by
generated_len - 1 (tfm's default rule). It keeps the first few (sentence, a) where the two give
different outputs and both end with EOS before the limit, and writes transformers' output.

Pinned: transformers 4.40.2, sentencepiece 0.2.0, torch 1.13 (Debian), float32, one thread. Run
from the repository root:

    /work/venv-hf/bin/python tests/reference/make_lenpen_golden.py

Marian (tests/fixtures/marian, make_marian_golden.py) forces no first token, so both rules are one
number there; its beam search at other length penalties still checks candidates, finished
hypotheses and early stopping: generate(num_beams=4, length_penalty=0.6 | 2.0, early_stopping=True,
max_length=48) on tests/fixtures/marian/ref/dec_src.txt, written as ref/beam4_lp0.6.txt and
ref/beam4_lp2.0.txt (batch_decode, skip_special_tokens=True), each sentence ending before the limit.

Writes tests/golden/nllb/lenpen.tsv, one case a line:
    alpha <TAB> target code <TAB> English sentence <TAB> transformers' ids after </s> and the code,
    without EOS
    <TAB> the ids the other rule gives (for the reader; the test checks the first)
"""
import os
import sys

import torch
from transformers import AutoModelForSeq2SeqLM, MarianTokenizer, NllbTokenizer
from transformers.generation import beam_search

FIX = "tests/fixtures/nllb"
TRAIN = "tests/fixtures/tok_train.txt"
OUT = "tests/golden/nllb/lenpen.tsv"
ALPHAS = (0.6, 1.0, 2.0)
PER_ALPHA = 2
MAX_NEW = 48

_add = beam_search.BeamHypotheses.add


def add_fairseq(self, hyp, sum_logprobs, beam_indices=None, generated_len=None):
    """tfm's default rule: the forced first token not counted."""
    return _add(self, hyp, sum_logprobs, beam_indices, generated_len - 1)


def write_lines(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    os.replace(tmp, path)


def marian():
    d = "tests/fixtures/marian"
    tok = MarianTokenizer.from_pretrained(d)
    model = AutoModelForSeq2SeqLM.from_pretrained(d).eval()
    with open(os.path.join(d, "ref", "dec_src.txt"), encoding="utf-8") as f:
        src = [l.rstrip("\n") for l in f]
    with open(os.path.join(d, "ref", "beam4.txt"), encoding="utf-8") as f:
        at1 = [l.rstrip("\n") for l in f]
    for a in (0.6, 2.0):
        texts = []
        for s in src:
            enc = tok([s], return_tensors="pt")
            with torch.no_grad():
                b = model.generate(**enc, num_beams=4, length_penalty=a, early_stopping=True, do_sample=False,
                                   max_length=48)
            assert b.shape[1] < 48, f"{s!r} reaches the limit at length_penalty {a}"
            texts.append(tok.batch_decode(b, skip_special_tokens=True)[0])
        print(f"marian a={a}: {sum(x != y for x, y in zip(texts, at1))} of {len(src)} differ from a=1.0",
              file=sys.stderr)
        write_lines(os.path.join(d, "ref", f"beam4_lp{a}.txt"), texts)


def main():
    torch.set_num_threads(1)
    marian()
    tok = NllbTokenizer.from_pretrained(FIX, src_lang="eng_Latn", tgt_lang="spa_Latn")
    model = AutoModelForSeq2SeqLM.from_pretrained(FIX).eval()
    with open(TRAIN, encoding="utf-8") as f:
        lines = [l.strip() for l in f if l.strip()]
    split = next(i for i, l in enumerate(lines) if l.startswith("Y ACONTECIÓ en los días"))
    eng = lines[:split]
    cases = [(s, lang) for lang in ("spa_Latn", "fra_Latn") for s in eng]

    def run(s, lang, a):
        code = tok.convert_tokens_to_ids(lang)
        enc = tok(s, return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**enc, forced_bos_token_id=code, num_beams=4, length_penalty=a,
                                 early_stopping=True, max_new_tokens=MAX_NEW)[0].tolist()
        assert out[:2] == [2, code], out[:2]
        ended = out[-1] == 2 and len(out) - 1 < MAX_NEW
        return out[2:-1] if ended else None

    rows = []
    for a in ALPHAS:
        kept = 0
        for s, lang in cases:
            if kept == PER_ALPHA:
                break
            beam_search.BeamHypotheses.add = _add
            hf = run(s, lang, a)
            beam_search.BeamHypotheses.add = add_fairseq
            other = run(s, lang, a)
            beam_search.BeamHypotheses.add = _add
            if hf is None or other is None or hf == other:
                continue
            kept += 1
            rows.append(f"{a}\t{lang}\t{s}\t{' '.join(map(str, hf))}\t{' '.join(map(str, other))}")
            print(f"a={a} {lang}: {s!r}: {len(hf)} vs {len(other)} ids", file=sys.stderr)
        assert kept == PER_ALPHA, f"only {kept} disagreeing sentences at length_penalty {a}"
    write_lines(OUT, rows)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
