"""A random Marian (opus-mt's shape unless told otherwise) as a Hugging Face folder, for
bench/marian_speed.sh: config.json, model.safetensors (save_pretrained, safe_serialization),
source.spm and target.spm (the tiny SentencePiece models of tests/fixtures/marian), and a
vocab.json of vocab_size pieces (the fixture's pieces, then "▁wN" fillers, <pad> last), so that
tfm, CTranslate2's converter and transformers all read the same folder. Random weights: the
timings decode to the length limit, the same limit for every engine.

    /work/venv-hf/bin/python bench/marian_make.py OUT_DIR [--d-model 512] [--heads 8] [--layers 6]
                                                          [--ffn 2048] [--vocab 58101] [--seed 1]

Pinned: transformers 4.40.2, torch 1.13.
"""
import argparse
import json
import os
import tempfile

import torch
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "marian")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--ffn", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=58101)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    base = json.load(open(os.path.join(FIX, "vocab.json"), encoding="utf-8"))
    pieces = [p for p, _ in sorted(base.items(), key=lambda kv: kv[1]) if p != "<pad>"]
    assert a.vocab > len(pieces) + 1, "vocab too small for the fixture's pieces"
    pieces += [f"\u2581w{i}" for i in range(a.vocab - 1 - len(pieces))]
    vocab = {p: i for i, p in enumerate(pieces)}
    vocab["<pad>"] = a.vocab - 1
    pad = a.vocab - 1
    cfg = MarianConfig(vocab_size=a.vocab, decoder_vocab_size=a.vocab, d_model=a.d_model, encoder_layers=a.layers,
                       decoder_layers=a.layers, encoder_attention_heads=a.heads, decoder_attention_heads=a.heads,
                       encoder_ffn_dim=a.ffn, decoder_ffn_dim=a.ffn, max_position_embeddings=512,
                       activation_function="swish", scale_embedding=True, static_position_embeddings=True,
                       share_encoder_decoder_embeddings=True, pad_token_id=pad, decoder_start_token_id=pad,
                       eos_token_id=0, forced_eos_token_id=0, bad_words_ids=[[pad]])
    model = MarianMTModel(cfg).eval()
    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False)
        tok = MarianTokenizer(source_spm=os.path.join(FIX, "source.spm"), target_spm=os.path.join(FIX, "target.spm"),
                              vocab=os.path.join(tmp, "vocab.json"))
        tok.save_pretrained(a.out)  # vocab.json, the two .spm, tokenizer_config.json as transformers writes them
    print(f"marian_make: {a.out}: d_model {a.d_model}, {a.heads} heads, {a.layers}+{a.layers} layers, "
          f"FFN {a.ffn}, vocab {a.vocab}, {sum(p.numel() for p in model.parameters())} parameters")


if __name__ == "__main__":
    main()
