#!/usr/bin/env python3
"""Golden data of the NLLB-200 / M2M100 family (docs/NLLB.md): a tiny model folder as a user gets it
from the Hugging Face hub (after converting to safetensors), and what transformers computes with it.

Pinned: transformers 4.40.2, sentencepiece 0.2.0, tokenizers 0.19.1, torch 1.13 (Debian), float32,
one thread. Run from the repository root:

    /work/venv-hf/bin/python tests/reference/make_nllb_golden.py

Writes tests/fixtures/nllb/ (the folder: config.json, generation_config.json, model.safetensors,
sentencepiece.bpe.model, tokenizer_config.json, special_tokens_map.json, added_tokens.json; no
tokenizer.json: 340 KB that tfm does not read, and NllbTokenizerFast converts the slow files) and
tests/golden/nllb/ (the references):

  sentences.txt    the English fixture sentences, one a line (one holds '☃' and '€', not in the
                   SentencePiece vocabulary: <unk>)
  ids.txt          per sentence i: "ids_i n ..." NllbTokenizer (slow) ids with src_lang eng_Latn,
                   today's rule [eng_Latn] pieces </s>; "legacy_i n ..." the same with
                   legacy_behaviour=True: pieces </s> [eng_Latn]. The fast tokenizer is checked to
                   give the same ids (the script fails otherwise).
  src.ids, dec.ids the padded batch of the logits check: source rows (tokenizer ids, unpadded) and
                   decoder input rows ([</s>, spa_Latn, target pieces...], unpadded)
  logits.f32       (B, T, V) little-endian float32 logits of M2M100ForConditionalGeneration on that
                   batch, right-padded with <pad> (attention_mask on the source); rows at padded
                   decoder positions are garbage and not compared
  greedy.txt,      per sentence, generate(forced_bos_token_id=spa_Latn, num_beams=1|4,
  beam4.txt        length_penalty=1.0, early_stopping=True, max_new_tokens=MAX_NEW) decoded with
                   skip_special_tokens=True, clean_up_tokenization_spaces=False; only sentences that
                   end (EOS) before the limit are kept; a sentence not kept is an empty line
  greedy.ids,      the generated ids after </s> spa_Latn, without EOS, one line each
  beam4.ids
  greedy_fra.*,    the same with fra_Latn forced: a code the model never saw first in training, so
  beam4_fra.*      forcing it (score 0, not counted by the length penalty) decides the output
  lang_ids.txt     "eng_Latn 501" ... the language codes' ids

The model is M2M100ForConditionalGeneration (d_model 32, 4 heads, 2+2 layers, d_ff 64,
scale_embedding true, ReLU), randomly initialised and trained for a few hundred steps on
tests/fixtures/tok_train.txt's English/Spanish verses as eng_Latn → spa_Latn so its logits are
not near-ties. The tokenizer's SentencePiece model is BPE trained on the same file; the language
codes are eng_Latn, fra_Latn, spa_Latn at the ids NLLB-200 gives its codes (right after the
SentencePiece pieces, <mask> last), and config.json's vocab_size is 2 more than the tokenizer's
(as facebook/nllb-200-*: 256206 rows for 256204 tokens).
"""
import io
import json
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import sentencepiece as spm
import torch
import transformers
from transformers import M2M100Config, M2M100ForConditionalGeneration, NllbTokenizer, NllbTokenizerFast

assert transformers.__version__ == "4.40.2", transformers.__version__
assert spm.__version__ == "0.2.0", spm.__version__

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests/fixtures/nllb")
GOLD = os.path.join(ROOT, "tests/golden/nllb")
TRAIN = os.path.join(ROOT, "tests/fixtures/tok_train.txt")
LANGS = ["eng_Latn", "fra_Latn", "spa_Latn"]
SP_VOCAB = 500
MAX_NEW = 48

SENTENCES = [
    "The name of the man was Elimelech.",
    "They lived there about ten years.",
    "Naomi said to her two daughters-in-law, “Go, return each of you to her mother’s house.”",
    "Ruth said, “Don’t urge me to leave you.”",
    "The Father loves the Son.",
    "In the beginning was the Word.",
    "A snowman ☃ costs 5 € in Moab.",
    "Jonah went down to Joppa.",
]


