"""Golden data for tfm's Hugging Face Marian (opus-mt) loader: a tiny MarianMTModel, randomly
initialised and briefly trained, saved as a user's converted opus-mt folder, and what transformers
computes with it.

Pinned: transformers 4.40.2, torch 1.13 (Debian), sentencepiece 0.2.0, numpy < 2; no sacremoses
(so MarianTokenizer's Moses normaliser is the identity, as in transformers' default install; 4.40.2
never calls it while tokenising anyway). Run from the repository root:

    /work/venv-hf/bin/python tests/reference/make_marian_golden.py

Writes tests/fixtures/marian/ (the model folder: config.json, model.safetensors, source.spm,
target.spm, vocab.json, tokenizer_config.json, special_tokens_map.json, generation_config.json)
and tests/fixtures/marian/ref/:
  tok_src.txt   source lines for the tokenizer (>>xx<< codes, unknown characters, empty text)
  tok_ids.txt   MarianTokenizer(line).input_ids per line, space-separated (</s> appended)
  dec_src.txt   source lines for decoding; every one ends (EOS) before the length limit
  greedy.txt    model.generate(num_beams=1), batch_decode(skip_special_tokens=True)
  beam4.txt     model.generate(num_beams=4, length_penalty=1.0, early_stopping=True), likewise
  logits.txt    a padded batch: "src B S" ids, "tgt B T" decoder inputs (start token first),
                "logits B*T*V" (golden_txt format), "shape 3" = B, S/T packed below
The model: vocab.json is opus-mt's layout (</s> 0, <unk> 1, the language codes >>es<< and >>fr<<,
the pieces of both SentencePiece models, <pad> last = pad = decoder_start_token_id); separate
source.spm and target.spm (different vocabulary sizes, so their pieces differ); d_model 32, 4
heads, 2+2 layers, FFN 64, swish, sinusoidal positions, shared embeddings, final_logits_bias. The
task: >>es<< copies the sentence, >>fr<< reverses its words; trained for a few hundred steps so
that the logits are far from ties.

With --limit it trains nothing: it loads the committed tests/fixtures/marian and writes only
tests/fixtures/marian/ref/limit.tsv, the length-limit case (docs/MARIAN.md, "The length limit"):
config.json sets forced_eos_token_id 0, so generate's ForcedEOSTokenLogitsProcessor makes the last
token allowed by max_length EOS (log p 0). For each sentence of ref/dec_src.txt, max_length in
LIMIT_LENGTHS and num_beams 1 and 4 (length_penalty 1.0, early_stopping=True), one line:
    num_beams <TAB> max_length <TAB> source <TAB> the ids after the start token (EOS included)
Most of them reach the limit (the script checks that enough do); the rest end before it.

With --separate it writes tests/fixtures/marian_sep/ instead (the same files and references, plus
target_vocab.json): share_encoder_decoder_embeddings false and separate_vocabs, as the opus-mt-tc
models with two vocabularies are: vocab.json holds the specials, the codes and source.spm's
pieces, target_vocab.json the specials and target.spm's pieces (different sizes: vocab_size and
decoder_vocab_size), the specials at the same ids in both (</s> 0, <unk> 1, <pad> 2 = pad =
decoder_start_token_id); model.encoder.embed_tokens and model.decoder.embed_tokens apart (both of
vocab_size rows in transformers 4.40.2: MarianModel deep-copies one nn.Embedding(vocab_size) for
each) and lm_head untied (tie_word_embeddings false: tied, transformers would give lm_head the
decoder's vocab_size rows against final_logits_bias's decoder_vocab_size and fail).
"""
import json
import os
import random
import shutil
import sys
import tempfile

import sentencepiece as spm
import torch
import transformers
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

assert transformers.__version__ == "4.40.2", transformers.__version__
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEPARATE = "--separate" in sys.argv[1:]
LIMIT = "--limit" in sys.argv[1:]
LIMIT_LENGTHS = (4, 7, 12)  # max_length of the length-limit cases: 4 and 7 shorter than every output, 12 than some
OUT = os.path.join(ROOT, "tests", "fixtures", "marian_sep" if SEPARATE else "marian")
MAX_LENGTH = 48  # generate's max_length (start token included)
random.seed(1)
torch.manual_seed(1)


def chunks():
    """Short sentences: runs of 2-5 words of the fixture text."""
    words_lines = [l.split() for l in open(os.path.join(ROOT, "tests", "fixtures", "tok_train.txt"), encoding="utf-8")]
    out = []
    for ws in words_lines:
        i = 0
        while i < len(ws):
            n = random.randint(2, 5)
            out.append(" ".join(ws[i:i + n]))
            i += n
    return [c for c in out if c]


