#!/usr/bin/python3
"""PyTorch twin of `tfm train` + `tfm eval` on the English→Spanish Bible corpus (issue 5).

torch.nn.Transformer trained on the same data, with the same tokenizer (trained and applied by
`tfm tokenize`), the same model and the same recipe as docs/BENCH.md's translation twin, for a
fixed number of
wall-clock minutes on this machine; then greedy decoding of the test set and BLEU/chrF by
`tfm bleu`. So tfm's test BLEU after M minutes can be put beside PyTorch's after M minutes.

Run with Debian's python3 and python3-torch (1.13), from anywhere:

    /usr/bin/python3 bench/twin_translate.py --minutes 40 --out /tmp/twin

(or bench/run_twin.sh [MINUTES] [OUTDIR]). Only the standard library, torch and numpy are used.

Tuning (docs/BENCH.md): OpenBLAS is told the CPU (OPENBLAS_CORETYPE) and runs one thread inside
ATen's two (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(2)), ATen uses the widest kernels the CPU
has (ATEN_CPU_CAPABILITY); bench/cpu_tuning.sh picks the values from /proc/cpuinfo (AVX-512:
SkylakeX/avx512; AVX2: Zen or Haswell/avx2; neither: OpenBLAS's own detection, default). They are
read when the libraries load, so the script re-executes itself with them set when they are
missing, before torch is imported. Values already in the environment are kept.

Recipe: pre-LN nn.Transformer (batch_first), d_model 256, 4 heads, d_ff 1024, 3+3 layers, ReLU,
dropout 0.1; one joint 8k unigram SentencePiece vocabulary, the embedding shared by source, target
and generator (tied); embeddings × √d_model + sinusoidal PE (docs/NUMERICS.md); key padding masks
from pad = 0 and the causal mask; CrossEntropyLoss(label_smoothing 0.1, ignore_index 0); Adam(β 0.9,
0.98, ε 1e-9); lr = peak · min(step/warmup, sqrt(warmup/step)), peak 1e-3, warm-up 400 steps;
gradient clipping at norm 1.0; batches of ≤ ~3000 padded target tokens, length-bucketed (sorted
by length inside large shuffled chunks, then the batches shuffled), a fixed seed.

Timing: "train_s" is the wall-clock time of the training steps only (batch assembly, forward,
backward, clipping, the optimizer step). Tokenization, model setup, validation, checkpointing and
test decoding are timed and reported separately. Tokens/s counts non-pad prediction targets (the
target side, EOS included, BOS excluded).

Writes into --out: tok.model, *.ids, twin.safetensors (tensor names and metadata of docs/FORMATS.md
and the tokenizer as tokenizer.model, so `tfm eval/translate --model` decode the twin's model
too), test.hyp.ids, test.hyp.es and summary.txt (the last line printed). With --load MODEL it
skips training and only decodes and scores MODEL.
"""
import argparse
import json
import math
import os
import random
import resource
import struct
import subprocess
import sys
import time

TUNED_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "ATEN_CPU_CAPABILITY")
PAD, BOS, EOS = 0, 1, 2
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def tuned_env():
    """The tuning bench/cpu_tuning.sh picks for this CPU (keeping values already set)."""
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_tuning.sh")
    out = subprocess.run(["sh", "-c", '. "$1"; cpu_tuning_env', "sh", helper], capture_output=True,
                         text=True, check=True)
    print(out.stderr.strip(), file=sys.stderr)  # the CPU and the choice
    return dict(line.split("=", 1) for line in out.stdout.split())


