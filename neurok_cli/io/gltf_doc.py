"""The glTF 2.0 container: JSON plus binary buffers, read from .gltf or .glb, written as .glb.

The document is kept as the plain JSON dict so that everything we do not touch (extensions,
extras, cameras, skins, animations) survives a round trip unchanged. All buffers are merged into
one binary blob on load (data URIs, external .bin files, the GLB BIN chunk), and new accessors
are appended to it.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from .atomic import atomic_path
from .gltf_check import check_gltf
from .refs import is_data_uri, resolve_ref

GLB_MAGIC = 0x46546C67  # "glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942

COMPONENT_DTYPES: dict[int, np.dtype] = {
    5120: np.dtype(np.int8), 5121: np.dtype(np.uint8), 5122: np.dtype(np.int16),
    5123: np.dtype(np.uint16), 5125: np.dtype(np.uint32), 5126: np.dtype(np.float32),
}
DTYPE_COMPONENTS = {v: k for k, v in COMPONENT_DTYPES.items()}
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
SIZE_TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}
ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963


@dataclass
class GltfDocument:
    """A glTF asset in memory: ``json`` (the document) and ``blob`` (its single buffer)."""

    json: dict
    blob: bytearray = field(default_factory=bytearray)
    path: Path | None = None

    # --- reading -------------------------------------------------------------------------
    def accessor(self, index: int) -> np.ndarray:
        """Decode accessor ``index`` to an array of shape (count, components), float or int.

        Normalized integer data is returned as float32 in [0, 1] or [-1, 1]; sparse accessors are
        applied. Scalars come back with shape (count,).
        """
        acc = self.json["accessors"][index]
        dtype = COMPONENT_DTYPES[acc["componentType"]]
        ncomp = TYPE_SIZES[acc["type"]]
        count = acc["count"]
        if "bufferView" in acc:
            out = self._read_view(acc["bufferView"], acc.get("byteOffset", 0), dtype, ncomp, count)
        else:
            out = np.zeros((count, ncomp), dtype)
        if "sparse" in acc:
            out = out.copy()
            sp = acc["sparse"]
            idt = COMPONENT_DTYPES[sp["indices"]["componentType"]]
            idx = self._read_view(sp["indices"]["bufferView"], sp["indices"].get("byteOffset", 0),
                                  idt, 1, sp["count"])[:, 0]
            vals = self._read_view(sp["values"]["bufferView"], sp["values"].get("byteOffset", 0),
                                   dtype, ncomp, sp["count"])
            if idx.size and int(idx.max()) >= count:
                raise InputError(f"{self._name()}: accessor {index}'s sparse indices go past "
                                 f"its {count} elements (corrupt file)")
            out[idx.astype(np.int64)] = vals
        if acc.get("normalized", False) and dtype.kind in "iu":
            info = np.iinfo(dtype)
            out = np.maximum(out.astype(np.float32) / info.max, -1.0)
        return out[:, 0] if ncomp == 1 else out

    def _read_view(self, view_index: int, offset: int, dtype: np.dtype, ncomp: int,
                   count: int) -> np.ndarray:
        if count < 0:  # np.frombuffer would read a negative count as "the whole buffer"
            raise InputError(f"{self._name()}: an accessor has a negative count ({count})")
        view = self.json["bufferViews"][view_index]
        start = view.get("byteOffset", 0) + offset
        elem = dtype.itemsize * ncomp
        stride = view.get("byteStride") or elem
        need = start + stride * (count - 1) + elem if count else start
        if need > len(self.blob) or need - view.get("byteOffset", 0) > view["byteLength"]:
            raise InputError(f"{self._name()}: accessor data runs past the end of its buffer "
                             "(truncated or corrupt file)")
        raw = np.frombuffer(self.blob, np.uint8, count=stride * (count - 1) + elem if count else 0,
                            offset=start)
        if stride == elem:  # copy: a view would pin the blob and forbid appending to it
            return raw.view(dtype).reshape(count, ncomp).copy()
        padded = np.zeros(stride * count, np.uint8)
        padded[: raw.size] = raw
        return padded.reshape(count, stride)[:, :elem].copy().view(dtype).reshape(count, ncomp)

    def image_bytes(self, image_index: int) -> tuple[bytes, str] | None:
        """Encoded bytes and MIME type of image ``image_index`` (None if it cannot be found)."""
        img = self.json["images"][image_index]
        if "bufferView" in img:
            v = self.json["bufferViews"][img["bufferView"]]
            off = v.get("byteOffset", 0)
            return bytes(self.blob[off: off + v["byteLength"]]), img.get("mimeType", "image/png")
        uri = img.get("uri", "")
        if is_data_uri(uri):
            head, _, data = uri.partition(",")
            try:
                return base64.b64decode(data), head[5:].split(";")[0]
            except ValueError as e:
                raise InputError(f"{self._name()}: image {image_index} has a corrupt data "
                                 "URI") from e
        if self.path is not None and uri:
            f = resolve_ref(self.path, uri, what=f"image {image_index}", uri=True)
            if f.is_file():
                mime = "image/jpeg" if f.suffix.lower() in (".jpg", ".jpeg") else "image/png"
                return f.read_bytes(), mime
        return None

    # --- writing -------------------------------------------------------------------------
    def add_view(self, data: bytes, *, target: int | None = None) -> int:
        """Append ``data`` (4-byte aligned) as a new bufferView; return its index."""
        self.blob.extend(b"\0" * (-len(self.blob) % 4))
        view = {"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data)}
        if target is not None:
            view["target"] = target
        self.blob.extend(data)
        views = self.json.setdefault("bufferViews", [])
        views.append(view)
        return len(views) - 1

    def add_accessor(self, array: np.ndarray, *, target: int | None = None,
                     minmax: bool = False) -> int:
        """Append ``array`` (count,) or (count, k) as a new tightly packed accessor."""
        array = np.ascontiguousarray(array)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        count = array.shape[0]
        ncomp = 1 if array.ndim == 1 else array.shape[1]
        acc = {"bufferView": self.add_view(array.tobytes(), target=target),
               "componentType": DTYPE_COMPONENTS[array.dtype], "count": count,
               "type": SIZE_TYPES[ncomp]}
        if minmax and count:
            flat = array.reshape(count, ncomp)
            acc["min"] = [_json_number(x) for x in flat.min(axis=0)]
            acc["max"] = [_json_number(x) for x in flat.max(axis=0)]
        accs = self.json.setdefault("accessors", [])
        accs.append(acc)
        return len(accs) - 1

    def add_image(self, data: bytes, mime: str) -> int:
        """Embed an encoded PNG/JPEG image; return its image index."""
        images = self.json.setdefault("images", [])
        images.append({"bufferView": self.add_view(data), "mimeType": mime})
        return len(images) - 1

    def to_glb(self) -> bytes:
        """Serialize as a binary glTF (one buffer, embedded)."""
        doc = dict(self.json)
        doc["buffers"] = [{"byteLength": len(self.blob)}] if self.blob else []
        if not self.blob:
            doc.pop("buffers")
        js = json.dumps(doc, separators=(",", ":"), allow_nan=False).encode()
        js += b" " * (-len(js) % 4)
        bin_ = bytes(self.blob) + b"\0" * (-len(self.blob) % 4)
        total = 12 + 8 + len(js) + (8 + len(bin_) if bin_ else 0)
        out = bytearray(struct.pack("<III", GLB_MAGIC, 2, total))
        out += struct.pack("<II", len(js), CHUNK_JSON) + js
        if bin_:
            out += struct.pack("<II", len(bin_), CHUNK_BIN) + bin_
        return bytes(out)

    def save_gltf(self, path: str | Path) -> None:
        """Write atomically as one .gltf JSON file, the buffer embedded as a data URI."""
        doc = dict(self.json)
        if self.blob:
            data = base64.b64encode(bytes(self.blob)).decode("ascii")
            doc["buffers"] = [{"byteLength": len(self.blob),
                               "uri": f"data:application/octet-stream;base64,{data}"}]
        text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
        with atomic_path(path) as tmp:
            tmp.write_text(text)

    def save_glb(self, path: str | Path) -> None:
        """Write atomically as GLB."""
        data = self.to_glb()
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)

    def _name(self) -> str:
        return str(self.path) if self.path else "glTF"


def _json_number(x: np.generic) -> float | int:
    return int(x) if np.issubdtype(type(x), np.integer) else float(x)


def _finite(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):  # 1e400 parses as infinity
        raise ValueError(f"number {text} is out of range")
    return x


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_loads(text: str) -> object:
    """Strict JSON: NaN, Infinity and numbers that overflow are refused (ValueError), as the
    JSON standard and glTF require; they would otherwise reach exports that cannot write
    them."""
    return json.loads(text, parse_float=_finite, parse_constant=_no_constant)


def load_document(path: str | Path) -> GltfDocument:
    """Read a .gltf (with data URIs or external .bin) or .glb file into one document."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] == b"glTF":
        js, bin_chunk = _split_glb(path, data)
    else:
        try:
            js = _json_loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as e:  # bad UTF-8, bad JSON, NaN, too deep
            raise InputError(f"{path}: not valid glTF JSON ({e.__class__.__name__}: {e})") from e
        bin_chunk = None
    if not isinstance(js, dict) or "asset" not in js:
        raise InputError(f"{path}: not a glTF 2.0 file (no 'asset' object)")
    if not isinstance(js["asset"], dict):
        raise InputError(f"{path}: not a glTF 2.0 file ('asset' is {js['asset']!r}, "
                         "not an object)")
    version = str(js["asset"].get("version", ""))
    if not version.startswith("2"):
        raise InputError(f"{path}: glTF version {version!r} is not supported; only 2.x is")
    check_gltf(js, path)
    doc = GltfDocument(json=js, path=path)
    _merge_buffers(doc, bin_chunk)
    _check_keyframes(doc)
    return doc


