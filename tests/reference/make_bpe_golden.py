#!/usr/bin/env python3
"""Golden files for byte-level BPE (tests/unit/text/test_bpe.c, tests/cli/test_bpe_cli.sh): a small
byte-level BPE trained with Hugging Face `tokenizers` and the ids `tokenizers` gives for it.

Needs: `tokenizers` from PyPI, pinned (never needed by the product, CI or the C tests: the outputs
are committed), e.g.
    python3 -m venv /tmp/venv-bpe && /tmp/venv-bpe/bin/pip install tokenizers==0.23.3
Run from the repository root:
    /tmp/venv-bpe/bin/python tests/reference/make_bpe_golden.py

Trains a BPE of 400 merges (min frequency 2; the 256 byte characters as the initial alphabet;
"<|endoftext|>" special, id 0) on tests/fixtures/tok_train.txt and the STRESS lines below, and
writes tests/fixtures/bpe/:
  gpt2.json        GPT-2's setup: ByteLevel pre-tokenizer (use_regex, GPT-2's pattern), decoder and
                   post-processor; merges written as "a b" strings (the older serialisation)
  vocab.json, merges.txt   the same model as GPT-2 ships it (model.save)
  llama3.json      the same vocabulary and merges (as ["a", "b"] pairs) with Llama-3's setup: a
                   Split with Llama-3's pattern, ByteLevel without regex, ignore_merges,
                   <|begin_of_text|> / <|end_of_text|> added and a TemplateProcessing BOS
  qwen2.json       Qwen2's: NFC normaliser, Qwen2's pattern (single digits), <|im_start|> and
                   <|im_end|> special, "<tool>" and "café" (decomposed) normalized
                   non-special added tokens, "héllo" a raw (normalized false) one
  smollm.json      SmolLM's: Digits(individual_digits) then ByteLevel with GPT-2's pattern
  lines.txt        the test lines: every 4th line of tok_train.txt and the STRESS lines
  multi.txt        inputs with CR/LF/NUL (which a line cannot hold), as hex of their UTF-8
  ids.V.txt        for V in gpt2 llama3 qwen2 smollm: per line of lines.txt then of multi.txt,
                   the ids of Tokenizer.encode(text) (add_special_tokens=True)
  decode.txt       id lists and the hex of Tokenizer.decode(ids) under gpt2.json: byte tokens
                   that do not form valid UTF-8 (U+FFFD replacement) and special tokens
  VERSIONS         the tokenizers version
The script checks that vocab.json + merges.txt with GPT-2's setup give ids.gpt2.txt.
"""
import json
import os

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures")
OUT = os.path.join(FIX, "bpe")

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
         r"\s*[\r\n]+|\s+(?!\S)|\s+")

STRESS = [
    "It's the man's dog; they'll say we've, I'm, you'd, we're — IT'S SHE'LL WE'VE I'M",
    "'s 't 're 've 'm 'll 'd ' s ''s 'sa 'ſ 'ST 'Ll",
    "'Them 'They 'Moab 'There 'Sthe 'Dthe 'Mthe 'REthe 'VEthe 'LLthe 'ſthe",
    "supercalifragilisticexpialidocious " * 3,
    "a" * 300,
    "Pneumonoultramicroscopicsilicovolcanoconiosis" * 20,
    "emoji 😀😃🤖 👩‍👩‍👧‍👦 🇫🇷 ❤️ done",
    "中文测试：这是一个句子。日本語のテキスト、カタカナ。한국어 문장입니다.",
    "combining: e\u0301 a\u0308 n\u0303 \u0301\u0301 Å A\u030a",
    "NBSP:\u00a0here\u00a0\u00a0twice, thin\u2009space, ideographic\u3000space, nnbsp\u202fend",
    "digits 1 12 123 1234 12345 3.14159 1,000,000 ٣٤٥ ²³ Ⅻ",
    "many     spaces   between      words          end",
    "    leading spaces and trailing spaces    ",
    "tabs\there\t\tand\t \tmixed \t end\t",
    "punctuation!!! ??? ... --- (parens) [brackets] {braces} <angles> \"quotes\" «guillemets»",
    "mixed123abc 456def g7h8i9 x_y_z a-b-c a.b.c",
    "<|endoftext|> in text <|endoftext|><|endoftext|>and<|begin_of_text|> <|im_start|>user<|im_end|>",
    "<tool>call</tool> <tool><tool> a<tool>b",
    "h\u00e9llo he\u0301llo caf\u00e9 cafe\u0301 xh\u00e9lloy",
    "Ünïcödé ÀÉÎÕÜ àéîõü ßẞ ǅ Ωμέγα Ελληνικά Кириллица עברית العربية हिन्दी",
    "\u200b zero\u200bwidth \u200d joiner \ufeff bom \u00ad soft",
    " ",
    "x",
    "",
    "Jesus wept. In the beginning was the Word, and the Word was with God.",
]