def ensure_tuned_env():
    """Re-execute this script with tuned_env() set (read at library load time, so before torch)."""
    if os.environ.get("TWIN_NO_TUNE") == "1":
        return
    tuned = tuned_env()
    missing = {k: v for k, v in tuned.items() if os.environ.get(k) != v}
    if not missing:
        return
    if os.environ.get("TWIN_REEXECED") == "1":
        sys.exit("twin: could not set %s in the environment" % ", ".join(sorted(missing)))
    env = dict(os.environ, TWIN_REEXECED="1", **tuned)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)  # the same command line


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=40.0, help="wall-clock training minutes (40)")
    p.add_argument("--max-steps", type=int, default=0, help="also stop after this many steps (0 = no)")
    p.add_argument("--out", default="/tmp/twin", help="output directory (/tmp/twin)")
    p.add_argument("--data", default=os.path.join(REPO, "data", "bible-en-es"),
                   help="corpus directory with {train,valid,test}.{en,es}")
    p.add_argument("--src", default="en")
    p.add_argument("--tgt", default="es")
    p.add_argument("--tfm", default=os.path.join(REPO, "build", "tfm"), help="the tfm binary")
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--n-heads", type=int, default=4)
    p.add_argument("--n-enc-layers", type=int, default=3)
    p.add_argument("--n-dec-layers", type=int, default=3)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--post-ln", action="store_true", help="post-LN (the paper) instead of pre-LN")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (1e-3)")
    p.add_argument("--warmup", type=int, default=400)
    p.add_argument("--clip-norm", type=float, default=1.0)
    p.add_argument("--batch-tokens", type=int, default=3000,
                   help="max padded target tokens per batch (3000)")
    p.add_argument("--max-len", type=int, default=256,
                   help="training pairs with a side longer than this (tokens) are skipped (256)")
    p.add_argument("--chunk", type=int, default=8192, help="pairs per length-sorting chunk (8192)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (2)")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--valid-every", type=int, default=500,
                   help="validation loss every N steps (0 = at the end only)")
    p.add_argument("--decode-batch", type=int, default=64,
                   help="sentences per greedy-decoding batch (64)")
    p.add_argument("--max-len-a", type=float, default=1.5, help="decode max length = a·src_len + b")
    p.add_argument("--max-len-b", type=int, default=10)
    p.add_argument("--load", default="",
                   help="no training: load this model (a docs/FORMATS.md safetensors file, e.g."
                        " a twin.safetensors)"
                        " and only decode and score the test set")
    return p.parse_args()


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# tokenizer and id files, all through `tfm tokenize`