def pair(s):
    if random.random() < 0.7:
        return ">>es<< " + s, s
    return ">>fr<< " + s, " ".join(reversed(s.split()))


def train_spm(lines, path, vocab):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        name = f.name
    spm.SentencePieceTrainer.train(input=name, model_prefix=path, vocab_size=vocab, model_type="unigram",
                                   character_coverage=1.0, num_threads=1, minloglevel=2,
                                   normalization_rule_name="identity")  # no NFKC table: a small file
    os.remove(name)
    os.rename(path + ".model", path + ".spm")
    os.remove(path + ".vocab")


def add_pieces(vocab, spm_path):
    """Appends the pieces of a SentencePiece model that vocab lacks (no control or unknown piece)."""
    sp = spm.SentencePieceProcessor(model_file=spm_path)
    for i in range(sp.get_piece_size()):
        p = sp.id_to_piece(i)
        if not (sp.is_control(i) or sp.is_unknown(i) or p in vocab):
            vocab[p] = len(vocab)


def build_tokenizer(work, sents):
    train_spm(sents, os.path.join(work, "source"), 180)
    train_spm(sents, os.path.join(work, "target"), 140)
    if SEPARATE:
        return build_separate(work)
    vocab = {"</s>": 0, "<unk>": 1, ">>es<<": 2, ">>fr<<": 3}
    for side in ("source", "target"):
        add_pieces(vocab, os.path.join(work, side + ".spm"))
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(work, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=2)
    tok = MarianTokenizer(source_spm=os.path.join(work, "source.spm"), target_spm=os.path.join(work, "target.spm"),
                          vocab=os.path.join(work, "vocab.json"))
    return tok, len(vocab)


def build_separate(work):
    """vocab.json: specials, codes, source pieces; target_vocab.json: specials, target pieces."""
    sizes = []
    for side, name, extra in (("source", "vocab.json", [">>es<<", ">>fr<<"]), ("target", "target_vocab.json", [])):
        vocab = {"</s>": 0, "<unk>": 1, "<pad>": 2}
        for p in extra:
            vocab[p] = len(vocab)
        add_pieces(vocab, os.path.join(work, side + ".spm"))
        with open(os.path.join(work, name), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False, indent=2)
        sizes.append(len(vocab))
    tok = MarianTokenizer(source_spm=os.path.join(work, "source.spm"), target_spm=os.path.join(work, "target.spm"),
                          vocab=os.path.join(work, "vocab.json"),
                          target_vocab_file=os.path.join(work, "target_vocab.json"), separate_vocabs=True)
    return tok, sizes


def train(model, tok, pairs, steps=1500, batch=32):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        b = random.sample(pairs, batch)
        enc = tok([s for s, _ in b], text_target=[t for _, t in b], return_tensors="pt", padding=True)
        labels = enc["labels"]
        labels[labels == tok.pad_token_id] = -100
        loss = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 250 == 0 or step == steps - 1:
            print(f"step {step} loss {loss.item():.4f}", file=sys.stderr)
    model.eval()


def write_golden(path, arrays):
    with open(path, "w") as f:
        f.write("# tests/reference/make_marian_golden.py (transformers 4.40.2)\n")
        for name, vals in arrays:
            vals = [float(v) for v in vals]
            f.write(f"{name} {len(vals)}\n")
            f.write(" ".join(repr(v) if isinstance(v, int) else f"{v:.9g}" for v in vals) + "\n")


