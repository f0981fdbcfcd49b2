#!/usr/bin/env python3
"""A tiny random BERT in Hugging Face's own format, and what transformers computes with it, for the
encoder-only tests of issue 13 (tests/unit/model/test_bert.c, tests/cli/test_embed_cli.sh).

Run with the venv that has transformers 4.40 over Debian's torch 1.13 (tests/reference/
make_minilm_ref.py says how it is made), from the repository root:
    /work/venv-wp-st/bin/python tests/reference/make_bert_fixture.py

Writes tests/golden/bert_tiny/:
  config.json, model.safetensors   transformers.BertModel.save_pretrained (HF tensor names, the
                                   pooler included), every weight random (LayerNorms too), seed 13;
  vocab.txt                        a 60-token uncased vocabulary ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3);
  modules.json, 1_Pooling/config.json, sentence_bert_config.json
                                   sentence-transformers' settings: mean pooling, Normalize,
                                   max_seq_length 16 (so the long sentence is truncated);
  sentences.txt                    the sentences, one per line (one empty, one past 16 tokens);
  ref.txt                          per sentence i: ids_i (BertTokenizer, [CLS] ... [SEP], truncated
                                   to 16), hidden_i (last_hidden_state at those positions, S x 16,
                                   run as one padded batch with its attention mask), vec_i (mean
                                   over the mask, then L2-normalised: what sentence-transformers
                                   does), in golden_txt.h's "name count" format;
  missing_tensor.safetensors       model.safetensors without encoder.layer.1.output.dense.weight;
  bad_shape.safetensors            with encoder.layer.0.intermediate.dense.weight transposed.
"""
import json
import os

import torch
import transformers
from transformers import BertConfig, BertModel, BertTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "golden", "bert_tiny")
MAX_SEQ = 16

WORDS = ("the a man is eating food in beginning was word and god light dark water earth heaven "
         "un hombre est comiendo pan cafe ##s ##ing ##ed . , ! ? ' - dog cat run ##ning house "
         "small big old new good day night lord said to of").split()
SENTENCES = [
    "The man is eating food.",
    "In the beginning was the Word, and the Word was God!",
    "",
    "A small dog runs; the big cat is running in the old house at night?",
    "Un hombre está comiendo pan y café.",
    "light dark water earth heaven light dark water earth heaven light dark water",
    "good",
]


def write_st(path, tensors):
    from safetensors.torch import save_file
    save_file({k: v.contiguous() for k, v in tensors.items()}, path, metadata={"format": "pt"})


def main():
    os.makedirs(os.path.join(OUT, "1_Pooling"), exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    vocab += ["##%c" % c for c in "abcdefghijklmnopqrstuvwxyz"][: 60 - len(vocab)]
    assert len(vocab) == len(set(vocab)) and len(vocab) <= 60, len(vocab)
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))
    torch.manual_seed(13)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=32, max_position_embeddings=32, type_vocab_size=2,
                     hidden_act="gelu", layer_norm_eps=1e-12, pad_token_id=0)
    model = BertModel(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.3 if p.dim() == 2 else 0.1))
            if "LayerNorm.weight" in name:
                p.add_(1.0)
    model.save_pretrained(OUT, safe_serialization=True)
    for f in ("pytorch_model.bin",):
        if os.path.exists(os.path.join(OUT, f)):
            os.remove(os.path.join(OUT, f))
    with open(os.path.join(OUT, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
                  f, indent=2)
    with open(os.path.join(OUT, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 16, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f, indent=2)
    with open(os.path.join(OUT, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": MAX_SEQ, "do_lower_case": False}, f, indent=2)
    with open(os.path.join(OUT, "sentences.txt"), "w", encoding="utf-8") as f:
        f.write("".join(s + "\n" for s in SENTENCES))

    tok = BertTokenizer(os.path.join(OUT, "vocab.txt"), do_lower_case=True)
    enc = tok(SENTENCES, padding=True, truncation=True, max_length=MAX_SEQ, return_tensors="pt")
    with torch.no_grad():
        hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    vec = torch.nn.functional.normalize(vec, p=2, dim=1)
    lines = ["# tests/reference/make_bert_fixture.py: transformers %s, torch %s, float32"
             % (transformers.__version__, torch.__version__)]
    for i in range(len(SENTENCES)):
        n = int(enc["attention_mask"][i].sum())
        ids = enc["input_ids"][i, :n].tolist()
        h = hidden[i, :n].reshape(-1).tolist()
        lines.append("ids_%d %d %s" % (i, n, " ".join(str(x) for x in ids)))
        lines.append("hidden_%d %d %s" % (i, len(h), " ".join("%.9g" % x for x in h)))
        lines.append("vec_%d %d %s" % (i, 16, " ".join("%.9g" % x for x in vec[i].tolist())))
    with open(os.path.join(OUT, "ref.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    from safetensors.torch import load_file
    full = load_file(os.path.join(OUT, "model.safetensors"))
    missing = dict(full)
    del missing["encoder.layer.1.output.dense.weight"]
    write_st(os.path.join(OUT, "missing_tensor.safetensors"), missing)
    bad = dict(full)
    bad["encoder.layer.0.intermediate.dense.weight"] = full["encoder.layer.0.intermediate.dense.weight"].t()
    write_st(os.path.join(OUT, "bad_shape.safetensors"), bad)
    print("wrote", OUT, [len(tok.tokenize(s)) for s in SENTENCES])


if __name__ == "__main__":
    main()