MULTI = [
    "line one\nline two",
    "crlf\r\nnext\r\n\r\nend",
    "trailing newlines\n\n\n",
    "\n\nleading newlines",
    "spaces before newline   \n  after",
    "punct!\n\nnext?\r\n",
    "tab\t\n\tboth",
    "nul\x00byte",
    "word\n",
    "   \n",
]


def write_ids(path, tok, texts):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for t in texts:
            f.write(" ".join(str(i) for i in tok.encode(t).ids) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(FIX, "tok_train.txt"), encoding="utf-8") as f:
        train = [l.rstrip("\n") for l in f]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    trainer = trainers.BpeTrainer(vocab_size=257 + 400, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"])
    tok.train_from_iterator(train + STRESS + MULTI, trainer)
    base = json.loads(tok.to_str())
    print("vocab", len(base["model"]["vocab"]), "merges", len(base["model"]["merges"]))

    lines = train[::4] + STRESS
    for l in lines:
        assert "\n" not in l and "\r" not in l and "\x00" not in l
    texts = lines + MULTI

    def variant(edit):
        d = json.loads(json.dumps(base))
        edit(d)
        return d

    def gpt2(d):
        pass

    def split(pattern):
        return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}

    def byte_level(regex):
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": regex}

    def llama3(d):
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split(LLAMA3), byte_level(False)]}
        d["model"]["ignore_merges"] = True

    def qwen2(d):
        d["normalizer"] = {"type": "NFC"}
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split(QWEN2), byte_level(False)]}

    def smollm(d):
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True}, byte_level(True)]}

    toks = {}
    for name, edit in [("gpt2", gpt2), ("llama3", llama3), ("qwen2", qwen2), ("smollm", smollm)]:
        t = Tokenizer.from_str(json.dumps(variant(edit)))
        if name == "llama3":
            t.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>"])
            bos = t.token_to_id("<|begin_of_text|>")
            t.post_processor = processors.Sequence([
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)])])
        if name == "qwen2":
            t.add_special_tokens(["<|im_start|>", "<|im_end|>"])
            t.add_tokens([AddedToken("<tool>", normalized=True, special=False),
                          AddedToken("h\u00e9llo", normalized=False, special=False),
                          AddedToken("cafe\u0301", normalized=True, special=False)])
        t.save(os.path.join(OUT, name + ".json"), pretty=True)
        if name == "gpt2":  # tokenizers writes ["a", "b"] pairs: rewrite as the older "a b" strings
            with open(os.path.join(OUT, name + ".json"), encoding="utf-8") as f:
                d = json.load(f)
            d["model"]["merges"] = [a + " " + b for a, b in d["model"]["merges"]]
            with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as f:
                json.dump(d, f, ensure_ascii=False, indent=2)
        t = Tokenizer.from_file(os.path.join(OUT, name + ".json"))  # exactly what the C test loads
        toks[name] = t
        write_ids(os.path.join(OUT, "ids.%s.txt" % name), t, texts)

    # GPT-2's two files, checked to give the same ids
    tok.model.save(OUT)
    files = Tokenizer(models.BPE.from_file(os.path.join(OUT, "vocab.json"), os.path.join(OUT, "merges.txt")))
    files.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    files.decoder = decoders.ByteLevel()
    files.add_special_tokens(["<|endoftext|>"])
    for t in texts:
        assert files.encode(t).ids == toks["gpt2"].encode(t).ids, t

    with open(os.path.join(OUT, "lines.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(l + "\n" for l in lines))
    with open(os.path.join(OUT, "multi.txt"), "w", newline="\n") as f:
        f.write("".join(m.encode("utf-8").hex() + "\n" for m in MULTI))

    g = toks["gpt2"]
    byte = lambda s: g.token_to_id(s)
    cases = [
        [byte("Ã"), byte("©")],                                  # é: valid
        [byte("Ã")],                                             # C3 alone
        [byte("ð"), byte("Ł"), byte("ĺ")],                       # F0 9F 98: truncated 4-byte
        [byte("ð"), byte("Ł"), byte("ĺ"), byte("A")],            # ... then A
        [byte("í"), byte("ł"), byte("Ģ")],                       # ED A0 80: a surrogate
        [byte("À"), byte("¯")],                                  # C0 AF: overlong
        [byte("ÿ"), byte("þ"), byte("A")],                       # FF FE
        [byte("ð"), byte("Ģ"), byte("Ģ")],                       # F0 80 80
        [byte("ô"), byte("Ĳ"), byte("Ģ"), byte("Ģ")],             # F4 90 80 80: above U+10FFFF
        [0, byte("A"), 0],                                       # special tokens kept
    ] + [g.encode(l).ids for l in STRESS[:8]]
    with open(os.path.join(OUT, "decode.txt"), "w", newline="\n") as f:
        for ids in cases:
            assert all(i is not None for i in ids)
            f.write(" ".join(map(str, ids)) + "\t" + g.decode(ids, skip_special_tokens=False).encode("utf-8").hex()
                    + "\t" + g.decode(ids, skip_special_tokens=True).encode("utf-8").hex() + "\n")
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write("tokenizers %s\n" % tokenizers.__version__)


if __name__ == "__main__":
    main()
