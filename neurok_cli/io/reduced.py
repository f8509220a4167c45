"""The reduced model as named arrays and values (``deform/own/reduced_model.py`` describes a
motion's), and its file layout (docs/reduced-model.md): a magic, a JSON header naming each
array's type, shape and place, then the arrays, little-endian, each 8-byte aligned. The web
page (``render/web/reduced.js``) reads the same bytes."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import InputError

FORMAT = "neurok-reduced-model"
VERSION = 4  # 4: cloth as its own kind ("kind": "cloth": fabric on a simulation mesh), int16
# arrays (3: cloth's stretch partly on patches' mean strain; 2: a membrane's law gives its
# compression's weight; 1: tension only)
MAGIC = b"NRRM"
DTYPES = {"f8": np.float64, "f4": np.float32, "i4": np.int32, "i2": np.int16}


@dataclass
class ReducedModel:
    """Named arrays (float64, int32, or float32 for the clip's coordinates) and JSON values."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    def csr(self, name: str) -> sp.csr_matrix:
        """The sparse matrix stored as ``name``_indptr, _indices, _data and _shape."""
        a = self.arrays
        return sp.csr_matrix((a[f"{name}_data"], a[f"{name}_indices"], a[f"{name}_indptr"]),
                             shape=tuple(int(s) for s in a[f"{name}_shape"]))

    def padded(self, name: str, shape: tuple[int, int]) -> sp.csr_matrix:
        """The (n, H) weights stored as ``name``_index and ``name``_weight (n, K)."""
        idx, w = self.arrays[f"{name}_index"], self.arrays[f"{name}_weight"]
        rows = np.repeat(np.arange(len(idx)), idx.shape[1])
        out = sp.csr_matrix((w.ravel(), (rows, idx.ravel())), shape=shape)
        out.eliminate_zeros()
        return out


def pack(model: ReducedModel) -> bytes:
    """The model as bytes: MAGIC, the header's length (uint32), the header (JSON, padded
    with spaces to a multiple of 8 bytes from the start), then the arrays."""
    entries, chunks, offset = {}, [], 0
    for name, arr in model.arrays.items():
        code = next((c for c, t in DTYPES.items() if arr.dtype == t), None)
        if code is None:
            raise TypeError(f"reduced model array {name}: unsupported type {arr.dtype}")
        data = np.ascontiguousarray(arr, DTYPES[code]).astype(f"<{code}", copy=False).tobytes()
        entries[name] = {"type": code, "shape": list(arr.shape), "offset": offset}
        pad = -len(data) % 8
        chunks.append(data + b"\0" * pad)
        offset += len(data) + pad
    header = json.dumps({"values": model.values, "arrays": entries},
                        separators=(",", ":")).encode()
    header += b" " * (-(len(header) + 8) % 8)
    return MAGIC + struct.pack("<I", len(header)) + header + b"".join(chunks)


def unpack(data: bytes) -> ReducedModel:
    """A model from :func:`pack`'s bytes."""
    if data[:4] != MAGIC or len(data) < 8:
        raise InputError("not a reduced model (its first bytes are not NRRM)")
    (size,) = struct.unpack("<I", data[4:8])
    head = json.loads(data[8:8 + size])
    values = head["values"]
    if values.get("format") != FORMAT or values.get("version") != VERSION:
        raise InputError(f"reduced model: format {values.get('format')} version "
                         f"{values.get('version')}, this reads {FORMAT} version {VERSION}")
    base = 8 + size
    arrays = {}
    for name, e in head["arrays"].items():
        dt = np.dtype(f"<{e['type']}")
        count = int(np.prod(e["shape"], dtype=np.int64))
        arrays[name] = np.frombuffer(data, dt, count, base + e["offset"]).reshape(e["shape"])
    return ReducedModel(arrays, values)