def _check_keyframes(doc: GltfDocument) -> None:
    """Keyframe times must be finite and never decrease (NaN times crash samplers and would
    be copied into every export)."""
    for a, anim in enumerate(doc.json.get("animations", [])):
        for s, sampler in enumerate(anim.get("samplers", [])):
            t = doc.accessor(sampler["input"]).astype(np.float64).reshape(-1)
            if not np.isfinite(t).all() or (np.diff(t) < 0).any():
                raise InputError(f"{doc.path}: animation {a} sampler {s}: keyframe times must "
                                 "be finite and increasing")


def _split_glb(path: Path, data: bytes) -> tuple[dict, bytes | None]:
    if len(data) < 20:
        raise InputError(f"{path}: truncated GLB header")
    _, version, length = struct.unpack_from("<III", data, 0)  # magic checked by the caller
    if version != 2:
        raise InputError(f"{path}: GLB container version {version} is not supported; only 2 is")
    if length > len(data):
        raise InputError(f"{path}: truncated GLB ({len(data)} of {length} bytes)")
    js, bin_chunk, pos = None, None, 12
    while pos + 8 <= length:
        clen, ctype = struct.unpack_from("<II", data, pos)
        chunk = data[pos + 8: pos + 8 + clen]
        if len(chunk) < clen:
            raise InputError(f"{path}: truncated GLB chunk")
        if ctype == CHUNK_JSON:
            try:
                js = _json_loads(chunk.decode("utf-8"))
            except (ValueError, RecursionError) as e:  # bad UTF-8, bad JSON, NaN, too deep
                raise InputError(f"{path}: corrupt GLB JSON chunk ({e})") from e
        elif ctype == CHUNK_BIN and bin_chunk is None:
            bin_chunk = chunk
        pos += 8 + clen
    if js is None:
        raise InputError(f"{path}: GLB has no JSON chunk")
    return js, bin_chunk


