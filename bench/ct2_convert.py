#!/usr/bin/env python3
"""Converts a tfm checkpoint (safetensors, docs/FORMATS.md) into a CTranslate2 model directory, so
that CTranslate2 decodes the SAME weights as tfm (make bench, docs/BENCH.md).

    ct2_convert.py MODEL.safetensors OUTDIR [--quantization int8]

Runs in a Python with PyPI's `ctranslate2` and numpy (e.g. /work/venv-bench); needs no torch, so
the safetensors file is read here with numpy (header length, JSON header, raw F32 data).

What the mapping must get right (and what it refuses):
- architecture: encoder–decoder only; pre-LN (norm_first 1, the default of `tfm train --data`)
  maps to CT2's pre_norm with its final encoder/decoder LayerNorms (nn.Transformer's
  encoder.norm/decoder.norm). A post-LN tfm model also carries those final norms, which CT2's
  post-norm Transformer lacks: refused.
- embeddings: CT2 multiplies them by √d_model (scale_embeddings, as tfm: Vaswani et al. §3.4).
  Tied embeddings are stored by tfm as three equal tensors; each is written as it is.
- position encoding: pe = sinusoidal only, without pe_zero_pad or pe_scale. CT2's built-in
  sinusoid puts all sines then all cosines (concat layout); tfm's default layout is interleaved
  (sin at 2i, cos at 2i+1, §3.5). The table is therefore written out explicitly
  (position_encodings.encodings, row p = position p, from 0), computed in float64 with tfm's
  formula and layout, max_len rows.
- attention: nn.MultiheadAttention's in_proj (3·d × d: Q, K, V rows) is CT2's fused linear[0] of
  self-attention; for cross-attention CT2 wants Q alone (linear[0]) and K, V fused (linear[1]).
- LayerNorm eps from the checkpoint (layer_norm_eps); activation relu or gelu.
- vocabulary: CT2 works on token strings; ids are written as tokens "<pad>", "<s>", "</s>",
  "<unk>" for pad/bos/eos/unk (ids from the metadata; unk is 3 in tfm's tokenizers) and "i<N>"
  otherwise, so a caller passes ids as "i<N>" and reads them back (bench/ct2_decode.py).
OUTDIR/tfm.json records the checkpoint's path and max_len (tfm's decoding length limit).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np


def load_safetensors(path):
    """{name: np.ndarray}, metadata dict (F32, F64, U8, I32, I64 tensors: a resumable checkpoint
    also holds the trainer state, e.g. Adam bookkeeping in F64)."""
    dtypes = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "I32": np.int32, "I64": np.int64}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=dtypes[e["dtype"]]).reshape(e["shape"]).copy()
    return out, meta


def sinusoid_table(max_len, d, layout):
    """tfm's PE (src/model/pe_sinusoidal.c): angle p / 10000^(2i/d); interleaved: sin at 2i, cos
    at 2i+1; concat: sines in columns 0..d/2-1, cosines after."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    i = np.arange(0, d, 2, dtype=np.float64)[None, :]
    angle = pos / np.power(10000.0, i / d)
    pe = np.zeros((max_len, d), dtype=np.float64)
    if layout == "interleaved":
        pe[:, 0::2] = np.sin(angle)
        pe[:, 1::2] = np.cos(angle[:, : d // 2])
    else:
        h = (d + 1) // 2
        pe[:, :h] = np.sin(angle)
        pe[:, h:] = np.cos(angle[:, : d - h])
    return pe.astype(np.float32)


def check_supported(meta):
    problems = []
    if meta.get("arch", "encoder-decoder") != "encoder-decoder":
        problems.append(f"arch {meta.get('arch')} (only encoder-decoder)")
    if meta.get("pe", "sinusoidal") != "sinusoidal":
        problems.append(f"pe {meta.get('pe')} (only sinusoidal)")
    if meta.get("pe_zero_pad", "0") != "0" or meta.get("pe_scale", "0") != "0":
        problems.append("pe_zero_pad/pe_scale (CT2 has no such option)")
    if meta.get("norm_first", "1") != "1":
        problems.append("post-LN (norm_first 0): its final encoder/decoder LayerNorms have no place in CT2's post-norm model")
    if meta.get("activation", "relu") not in ("relu", "gelu"):
        problems.append(f"activation {meta.get('activation')}")
    return problems


def build_spec(w, meta):
    import ctranslate2
    from ctranslate2.specs import common_spec, transformer_spec

    d = int(meta["d_model"])
    heads = int(meta["n_heads"])
    n_enc, n_dec = int(meta["n_enc_layers"]), int(meta["n_dec_layers"])
    act = common_spec.Activation.GELU if meta.get("activation") == "gelu" else common_spec.Activation.RELU
    spec = transformer_spec.TransformerSpec.from_config((n_enc, n_dec), heads, pre_norm=True, activation=act)
    spec.config.layer_norm_epsilon = float(meta.get("layer_norm_eps", "1e-5"))
    pe = sinusoid_table(int(meta["max_len"]), d, meta.get("pe_layout", "interleaved"))

    def linear(s, name):
        s.weight = w[name + ".weight"]
        s.bias = w[name + ".bias"]

    def norm(s, name):
        s.gamma = w[name + ".weight"]
        s.beta = w[name + ".bias"]

    def ffn(s, name, norm_name):
        norm(s.layer_norm, norm_name)
        linear(s.linear_0, name + ".linear1")
        linear(s.linear_1, name + ".linear2")

    enc, dec = spec.encoder, spec.decoder
    enc.embeddings[0].weight = w["src_embed.weight"]
    enc.scale_embeddings = True
    enc.position_encodings.encodings = pe
    norm(enc.layer_norm, "transformer.encoder.norm")
    for i, layer in enumerate(enc.layer):
        p = f"transformer.encoder.layers.{i}"
        layer.self_attention.linear[0].weight = w[p + ".self_attn.in_proj_weight"]
        layer.self_attention.linear[0].bias = w[p + ".self_attn.in_proj_bias"]
        linear(layer.self_attention.linear[1], p + ".self_attn.out_proj")
        norm(layer.self_attention.layer_norm, p + ".norm1")
        ffn(layer.ffn, p, p + ".norm2")
    dec.embeddings.weight = w["tgt_embed.weight"]
    dec.scale_embeddings = True
    dec.position_encodings.encodings = pe
    norm(dec.layer_norm, "transformer.decoder.norm")
    linear(dec.projection, "generator")
    for i, layer in enumerate(dec.layer):
        p = f"transformer.decoder.layers.{i}"
        layer.self_attention.linear[0].weight = w[p + ".self_attn.in_proj_weight"]
        layer.self_attention.linear[0].bias = w[p + ".self_attn.in_proj_bias"]
        linear(layer.self_attention.linear[1], p + ".self_attn.out_proj")
        norm(layer.self_attention.layer_norm, p + ".norm1")
        wq, bq = w[p + ".multihead_attn.in_proj_weight"], w[p + ".multihead_attn.in_proj_bias"]
        layer.attention.linear[0].weight, layer.attention.linear[0].bias = wq[:d], bq[:d]
        layer.attention.linear[1].weight, layer.attention.linear[1].bias = wq[d:], bq[d:]
        linear(layer.attention.linear[2], p + ".multihead_attn.out_proj")
        norm(layer.attention.layer_norm, p + ".norm2")
        ffn(layer.ffn, p, p + ".norm3")
    special = {int(meta.get("pad_id", 0)): "<pad>", int(meta.get("bos_id", 1)): "<s>",
               int(meta.get("eos_id", 2)): "</s>"}
    special.setdefault(3, "<unk>")
    for side, n in (("src", int(meta["src_vocab"])), ("tgt", int(meta["tgt_vocab"]))):
        vocab = [special.get(i, f"i{i}") for i in range(n)]
        if side == "src":
            spec.register_source_vocabulary(vocab)
        else:
            spec.register_target_vocabulary(vocab)
    return spec, ctranslate2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("outdir")
    ap.add_argument("--quantization", default=None, help="e.g. int8 (default: float32 as stored)")
    args = ap.parse_args()
    w, meta = load_safetensors(args.model)
    problems = check_supported(meta)
    if problems:
        print(f"ct2_convert: {args.model}: cannot convert: " + "; ".join(problems), file=sys.stderr)
        return 1
    spec, ctranslate2 = build_spec(w, meta)

    class _Conv(ctranslate2.converters.Converter):
        def _load(self):
            return spec

    _Conv().convert(args.outdir, quantization=args.quantization, force=True)
    with open(os.path.join(args.outdir, "tfm.json"), "w") as f:  # what ct2_decode.py needs from tfm's metadata
        json.dump({"source": os.path.abspath(args.model), "max_len": int(meta["max_len"])}, f)
    print(f"ct2_convert: {args.model} -> {args.outdir} (d_model {meta['d_model']}, {meta['n_enc_layers']}+"
          f"{meta['n_dec_layers']} layers, vocab {meta['tgt_vocab']}, pe {meta.get('pe_layout', 'interleaved')} "
          f"table, quantization {args.quantization or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
