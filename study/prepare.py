#!/usr/bin/env python3
"""The position-encoding study's data (docs/STUDY.md, "The splits"), made once per output folder.

    study/prepare.py --tfm TFM --data DATA --out DIR [--heldout-pct 10 | --heldout "Book C,..."]
                     [--min-long 1000] [--vocab 8000] [--context 64] [--max-mt-len 1024]

DATA holds {train,valid,test}.{en,es,ref} (scripts/get-corpus): one verse a line, aligned, .ref
the English reference "<Book> <chapter>:<verse>". The three files are pooled and re-split by
chapter:

- held-out chapters: those whose chapter name "<Book> <chapter>" has SHA-1 (UTF-8 bytes, read as
  a big-endian integer) mod 100 below --heldout-pct (or the chapters named in --heldout). Every
  verse of a held-out chapter is removed from every training set (translation and language model);
- the tokenizer: `tfm tokenize --train` (joint English+Spanish SentencePiece, --vocab pieces) on
  the training chapters only; every length below is in its subword tokens (no BOS/EOS);
- L: the largest source length such that at least --min-long held-out verses are longer;
- translation training pairs: the training chapters' verses whose English source has at most L
  tokens (and at most max_len - 1 target tokens);
- translation tests: every held-out verse (test/single), and the concatenations of 2, 4 and 8
  consecutive verses (verse numbers v, v+1, ...) of a held-out chapter, non-overlapping, joined
  with a space on both sides (test/cat2, cat4, cat8);
- language model: the English running text of the training chapters (sorted by book name and
  chapter number, joined) cut at word boundaries into lines of at most C - 1 tokens (lm/train.txt);
  the held-out chapters' running text cut the same way into lines of at most k*C - 1 tokens for
  k = 1, 2, 4, 8, 16 (lm/eval_k{k}.txt), so that BOS + the line fits a context of k*C.

Writes DIR/params.sh (shell variables for study/pe_study.sh) and DIR/split.txt (what was made).
Python's standard library only; tfm does the tokenizing.
"""
import argparse
import collections
import hashlib
import os
import subprocess
import sys
import tempfile


def die(msg):
    sys.exit(f"prepare.py: {msg}")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1] if os.path.getsize(path) else []


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    os.replace(tmp, path)


def chapter_of(ref):
    book, cv = ref.rsplit(" ", 1)
    c, v = cv.split(":")
    return book, int(c), int(v)


def held_out_by_hash(name, pct):
    return int.from_bytes(hashlib.sha1(name.encode("utf-8")).digest(), "big") % 100 < pct