def layout_tokenizer(tmp):
    """The NllbTokenizer folder with NLLB-200's id layout: 4.40.2's constructor adds <mask> before
    additional_special_tokens, so the ids are fixed in tokenizer_config.json's added_tokens_decoder
    and the tokenizer reloaded from it."""
    sp_path = os.path.join(tmp, "sentencepiece.bpe.model")
    model = io.BytesIO()  # trained from an iterator into memory: no path is recorded in the model
    with open(TRAIN, encoding="utf-8") as f:
        spm.SentencePieceTrainer.train(sentence_iterator=f, model_writer=model, vocab_size=SP_VOCAB,
                                       model_type="bpe", character_coverage=1.0, num_threads=1,
                                       minloglevel=2)
    with open(sp_path, "wb") as f:
        f.write(model.getvalue())
    tok = NllbTokenizer(sp_path, additional_special_tokens=LANGS, src_lang="eng_Latn", tgt_lang="spa_Latn")
    out = os.path.join(tmp, "tok")
    tok.save_pretrained(out)
    cfg_path = os.path.join(out, "tokenizer_config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    dec = cfg["added_tokens_decoder"]
    by_content = {v["content"]: v for v in dec.values()}
    n_sp = SP_VOCAB + 1  # fairseq offset 1: piece i of SentencePiece is id i + 1
    new = {k: v for k, v in dec.items() if int(k) < 4}
    for i, code in enumerate(LANGS):
        new[str(n_sp + i)] = by_content[code]
    new[str(n_sp + len(LANGS))] = by_content["<mask>"]
    cfg["added_tokens_decoder"] = new
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
    for name in os.listdir(out):
        if name == "tokenizer.json":
            os.remove(os.path.join(out, name))
    slow = NllbTokenizer.from_pretrained(out, src_lang="eng_Latn", tgt_lang="spa_Latn")
    want = {c: n_sp + i for i, c in enumerate(LANGS)}
    want["<mask>"] = n_sp + len(LANGS)
    got = {c: slow.convert_tokens_to_ids(c) for c in want}
    assert got == want, (got, want)
    fast = NllbTokenizerFast.from_pretrained(out, src_lang="eng_Latn", tgt_lang="spa_Latn")
    got = {c: fast.convert_tokens_to_ids(c) for c in want}
    assert got == want, (got, want)
    return slow, fast


def pairs():
    with open(TRAIN, encoding="utf-8") as f:
        lines = [l.strip() for l in f if l.strip()]
    split = next(i for i, l in enumerate(lines) if l.startswith("Y ACONTECIÓ en los días"))
    eng, spa = lines[:split], lines[split:]
    n = min(len(eng), len(spa))
    return list(zip(eng[:n], spa[:n]))


def train(model, tok, data, steps=400, batch=16, max_tokens=40):
    torch.manual_seed(1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    enc = [(tok(e, truncation=True, max_length=max_tokens).input_ids,
            tok(text_target=s, truncation=True, max_length=max_tokens).input_ids) for e, s in data]
    rng = np.random.default_rng(1)
    pad = tok.pad_token_id
    for step in range(steps):
        idx = rng.choice(len(enc), batch, replace=False)
        src = [enc[i][0] for i in idx]
        tgt = [enc[i][1] for i in idx]
        S, T = max(map(len, src)), max(map(len, tgt))
        src_t = torch.tensor([r + [pad] * (S - len(r)) for r in src])
        lab = torch.tensor([r + [-100] * (T - len(r)) for r in tgt])
        out = model(input_ids=src_t, attention_mask=(src_t != pad).long(), labels=lab)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step} loss {out.loss.item():.3f}", file=sys.stderr)
    model.eval()


def write_lines(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(r + "\n")


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    os.makedirs(GOLD, exist_ok=True)
    if os.path.isdir(FIX):
        shutil.rmtree(FIX)
    with tempfile.TemporaryDirectory() as tmp:
        slow, fast = layout_tokenizer(tmp)
        V_tok = len(slow)
        cfg = M2M100Config(vocab_size=V_tok + 2, d_model=32, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                           decoder_ffn_dim=64, max_position_embeddings=128, scale_embedding=True,
                           activation_function="relu", dropout=0.0, attention_dropout=0.0,
                           encoder_layerdrop=0.0, decoder_layerdrop=0.0, pad_token_id=1, bos_token_id=0,
                           eos_token_id=2, decoder_start_token_id=2, tokenizer_class="NllbTokenizer")
        model = M2M100ForConditionalGeneration(cfg)
        train(model, slow, pairs())
        model.save_pretrained(FIX, safe_serialization=True)
        slow.save_pretrained(FIX)  # sentencepiece.bpe.model, tokenizer_config.json, special_tokens_map.json

    tok = NllbTokenizer.from_pretrained(FIX, src_lang="eng_Latn", tgt_lang="spa_Latn")
    ftok = NllbTokenizerFast.from_pretrained(FIX, src_lang="eng_Latn", tgt_lang="spa_Latn")
    legacy = NllbTokenizer.from_pretrained(FIX, src_lang="eng_Latn", tgt_lang="spa_Latn", legacy_behaviour=True)
    model = M2M100ForConditionalGeneration.from_pretrained(FIX).eval()
    spa = tok.convert_tokens_to_ids("spa_Latn")

    write_lines(os.path.join(GOLD, "sentences.txt"), SENTENCES)
    write_lines(os.path.join(GOLD, "lang_ids.txt"), [f"{c} {tok.convert_tokens_to_ids(c)}" for c in LANGS])
    with open(os.path.join(GOLD, "ids.txt"), "w") as f:
        f.write("# tests/reference/make_nllb_golden.py: transformers 4.40.2, sentencepiece 0.2.0\n")
        for i, s in enumerate(SENTENCES):
            ids = tok(s).input_ids
            assert ftok(s).input_ids == ids, (s, ftok(s).input_ids, ids)
            f.write(f"ids_{i} {len(ids)} {' '.join(map(str, ids))}\n")
            lids = legacy(s).input_ids
            f.write(f"legacy_{i} {len(lids)} {' '.join(map(str, lids))}\n")
    assert 3 in tok(SENTENCES[6]).input_ids, "the unknown-piece sentence has no <unk>"

    # logits of a padded batch: sources 0, 2, 4; decoder rows from their greedy outputs' pieces
    # (teacher forcing on the Spanish of the training text's first verses)
    pick = [0, 2, 4]
    refs = [p[1] for p in pairs()[:3]]
    src_rows = [tok(SENTENCES[i]).input_ids for i in pick]
    dec_rows = [[2] + tok(text_target=r, truncation=True, max_length=20).input_ids[:-1] for r in refs]
    S, T = max(map(len, src_rows)), max(map(len, dec_rows))
    src = torch.tensor([r + [1] * (S - len(r)) for r in src_rows])
    dec = torch.tensor([r + [1] * (T - len(r)) for r in dec_rows])
    with torch.no_grad():
        logits = model(input_ids=src, attention_mask=(src != 1).long(), decoder_input_ids=dec).logits
    assert logits.shape == (3, T, cfg.vocab_size)
    logits.numpy().astype("<f4").tofile(os.path.join(GOLD, "logits.f32"))
    write_lines(os.path.join(GOLD, "src.ids"), [" ".join(map(str, r)) for r in src_rows])
    write_lines(os.path.join(GOLD, "dec.ids"), [" ".join(map(str, r)) for r in dec_rows])
    top = torch.topk(logits[0, 1], 2).values
    print(f"top-2 logit gap at row 0, position 1: {float(top[0] - top[1]):.3f}", file=sys.stderr)

    fra = tok.convert_tokens_to_ids("fra_Latn")
    for name, beams, lang in (("greedy", 1, spa), ("beam4", 4, spa), ("greedy_fra", 1, fra), ("beam4_fra", 4, fra)):
        texts, idl = [], []
        for s in SENTENCES:
            enc = tok(s, return_tensors="pt")
            with torch.no_grad():
                out = model.generate(**enc, forced_bos_token_id=lang, num_beams=beams, length_penalty=1.0,
                                     early_stopping=True, max_new_tokens=MAX_NEW)[0].tolist()
            assert out[:2] == [2, lang], out[:2]
            ended = out[-1] == 2 and len(out) - 1 < MAX_NEW
            body = out[2:-1] if ended else []
            texts.append(tok.decode(out, skip_special_tokens=True, clean_up_tokenization_spaces=False)
                         if ended else "")
            idl.append(" ".join(map(str, body)))
            print(f"{name}: {s!r} -> {texts[-1]!r}{'' if ended else ' (hit the limit: not kept)'}",
                  file=sys.stderr)
        write_lines(os.path.join(GOLD, f"{name}.txt"), texts)
        write_lines(os.path.join(GOLD, f"{name}.ids"), idl)
    print("wrote", FIX, GOLD, file=sys.stderr)


if __name__ == "__main__":
    main()