def _buffer_bytes(doc: GltfDocument, i: int, buf: dict, bin_chunk: bytes | None) -> bytes:
    uri = buf.get("uri")
    if uri is None:
        if i != 0 or bin_chunk is None:
            raise InputError(f"{doc.path}: buffer {i} has no data")
        return bin_chunk
    if is_data_uri(uri):
        try:
            return base64.b64decode(uri.partition(",")[2], validate=False)
        except ValueError as e:
            raise InputError(f"{doc.path}: buffer {i} has a corrupt data URI") from e
    if doc.path is None:
        raise InputError(f"glTF: buffer {i} refers to a file, but the document has no folder")
    f = resolve_ref(doc.path, uri, what=f"buffer {i}", uri=True)
    if not f.is_file():
        raise InputError(f"{doc.path}: buffer file {uri!r} is missing; keep it beside the .gltf")
    return f.read_bytes()


def _merge_buffers(doc: GltfDocument, bin_chunk: bytes | None) -> None:
    """Concatenate all buffers into ``doc.blob`` and rebase every bufferView onto buffer 0."""
    starts = []
    for i, buf in enumerate(doc.json.get("buffers", [])):
        data = _buffer_bytes(doc, i, buf, bin_chunk)
        if len(data) < buf.get("byteLength", 0):
            raise InputError(f"{doc.path}: buffer {i} is truncated "
                             f"({len(data)} of {buf['byteLength']} bytes)")
        doc.blob.extend(b"\0" * (-len(doc.blob) % 8))
        starts.append(len(doc.blob))
        doc.blob.extend(data[: buf.get("byteLength", len(data))])
    for view in doc.json.get("bufferViews", []):
        b = view.get("buffer", 0)
        if b >= len(starts):
            raise InputError(f"{doc.path}: bufferView refers to missing buffer {b}")
        view["buffer"] = 0
        view["byteOffset"] = starts[b] + view.get("byteOffset", 0)
    for i, img in enumerate(doc.json.get("images", [])):
        if "uri" in img and not is_data_uri(img["uri"]) and doc.path is not None:
            found = doc.image_bytes(i)
            if found is not None:  # embed external images so the GLB is self-contained
                data, mime = found
                img.pop("uri")
                img["bufferView"] = doc.add_view(data)
                img["mimeType"] = mime