def encode_lengths(tfm, tok, lines):
    """Subword tokens of each line (tfm tokenize --encode)."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in"), os.path.join(d, "out")
        write(src, lines)
        subprocess.run([tfm, "tokenize", "--encode", "--tokenizer", tok, "--input", src, "--output", out], check=True)
        return [len(line.split()) for line in read(out)]


def pack(words, word_len, budget):
    """Greedy lines of whole words with at most `budget` tokens each (a longer word alone is skipped)."""
    lines, cur, n = [], [], 0
    for w in words:
        k = word_len[w]
        if k > budget:
            continue
        if n + k > budget and cur:
            lines.append(" ".join(cur))
            cur, n = [], 0
        cur.append(w)
        n += k
    if cur and n == budget:
        lines.append(" ".join(cur))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfm", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--heldout-pct", type=int, default=10)
    ap.add_argument("--heldout", default="", help="comma-separated chapter names instead of the hash rule")
    ap.add_argument("--min-long", type=int, default=1000)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--max-mt-len", type=int, default=1024)
    a = ap.parse_args()

    verses = []  # (book, chapter, verse, en, es)
    for part in ("train", "valid", "test"):
        p = os.path.join(a.data, part)
        if not os.path.exists(p + ".ref"):
            if part == "train":
                die(f"{p}.ref is missing: the study needs verse references (scripts/get-corpus writes them)")
            continue
        en, es, ref = read(p + ".en"), read(p + ".es"), read(p + ".ref")
        if not (len(en) == len(es) == len(ref)):
            die(f"{p}.en/.es/.ref differ in length: {len(en)}, {len(es)}, {len(ref)}")
        for e, s, r in zip(en, es, ref):
            b, c, v = chapter_of(r)
            verses.append((b, c, v, e, s))
    verses.sort(key=lambda x: (x[0], x[1], x[2]))
    chapters = sorted({(b, c) for b, c, _, _, _ in verses})
    named = {x.strip() for x in a.heldout.split(",") if x.strip()}
    held = {(b, c) for b, c in chapters
            if (f"{b} {c}" in named if named else held_out_by_hash(f"{b} {c}", a.heldout_pct))}
    if named and len(held) != len(named):
        die(f"--heldout names chapters the corpus lacks: {sorted(named - {f'{b} {c}' for b, c in held})}")
    if not held or len(held) == len(chapters):
        die(f"{len(held)} of {len(chapters)} chapters held out: change --heldout-pct or --heldout")
    train = [x for x in verses if (x[0], x[1]) not in held]
    test = [x for x in verses if (x[0], x[1]) in held]

    out = a.out
    tok = os.path.join(out, "tok.model")
    write(os.path.join(out, "tok_train.en"), [x[3] for x in train])
    write(os.path.join(out, "tok_train.es"), [x[4] for x in train])
    subprocess.run([a.tfm, "tokenize", "--train", "--input",
                    os.path.join(out, "tok_train.en") + "," + os.path.join(out, "tok_train.es"),
                    "--vocab-size", str(a.vocab), "--save-model", tok], check=True)

    src_len_train = encode_lengths(a.tfm, tok, [x[3] for x in train])
    tgt_len_train = encode_lengths(a.tfm, tok, [x[4] for x in train])
    src_len_test = encode_lengths(a.tfm, tok, [x[3] for x in test])
    desc = sorted(src_len_test, reverse=True)
    if len(desc) < a.min_long + 1:
        die(f"only {len(desc)} held-out verses: --min-long {a.min_long} needs more (more chapters held out)")
    L = desc[a.min_long - 1] - 1
    n_long = sum(1 for n in src_len_test if n > L)

    # translation tests: single verses and concatenations of consecutive verses of a chapter
    cats = {1: test}
    for k in (2, 4, 8):
        rows, i = [], 0
        while i + k <= len(test):
            w = test[i:i + k]
            if all(w[j][:2] == w[0][:2] and w[j][2] == w[0][2] + j for j in range(k)):
                rows.append((w[0][0], w[0][1], w[0][2], " ".join(x[3] for x in w), " ".join(x[4] for x in w)))
                i += k
            else:
                i += 1
        cats[k] = rows
    test_len = {k: encode_lengths(a.tfm, tok, [x[3] for x in rows]) for k, rows in cats.items()}
    longest = max(max(v) for v in test_len.values() if v)
    max_len = min(a.max_mt_len, max(longest, max(tgt_len_train) + 1, L + 1))
    for k, rows in cats.items():
        name = "single" if k == 1 else f"cat{k}"
        write(os.path.join(out, "test", name + ".en"), [x[3] for x in rows])
        write(os.path.join(out, "test", name + ".es"), [x[4] for x in rows])
        write(os.path.join(out, "test", name + ".len"), [str(n) for n in test_len[k]])
    keep = [i for i, x in enumerate(train) if src_len_train[i] <= L and tgt_len_train[i] <= max_len - 1]
    write(os.path.join(out, "mt", "train.en"), [train[i][3] for i in keep])
    write(os.path.join(out, "mt", "train.es"), [train[i][4] for i in keep])

    # the language model's running text
    C = a.context
    words_train = [w for x in train for w in x[3].split()]
    words_test = [w for x in test for w in x[3].split()]
    vocab_words = sorted(set(words_train) | set(words_test))
    word_len = dict(zip(vocab_words, encode_lengths(a.tfm, tok, vocab_words)))
    lm_train = pack(words_train, word_len, C - 1)
    write(os.path.join(out, "lm", "train.txt"), lm_train)
    lm_counts = {}
    for k in (1, 2, 4, 8, 16):
        lines = pack(words_test, word_len, k * C - 1)
        write(os.path.join(out, "lm", f"eval_k{k}.txt"), lines)
        lm_counts[k] = len(lines)
    # check the word-additive lengths on the evaluation lines: tfm's own count must not exceed the budget
    for k in (1, 16):
        lens = encode_lengths(a.tfm, tok, read(os.path.join(out, "lm", f"eval_k{k}.txt")))
        if lens and max(lens) > k * C - 1:
            die(f"lm/eval_k{k}.txt: a line has {max(lens)} tokens, more than {k * C - 1}")

    edges = sorted({max(1, L // 2), L, L + max(1, L // 2), 2 * L, 3 * L, 4 * L, 6 * L, 8 * L})
    params = {
        "L": L, "MT_MAX_LEN": max_len, "CONTEXT": C, "VOCAB": a.vocab, "BUCKETS": ",".join(map(str, edges)),
        "N_TRAIN_PAIRS": len(keep), "N_TRAIN_CHAPTER_VERSES": len(train), "N_HELDOUT": len(test),
        "N_HELDOUT_LONG": n_long, "N_HELDOUT_CHAPTERS": len(held), "N_CHAPTERS": len(chapters),
        "N_CAT2": len(cats[2]), "N_CAT4": len(cats[4]), "N_CAT8": len(cats[8]),
        "N_LM_TRAIN": len(lm_train), "N_LM_EVAL_K1": lm_counts[1], "N_LM_EVAL_K16": lm_counts[16],
    }
    write(os.path.join(out, "params.sh.new"), [f"{k}={v}" for k, v in params.items()])
    summary = [f"{k} {v}" for k, v in params.items()]
    summary.append("held-out chapters: " + ", ".join(f"{b} {c}" for b, c in sorted(held)))
    summary.append(f"longest test source {longest} tokens (translation max_len {max_len})")
    write(os.path.join(out, "split.txt"), summary)
    os.replace(os.path.join(out, "params.sh.new"), os.path.join(out, "params.sh"))  # last: marks it done
    print("\n".join(summary[:-2]))


if __name__ == "__main__":
    main()
