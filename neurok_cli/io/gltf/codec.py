"""glTF JSON in and out: between a file's bytes and pygltflib's objects, strictly.

pygltflib (1.16.5) is the document model (gltf_doc.py); this module covers where its reading
and writing of the JSON fall short, each case measured:

- **Strict JSON.** Its ``json.loads`` accepts ``NaN``, ``Infinity`` and ``1e400``; they would
  reach exports that cannot write them. :func:`parse` refuses them.
- **GLB chunks.** ``GLTF2.load_from_bytes`` has no truncation checks: a GLB cut at byte 10
  raises ``struct.error``, one cut in half loads silently with half its binary chunk; and it
  warns on unknown chunks. :func:`parse` refuses cut files and skips unknown chunks.
- **Checking.** Its decoder checks nothing: a node's ``"mesh": 7`` in a file with one mesh, or
  a negative accessor count, decode silently, and a wrongly typed object (``"cameras": [5]``)
  raises ``AttributeError`` from inside dataclasses_json. So :func:`parse` runs gltf_check on
  the JSON first, and what still fails to decode is an :class:`InputError`.
- **Decoding gaps.** ``primitive.targets`` stay plain dicts (only ``attributes`` become
  :class:`pygltflib.Attributes`); its ``Node`` has no ``weights`` and its ``Sampler`` no
  ``name``, so both were dropped; an ``extras`` that is not an object (glTF allows any JSON
  value) makes the decoder raise ``AttributeError``. :func:`decode` fixes all four: targets
  become ``Attributes``, nodes and samplers our :class:`Node` and :class:`Sampler` (pygltflib's,
  with the missing property), and other ``extras`` are set aside and restored.
- **Writing.** ``gltf_to_json`` drops ``None`` and empty values recursively, inside ``extras``
  too (``{"tags": [], "note": null}`` came out as ``{}``), and writes ``byteOffset: 0`` on an
  accessor without a bufferView, which the schema forbids (the Khronos validator:
  UNSATISFIED_DEPENDENCY). :func:`encode` leaves out unset properties as pygltflib does, but
  keeps ``extras`` and ``extensions`` exactly as they are and writes no such ``byteOffset``.
  The other defaults pygltflib spells out (``normalized: false``, ``mode: 4``, ...) are valid
  and stay.

Decoding costs about 0.4 ms per accessor (dataclasses_json): 0.1 s for the 247 accessors of a
121-frame exact export, where parsing its JSON takes 1 ms.
"""

from __future__ import annotations

import dataclasses
import json
import math
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path

import pygltflib

from ...errors import InputError
from .check import check_gltf

GLB_MAGIC = 0x46546C67  # "glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942
VERBATIM = ("extras", "extensions")  # written exactly as held (see _prune)


@dataclass
class Node(pygltflib.Node):
    """pygltflib's node with the schema's ``weights``: the default morph weights of this
    instance of its mesh (pygltflib 1.16 has no such field and drops it)."""

    weights: list[float] | None = None


@dataclass
class Sampler(pygltflib.Sampler):
    """pygltflib's texture sampler with the schema's ``name`` (1.16 drops it)."""

    name: str | None = None


# --- in --------------------------------------------------------------------------------------
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


def parse(path: Path, data: bytes) -> tuple[dict, bytes | None]:
    """The checked JSON of a .gltf or .glb file (``data``, read from ``path``) and its GLB
    binary chunk (None for a .gltf)."""
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
    return js, bin_chunk


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


def decode(js: dict, path: Path) -> pygltflib.GLTF2:
    """pygltflib's document from checked JSON (:func:`parse`), with the gaps of its decoder
    filled: targets as Attributes, node weights, sampler names, extras of any JSON type.
    ``js`` is consumed (its odd extras are moved into the result)."""
    try:
        odd = _set_aside_extras(js, ())
        with warnings.catch_warnings():  # as GLTF2.from_json: a missing "scene" warns
            warnings.simplefilter("ignore", RuntimeWarning)
            gltf = pygltflib.GLTF2.from_dict(js, infer_missing=True)
    except (AttributeError, TypeError, ValueError, KeyError) as e:  # a wrongly typed object
        raise InputError(f"{path}: a property has a value of the wrong type ({e}); the file is "
                         "not valid glTF 2.0") from e
    except RecursionError as e:  # properties nested past what any glTF needs
        raise InputError(f"{path}: properties nested too deeply; the file is not valid "
                         "glTF 2.0") from e
    for mesh in gltf.meshes:
        for prim in mesh.primitives:
            prim.attributes = pygltflib.Attributes(**(prim.attributes or {}))
            prim.targets = [pygltflib.Attributes(**t) for t in prim.targets or []]
    gltf.nodes = [Node(**_fields(n), weights=raw.get("weights"))
                  for n, raw in zip(gltf.nodes, js.get("nodes", []))]
    gltf.samplers = [Sampler(**_fields(s), name=raw.get("name"))
                     for s, raw in zip(gltf.samplers, js.get("samplers", []))]
    for where, extras in odd:
        _restore_extras(gltf, where, extras)
    return gltf


def _restore_extras(gltf: pygltflib.GLTF2, where: tuple, extras: object) -> None:
    """Put ``extras`` back on the object at ``where``; an object of a property outside the
    schema is not there (pygltflib's classes have no place for it), and its extras go with
    it."""
    obj: object = gltf
    for step in where:
        if isinstance(step, int):
            obj = obj[step] if isinstance(obj, list) and step < len(obj) else None
        elif isinstance(obj, dict):
            obj = obj.get(step)
        else:
            obj = getattr(obj, step, None)
        if obj is None:
            return
    if hasattr(obj, "extras"):
        obj.extras = extras
    elif isinstance(obj, dict):
        obj["extras"] = extras


def _fields(obj: object) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _set_aside_extras(obj: object, where: tuple) -> list[tuple[tuple, object]]:
    """Remove every ``extras`` in ``obj`` that is not an object (nor null) and return
    (where, value) for each: pygltflib's decoder cannot read them."""
    found: list[tuple[tuple, object]] = []
    if isinstance(obj, list):
        for i, x in enumerate(obj):
            found += _set_aside_extras(x, (*where, i))
    elif isinstance(obj, dict):
        if obj.get("extras") is not None and not isinstance(obj["extras"], dict):
            found.append((where, obj.pop("extras")))
        for key, value in obj.items():
            if key not in VERBATIM and isinstance(value, (list, dict)):
                found += _set_aside_extras(value, (*where, key))
    return found


# --- out -------------------------------------------------------------------------------------
def encode(gltf: pygltflib.GLTF2) -> dict:
    """The document as a JSON-ready dict: pygltflib's ``gltf_asdict`` with unset properties
    left out, extras and extensions exactly as held."""
    doc = _prune(pygltflib.gltf_asdict(gltf))
    for acc in doc.get("accessors", []):
        if "bufferView" not in acc:  # zeros or sparse: the schema forbids a byteOffset
            acc.pop("byteOffset", None)
    return doc


def _prune(obj: object) -> object:
    """pygltflib's dict of a document without its unset properties (None, and arrays or
    objects left empty), as its ``delete_empty_keys`` does, but with ``extras`` and
    ``extensions`` kept as they are (only an unset one, None or ``{}``, is left out)."""
    if isinstance(obj, list):
        return [_prune(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, value in obj.items():
        if key in VERBATIM:
            if value is not None and value != {}:
                out[key] = value
            continue
        value = _prune(value)
        if value is None or (isinstance(value, (list, dict)) and not value):
            continue
        out[key] = value
    return out