def main():
    sents = chunks()
    pairs = [pair(s) for s in sents]
    work = tempfile.mkdtemp()
    tok, V = build_tokenizer(work, sents)
    Vs = V
    if SEPARATE:
        (Vs, V), pad = V, 2
    else:
        pad = V - 1
    cfg = MarianConfig(vocab_size=Vs, decoder_vocab_size=V, d_model=32, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                       max_position_embeddings=64, activation_function="swish", scale_embedding=True,
                       static_position_embeddings=True, share_encoder_decoder_embeddings=not SEPARATE, pad_token_id=pad,
                       decoder_start_token_id=pad, eos_token_id=0, forced_eos_token_id=0, bad_words_ids=[[pad]],
                       dropout=0.1, attention_dropout=0.0, activation_dropout=0.0, max_length=MAX_LENGTH,
                       num_beams=4, tie_word_embeddings=not SEPARATE)
    model = MarianMTModel(cfg)
    train(model, tok, pairs)

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "ref"))
    model.save_pretrained(OUT, safe_serialization=True)
    tok.save_pretrained(OUT)
    for extra in ("added_tokens.json",):
        if os.path.exists(os.path.join(OUT, extra)):
            os.remove(os.path.join(OUT, extra))
    shutil.rmtree(work)
    tok = MarianTokenizer.from_pretrained(OUT)
    model = MarianMTModel.from_pretrained(OUT).eval()

    # tokenizer ids: codes, no code, an unknown code, unknown characters, a code inside the text
    test = [s for s, _ in random.sample(pairs, 14)]
    tok_src = test + ["Naomi went to Moab", ">>fr<< Ω the land ☃ of Judah", ">>xx<< the land", "the >>es<< land",
                      ">>es<<", "  spaces   around  ", "Ruth, Naomi's daughter-in-law! Really?"]
    with open(os.path.join(OUT, "ref", "tok_src.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(tok_src) + "\n")
    with open(os.path.join(OUT, "ref", "tok_ids.txt"), "w") as f:
        for s in tok_src:
            f.write(" ".join(str(i) for i in tok(s).input_ids) + "\n")

    # greedy and beam 4 on sentences that end before the limit
    dec_src, greedy, beam = [], [], []
    with torch.no_grad():
        for s in test + ["Naomi went to Moab", ">>fr<< the land of Judah Ω"]:
            enc = tok([s], return_tensors="pt")
            g = model.generate(**enc, num_beams=1, do_sample=False, max_length=MAX_LENGTH)
            b = model.generate(**enc, num_beams=4, length_penalty=1.0, early_stopping=True, do_sample=False,
                               max_length=MAX_LENGTH)
            if g.shape[1] >= MAX_LENGTH or b.shape[1] >= MAX_LENGTH:
                print(f"skipped (length limit): {s}", file=sys.stderr)
                continue
            dec_src.append(s)
            greedy.append(tok.batch_decode(g, skip_special_tokens=True)[0])
            beam.append(tok.batch_decode(b, skip_special_tokens=True)[0])
    for name, lines in (("dec_src.txt", dec_src), ("greedy.txt", greedy), ("beam4.txt", beam)):
        with open(os.path.join(OUT, "ref", name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    agree = sum(x == y for x, y in zip(greedy, beam))
    print(f"{len(dec_src)} decoding sentences; greedy == beam on {agree}", file=sys.stderr)

    # logits of a padded batch (sources of different lengths, targets of different lengths)
    bsrc = [dec_src[0], dec_src[1], "Naomi went to Moab"]
    btgt = [greedy[0], greedy[1], "Naomi"]
    enc = tok(bsrc, text_target=btgt, return_tensors="pt", padding=True)
    labels = enc["labels"]
    dec_in = torch.full_like(labels, pad)
    dec_in[:, 1:] = labels[:, :-1]
    dec_in[:, 0] = pad  # shift_tokens_right: start token, then the labels (pad stays pad)
    with torch.no_grad():
        logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                       decoder_input_ids=dec_in).logits
    B, S = enc["input_ids"].shape
    T = dec_in.shape[1]
    write_golden(os.path.join(OUT, "ref", "logits.txt"),
                 [("shape", [B, S, T, V]), ("src", enc["input_ids"].flatten().tolist()),
                  ("tgt", dec_in.flatten().tolist()), ("logits", logits.flatten().tolist())])
    print(f"V {V}, batch {B}x{S} -> {T}", file=sys.stderr)


def limit_cases():
    """ref/limit.tsv from the committed fixture (nothing retrained)."""
    torch.set_num_threads(1)
    tok = MarianTokenizer.from_pretrained(OUT)
    model = MarianMTModel.from_pretrained(OUT).eval()
    assert model.generation_config.forced_eos_token_id == 0, model.generation_config
    with open(os.path.join(OUT, "ref", "dec_src.txt"), encoding="utf-8") as f:
        src = [l.rstrip("\n") for l in f]
    rows, hit = [], 0
    with torch.no_grad():
        for beams in (1, 4):
            for L in LIMIT_LENGTHS:
                for s in src:
                    enc = tok([s], return_tensors="pt")
                    out = model.generate(**enc, num_beams=beams, length_penalty=1.0, early_stopping=True,
                                         do_sample=False, max_length=L)[0].tolist()
                    assert out[0] == model.config.decoder_start_token_id
                    ids = out[1:]
                    hit += len(out) == L
                    rows.append(f"{beams}\t{L}\t{s}\t{' '.join(str(i) for i in ids)}")
    assert hit >= len(rows) // 2, f"only {hit} of {len(rows)} cases reach the limit"
    path = os.path.join(OUT, "ref", "limit.tsv")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    os.replace(path + ".tmp", path)
    print(f"{len(rows)} cases, {hit} reach max_length", file=sys.stderr)


if __name__ == "__main__":
    if LIMIT:
        limit_cases()
    else:
        main()
