"""Minimal safetensors writer/reader for the reference scripts (format: 8-byte little-endian header
length, JSON header padded with spaces to 8 bytes, raw little-endian data). Debian 12 packages no
`safetensors` for python3, so the few lines live here; torch tensors in, torch tensors out."""
import json
import struct

import numpy as np
import torch

_DT = {torch.float32: "F32", torch.float64: "F64", torch.uint8: "U8", torch.int32: "I32", torch.int64: "I64"}
_NP = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "I32": np.int32, "I64": np.int64}


def save(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _DT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        b, en = e["data_offsets"]
        arr = np.frombuffer(data[b:en], dtype=_NP[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out, meta