def run_tfm(tfm, args, **kw):
    r = subprocess.run([tfm] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if r.returncode != 0:
        sys.exit("twin: `tfm %s` failed (exit %d): %s"
                 % (" ".join(args), r.returncode, r.stderr.decode(errors="replace").strip()))
    return r.stdout.decode()


def read_ids(path):
    with open(path) as f:
        return [[int(t) for t in line.split()] for line in f]


def prepare_data(a):
    tok = os.path.join(a.out, "tok.model")
    inputs = ",".join(os.path.join(a.data, "train." + lang) for lang in (a.src, a.tgt))
    run_tfm(a.tfm, ["tokenize", "--train", "--input", inputs,
                    "--vocab-size", str(a.vocab_size), "--save-model", tok])
    data = {}
    for split in ("train", "valid", "test"):
        for lang, extra in ((a.src, []), (a.tgt, ["--add-bos", "--add-eos"])):
            out = os.path.join(a.out, "%s.%s.ids" % (split, lang))
            run_tfm(a.tfm, ["tokenize", "--encode", "--tokenizer", tok, "--input",
                            os.path.join(a.data, "%s.%s" % (split, lang)), "--output", out] + extra)
            data[split, lang] = read_ids(out)
        if len(data[split, a.src]) != len(data[split, a.tgt]):
            sys.exit("twin: %s: %d %s lines but %d %s lines" % (split, len(data[split, a.src]), a.src,
                                                               len(data[split, a.tgt]), a.tgt))
    return tok, data


# ---------------------------------------------------------------------------------------------
# batching: ≤ batch_tokens padded target tokens, length-bucketed

def make_batches(pairs, batch_tokens, chunk, rng):
    """pairs: list of (src_ids, tgt_ids). Returns a shuffled list of lists of pair indices."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches = []
    for c0 in range(0, len(order), chunk):
        part = sorted(order[c0:c0 + chunk], key=lambda i: (len(pairs[i][1]), len(pairs[i][0])))
        cur, cur_max = [], 0
        for i in part:
            t = len(pairs[i][1]) - 1  # decoder positions of this pair
            m = max(cur_max, t)
            if cur and m * (len(cur) + 1) > batch_tokens:
                batches.append(cur)
                cur, m = [], t
            cur.append(i)
            cur_max = m
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


def pad_rows(torch, rows):
    L = max(len(r) for r in rows)
    out = torch.zeros((len(rows), L), dtype=torch.long)  # PAD = 0
    for b, r in enumerate(rows):
        out[b, :len(r)] = torch.tensor(r, dtype=torch.long)
    return out


# ---------------------------------------------------------------------------------------------
# the model: nn.Transformer + one tied embedding/generator, names as docs/FORMATS.md

def build_model(torch, a, vocab):
    nn = torch.nn

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            d = a.d_model
            self.d = d
            self.transformer = nn.Transformer(
                d_model=d, nhead=a.n_heads, num_encoder_layers=a.n_enc_layers,
                num_decoder_layers=a.n_dec_layers, dim_feedforward=a.d_ff, dropout=a.dropout,
                activation="relu", batch_first=True, norm_first=not a.post_ln, layer_norm_eps=1e-5)
            self.src_embed = nn.Embedding(vocab, d)
            nn.init.normal_(self.src_embed.weight, 0.0, d ** -0.5)
            self.tgt_embed = self.src_embed  # one joint vocabulary: tied everywhere
            self.generator = nn.Linear(d, vocab)  # its bias keeps nn.Linear's initialisation
            self.generator.weight = self.src_embed.weight
            self.drop = nn.Dropout(a.dropout)
            self.pe = self.sinusoidal(1024)

        def sinusoidal(self, n):
            """PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(same), in log space."""
            d = self.d
            pos = torch.arange(n, dtype=torch.float64)[:, None]
            ang = pos * torch.exp(-torch.arange(0, d, 2, dtype=torch.float64) * math.log(10000.0) / d)
            pe = torch.zeros(n, d, dtype=torch.float64)
            pe[:, 0::2] = torch.sin(ang)
            pe[:, 1::2] = torch.cos(ang)[:, : d // 2]
            return pe.float()

        def embed(self, ids):  # (B, T) -> (B, T, d)
            T = ids.shape[1]
            if T > self.pe.shape[0]:  # computed, never truncated
                self.pe = self.sinusoidal(2 * T)
            return self.drop(self.src_embed(ids) * math.sqrt(self.d) + self.pe[:T])

        def encode(self, src):  # (B, S) -> memory (B, S, d), src pad mask (B, S)
            src_pad = src == PAD
            return self.transformer.encoder(self.embed(src), src_key_padding_mask=src_pad), src_pad

        def decode(self, tgt_in, memory, src_pad, last_only=False):
            """-> logits (B, T, V), or (B, V) of the last position only with last_only."""
            T = tgt_in.shape[1]
            causal = torch.triu(torch.ones((T, T), dtype=torch.bool), diagonal=1)
            out = self.transformer.decoder(self.embed(tgt_in), memory, tgt_mask=causal,
                                           tgt_key_padding_mask=tgt_in == PAD,
                                           memory_key_padding_mask=src_pad)
            return self.generator(out[:, -1] if last_only else out)

        def forward(self, src, tgt_in):
            memory, src_pad = self.encode(src)
            return self.decode(tgt_in, memory, src_pad)

    return Seq2Seq()


def save_safetensors(path, model, a, vocab, tokenizer_bytes):
    """The model in the format of docs/FORMATS.md (every tied name written) with the SentencePiece
    model as the U8 tensor tokenizer.model, so `tfm translate/eval --model` can use it; written
    atomically."""
    meta = {"arch": "encoder-decoder", "d_model": a.d_model, "n_heads": a.n_heads,
            "n_enc_layers": a.n_enc_layers, "n_dec_layers": a.n_dec_layers, "d_ff": a.d_ff,
            "src_vocab": vocab, "tgt_vocab": vocab, "max_len": 1024, "norm_first": int(not a.post_ln),
            "activation": "relu", "pe": "sinusoidal", "pad_id": PAD, "bos_id": BOS, "eos_id": EOS,
            "layer_norm_eps": "1e-05", "tie_embeddings": 1, "format": "pytorch-twin"}
    header = {"__metadata__": {k: str(v) for k, v in meta.items()}}
    blobs, off = [], 0
    for name, t in model.state_dict(keep_vars=False).items():
        raw = t.detach().contiguous().float().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["tokenizer.model"] = {"dtype": "U8", "shape": [len(tokenizer_bytes)],
                                 "data_offsets": [off, off + len(tokenizer_bytes)]}
    blobs.append(tokenizer_bytes)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def load_safetensors(torch, path, model):
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    sd = {}
    for name, e in header.items():
        if e["dtype"] != "F32":
            continue  # tokenizer./train_state. prefixes
        b, en = e["data_offsets"]
        sd[name] = torch.from_numpy(np.frombuffer(data[b:en], dtype="<f4").reshape(e["shape"]).copy())
    want = model.state_dict()
    missing = [k for k in want if k not in sd]
    if missing:
        sys.exit("twin: %s lacks %s" % (path, ", ".join(missing[:5])))
    model.load_state_dict({k: sd[k] for k in want})
    # tied: the three names share one Parameter; the last one loaded wins, so make them agree
    model.src_embed.weight.data.copy_(sd["src_embed.weight"])


# ---------------------------------------------------------------------------------------------
# evaluation

def valid_loss(torch, model, crit, pairs, batch_tokens):
    """Mean per-token cross-entropy (label-smoothed, as trained) and plain NLL on pairs."""
    model.eval()
    rng = random.Random(0)
    tot_ls, tot_nll, n = 0.0, 0.0, 0
    with torch.no_grad():
        for idx in make_batches(pairs, batch_tokens, len(pairs), rng):
            src = pad_rows(torch, [pairs[i][0] for i in idx])
            tgt = pad_rows(torch, [pairs[i][1] for i in idx])
            logits = model(src, tgt[:, :-1]).flatten(0, 1)
            y = tgt[:, 1:].flatten()
            k = int((y != PAD).sum())
            tot_ls += crit(logits, y).item() * k
            tot_nll += torch.nn.functional.cross_entropy(logits, y, ignore_index=PAD).item() * k
            n += k
    model.train()
    return tot_ls / n, tot_nll / n


def greedy_decode(torch, model, srcs, a):
    """Batched greedy decoding without a KV cache: every step re-runs the decoder on the prefix.
    Returns one id list per source (without BOS/EOS) and the number of generated tokens."""
    model.eval()
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
    hyps = [None] * len(srcs)
    n_tokens = 0
    with torch.no_grad():
        for b0 in range(0, len(order), a.decode_batch):
            idx = order[b0:b0 + a.decode_batch]
            src = pad_rows(torch, [srcs[i] if srcs[i] else [EOS] for i in idx])
            memory, src_pad = model.encode(src)
            limit = torch.tensor([int(a.max_len_a * len(srcs[i]) + a.max_len_b) for i in idx])
            ys = torch.full((len(idx), 1), BOS, dtype=torch.long)
            done = torch.zeros(len(idx), dtype=torch.bool)
            out = [[] for _ in idx]
            for t in range(int(limit.max())):
                act = (~done).nonzero().flatten()
                logits = model.decode(ys[act], memory[act], src_pad[act], last_only=True)
                nxt_act = logits.argmax(-1)
                nxt = torch.full((len(idx),), PAD, dtype=torch.long)
                nxt[act] = nxt_act
                ys = torch.cat([ys, nxt[:, None]], dim=1)
                for j, tok in zip(act.tolist(), nxt_act.tolist()):
                    n_tokens += 1
                    if tok == EOS:
                        done[j] = True
                    else:
                        out[j].append(tok)
                        if len(out[j]) >= int(limit[j]):
                            done[j] = True
                if bool(done.all()):
                    break
            for j, i in enumerate(idx):
                hyps[i] = out[j]
    model.train()
    return hyps, n_tokens


def parse_bleu(text):
    bleu = chrf = float("nan")
    for line in text.splitlines():
        if line.startswith("BLEU = "):
            bleu = float(line.split()[2])
        elif line.startswith("chrF2 = "):
            chrf = float(line.split()[2])
    return bleu, chrf


# ---------------------------------------------------------------------------------------------

def main():
    ensure_tuned_env()
    a = parse_args()
    import numpy as np
    import torch

    a.tfm = os.path.abspath(a.tfm)
    if not os.access(a.tfm, os.X_OK):
        sys.exit("twin: no tfm binary at %s (build it: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release"
                 " && cmake --build build -j2, or pass --tfm)" % a.tfm)
    for split in ("train", "valid", "test"):
        for lang in (a.src, a.tgt):
            f = os.path.join(a.data, "%s.%s" % (split, lang))
            if not os.path.isfile(f) or os.path.getsize(f) == 0:
                sys.exit("twin: missing or empty %s (make the corpus with scripts/get-corpus)" % f)
    os.makedirs(a.out, exist_ok=True)

    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    cap = [l.strip() for l in torch.__config__.show().splitlines() if "CPU capability" in l]
    log("twin: torch %s, numpy %s, python %s, threads %d, %s" % (
        torch.__version__, np.__version__, sys.version.split()[0], torch.get_num_threads(),
        cap[0] if cap else "CPU capability unknown"))
    log("twin: env " + " ".join("%s=%s" % (k, os.environ.get(k, "(unset)")) for k in TUNED_VARS))
    log("twin: config " + " ".join("%s=%s" % kv for kv in sorted(vars(a).items())))
    try:
        log("twin: load " + open("/proc/loadavg").read().strip())
    except OSError:
        pass

    t0 = time.time()
    tok, data = prepare_data(a)
    tok_s = time.time() - t0
    vocab = a.vocab_size
    train = [(s, t) for s, t in zip(data["train", a.src], data["train", a.tgt])
             if 0 < len(s) <= a.max_len and len(t) <= a.max_len + 2]
    valid = [(s, t) for s, t in zip(data["valid", a.src], data["valid", a.tgt]) if s]
    n_tgt = sum(len(t) - 1 for _, t in train)
    log("twin: tokenizer %s (%.1f s): train %d pairs (%d skipped), %d src / %d tgt tokens; "
        "valid %d; test %d" % (tok, tok_s, len(train), len(data["train", a.src]) - len(train),
           sum(len(s) for s, _ in train), n_tgt, len(valid), len(data["test", a.src])))

    model = build_model(torch, a, vocab)
    n_params = sum(p.numel() for p in model.parameters())
    log("twin: model nn.Transformer %s, d_model %d, heads %d, d_ff %d, layers %d+%d, vocab %d (tied), "
        "%d parameters" % ("pre-LN" if not a.post_ln else "post-LN", a.d_model, a.n_heads, a.d_ff,
                           a.n_enc_layers, a.n_dec_layers, vocab, n_params))
    crit = torch.nn.CrossEntropyLoss(label_smoothing=a.label_smoothing, ignore_index=PAD)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-9)
    params = list(model.parameters())

    def lr_at(step):  # step counts from 1
        return a.lr * min(step / a.warmup, math.sqrt(a.warmup / step))

    rng = random.Random(a.seed)
    batches, bpos, epoch = make_batches(train, a.batch_tokens, a.chunk, rng), 0, 1
    log("twin: %d batches per epoch (%.0f target tokens each on average)"
        % (len(batches), n_tgt / len(batches)))

    model.train()
    budget = a.minutes * 60.0
    train_s, eval_s = 0.0, 0.0
    step, tok_total, src_total = 0, 0, 0
    win_loss, win_tok, win_s, win_steps = 0.0, 0, 0.0, 0
    first_loss = None
    curve = []

    def log_window():
        nonlocal win_loss, win_tok, win_s, win_steps
        log("step %5d  epoch %d  loss %.4f  lr %.2e  tok/s %6.0f  s/step %.2f  train %.1f min"
            % (step, epoch, win_loss / win_tok, lr_at(step), win_tok / win_s, win_s / win_steps,
               train_s / 60))
        curve.append((step, win_loss / win_tok))
        win_loss, win_tok, win_s, win_steps = 0.0, 0, 0.0, 0

    if a.load:
        load_safetensors(torch, a.load, model)
        log("twin: loaded %s; no training" % a.load)
        budget = 0.0
    while train_s < budget and (a.max_steps <= 0 or step < a.max_steps):
        ts = time.perf_counter()
        if bpos == len(batches):
            batches, bpos, epoch = make_batches(train, a.batch_tokens, a.chunk, rng), 0, epoch + 1
        idx = batches[bpos]
        bpos += 1
        src = pad_rows(torch, [train[i][0] for i in idx])
        tgt = pad_rows(torch, [train[i][1] for i in idx])
        y = tgt[:, 1:]
        k = int((y != PAD).sum())
        step += 1
        lr = lr_at(step)
        for g in opt.param_groups:
            g["lr"] = lr
        logits = model(src, tgt[:, :-1])
        loss = crit(logits.flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip_norm)
        opt.step()
        lv = loss.item()
        dt = time.perf_counter() - ts
        if not math.isfinite(lv):
            sys.exit("twin: loss is %r at step %d: diverged" % (lv, step))
        train_s += dt
        tok_total += k
        src_total += int((src != PAD).sum())
        win_loss += lv * k
        win_tok += k
        win_s += dt
        win_steps += 1
        if first_loss is None:
            first_loss = lv
        if step % a.log_every == 0 or step == 1:
            log_window()
        if a.valid_every > 0 and step % a.valid_every == 0:
            te = time.perf_counter()
            vl, vnll = valid_loss(torch, model, crit, valid, a.batch_tokens)
            eval_s += time.perf_counter() - te
            log("valid step %5d  loss %.4f  nll %.4f  ppl %.2f  (%.1f s, not counted)"
                % (step, vl, vnll, math.exp(vnll), time.perf_counter() - te))
    if win_steps:
        log_window()

    te = time.perf_counter()
    vl, vnll = valid_loss(torch, model, crit, valid, a.batch_tokens)
    eval_s += time.perf_counter() - te
    log("valid final step %d  loss %.4f  nll %.4f  ppl %.2f" % (step, vl, vnll, math.exp(vnll)))
    train_s = max(train_s, 1e-9)
    if step:
        log("twin: trained %d steps (%d epochs begun) in %.1f s: %.0f target tokens/s (%.0f source), "
            "%.2f s/step, %.0f target tokens/step; validation took %.1f s more"
            % (step, epoch, train_s, tok_total / train_s, src_total / train_s, train_s / step,
               tok_total / step, eval_s))
        st = os.path.join(a.out, "twin.safetensors")
        with open(tok, "rb") as f:
            save_safetensors(st, model, a, vocab, f.read())
        log("twin: saved %s" % st)

    td = time.perf_counter()
    hyps, gen = greedy_decode(torch, model, data["test", a.src], a)
    dec_s = time.perf_counter() - td
    hyp_ids = os.path.join(a.out, "test.hyp.ids")
    with open(hyp_ids, "w") as f:
        f.writelines(" ".join(map(str, h)) + "\n" for h in hyps)
    hyp = os.path.join(a.out, "test.hyp.%s" % a.tgt)
    run_tfm(a.tfm, ["tokenize", "--decode", "--tokenizer", tok, "--input", hyp_ids, "--output", hyp])
    ref = os.path.join(a.data, "test.%s" % a.tgt)
    report = run_tfm(a.tfm, ["bleu", "--hyp", hyp, "--ref", ref])
    bleu, chrf = parse_bleu(report)
    log(report.rstrip())
    log("twin: greedy-decoded %d test sentences in %.1f s (%d tokens, %.0f tokens/s, no KV cache)"
        % (len(hyps), dec_s, gen, gen / dec_s))
    with open(hyp) as f:
        shown = f.read().splitlines()[:3]
    with open(os.path.join(a.data, "test.%s" % a.src)) as f:
        srcs = f.read().splitlines()[:3]
    for s, h in zip(srcs, shown):
        log("  src: %s\n  hyp: %s" % (s, h))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    nan = float("nan")
    summary = ("TWIN torch %s: %d steps, %.0f target tokens/s, %.1f train minutes, first loss %.3f, "
               "final train loss %.3f, valid nll %.3f, test BLEU %.2f, chrF2 %.2f "
               "(greedy, %.1f s decode), peak RSS %.0f MiB"
               % (torch.__version__, step, tok_total / train_s, train_s / 60,
                  nan if first_loss is None else first_loss, curve[-1][1] if curve else nan, vnll,
                  bleu, chrf, dec_s, rss))
    log(summary)
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(summary + "\n")


if __name__ == "__main__":
    main()
