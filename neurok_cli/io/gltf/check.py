"""Schema-level checks of a glTF document's raw JSON, before pygltflib decodes it.

pygltflib validates nothing: its decoder takes a node's ``"mesh": 7`` in a file with one mesh,
a negative accessor count or a string where a number belongs as they are, and fails on a wrongly
typed object with an ``AttributeError`` from inside dataclasses_json. The readers index the
decoded document freely (``gltf.accessors[i].componentType``), so a file that breaks the glTF
2.0 schema would surface as an IndexError, a TypeError or, worse, as wrong data (a negative
accessor count once read the whole buffer). :func:`check_gltf` walks every object the readers
touch, on the JSON as parsed (where a wrong type is still visible as such), and raises one
:class:`InputError` naming the file, the object and what is wrong with it. It checks types,
index ranges and byte ranges; it reads no buffer.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NoReturn

from ...errors import InputError

COMPONENT_SIZES = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
INDEX_TYPES = (5121, 5123, 5125)
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")
ATTRIBUTE_TYPES = {"POSITION": "VEC3", "NORMAL": "VEC3", "TEXCOORD_0": "VEC2"}
PATH_TYPES = {"translation": "VEC3", "rotation": "VEC4", "scale": "VEC3", "weights": "SCALAR"}
ARRAYS = ("accessors", "animations", "bufferViews", "buffers", "images", "materials", "meshes",
          "nodes", "samplers", "scenes", "skins", "textures")
UNSUPPORTED = {"KHR_draco_mesh_compression": "Draco compression"}
MAX_ZEROS_BYTES = 1 << 28  # an accessor without a bufferView is allocated as zeros (256 MiB)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class _Checker:
    """The document and its file name, with one helper per kind of value."""

    def __init__(self, js: dict, path: Path | None):
        self.js, self.name = js, str(path) if path else "glTF"

    def fail(self, where: str, problem: str) -> NoReturn:
        raise InputError(f"{self.name}: {where} {problem}; the file is not valid glTF 2.0")

    def objects(self, key: str) -> list[dict]:
        """A top-level array of objects (empty when absent)."""
        arr = self.js.get(key, [])
        if not isinstance(arr, list) or not all(isinstance(o, dict) for o in arr):
            self.fail(f"'{key}'", "must be an array of objects")
        return arr

    def index(self, where: str, value: object, key: str) -> int:
        """``value`` must index the top-level array ``key``."""
        n = len(self.js.get(key, []))
        if not _is_int(value) or not 0 <= value < n:
            one = "mesh" if key == "meshes" else key[:-1]
            self.fail(where, f"refers to {one} {value!r}, but the file has {n} {key}")
        return value  # type: ignore[return-value]

    def count(self, where: str, value: object, *, low: int = 0) -> int:
        if not _is_int(value) or value < low:
            self.fail(where, f"must be a whole number of at least {low}, not {value!r}")
        return value  # type: ignore[return-value]

    def numbers(self, where: str, value: object, n: int | None = None) -> None:
        if not isinstance(value, list) or (n is not None and len(value) != n) or \
                not all(_is_number(x) for x in value):
            size = f"{n} " if n is not None else ""
            self.fail(where, f"must be an array of {size}finite numbers, not {_short(value)}")

    def mapping(self, where: str, value: object) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"must be an object, not {_short(value)}")
        return value  # type: ignore[return-value]


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_asset(c: _Checker) -> None:
    asset = c.js.get("asset")
    if not isinstance(asset, dict):
        c.fail("'asset'", f"must be an object with a 'version', not {_short(asset)}")
    required = c.js.get("extensionsRequired", [])
    if not isinstance(required, list):
        c.fail("'extensionsRequired'", "must be an array of names")
    for ext in required:
        if ext in UNSUPPORTED:
            raise InputError(f"{c.name}: uses {UNSUPPORTED[ext]} ({ext}), which is not "
                             "supported; decompress it first (e.g. gltf-transform copy)")


def _check_buffers(c: _Checker) -> None:
    for i, buf in enumerate(c.objects("buffers")):
        c.count(f"buffer {i} byteLength", buf.get("byteLength"), low=1)
        if "uri" in buf and not isinstance(buf["uri"], str):
            c.fail(f"buffer {i} uri", "must be a string")
    buffers = c.js.get("buffers", [])
    for i, view in enumerate(c.objects("bufferViews")):
        where = f"bufferView {i}"
        b = c.index(where, view.get("buffer"), "buffers")
        start = c.count(f"{where} byteOffset", view.get("byteOffset", 0))
        length = c.count(f"{where} byteLength", view.get("byteLength"), low=1)
        if "byteStride" in view:
            stride = c.count(f"{where} byteStride", view["byteStride"], low=4)
            if stride > 252 or stride % 4:
                c.fail(f"{where} byteStride", f"must be a multiple of 4 up to 252, not {stride}")
        if start + length > buffers[b]["byteLength"]:
            c.fail(where, f"ends at byte {start + length}, past the end of buffer {b} "
                          f"({buffers[b]['byteLength']} bytes)")


def _check_span(c: _Checker, where: str, view_index: object, offset: object, elem: int,
                count: int) -> None:
    """Bytes ``offset`` .. of ``count`` elements of ``elem`` bytes fit in the bufferView."""
    v = c.index(f"{where} bufferView", view_index, "bufferViews")
    view = c.js["bufferViews"][v]
    start = c.count(f"{where} byteOffset", offset)
    stride = view.get("byteStride") or elem
    if stride < elem:
        c.fail(where, f"has {elem}-byte elements, wider than its bufferView's stride {stride}")
    end = start + stride * (count - 1) + elem
    if end > view["byteLength"]:
        c.fail(where, f"reads {count} elements up to byte {end}, past the end of bufferView "
                      f"{v} ({view['byteLength']} bytes)")


def _check_sparse(c: _Checker, where: str, sparse: object, count: int, elem: int) -> None:
    sp = c.mapping(f"{where} sparse", sparse)
    n = c.count(f"{where} sparse count", sp.get("count"), low=1)
    if n > count:
        c.fail(f"{where} sparse count", f"{n} exceeds the accessor's count {count}")
    idx = c.mapping(f"{where} sparse indices", sp.get("indices"))
    if idx.get("componentType") not in INDEX_TYPES:
        c.fail(f"{where} sparse indices componentType",
               f"must be one of {INDEX_TYPES}, not {_short(idx.get('componentType'))}")
    _check_span(c, f"{where} sparse indices", idx.get("bufferView"), idx.get("byteOffset", 0),
                COMPONENT_SIZES[idx["componentType"]], n)
    vals = c.mapping(f"{where} sparse values", sp.get("values"))
    _check_span(c, f"{where} sparse values", vals.get("bufferView"), vals.get("byteOffset", 0),
                elem, n)


def _check_accessors(c: _Checker) -> None:
    for i, acc in enumerate(c.objects("accessors")):
        where = f"accessor {i}"
        ctype, atype = acc.get("componentType"), acc.get("type")
        if not _is_int(ctype) or ctype not in COMPONENT_SIZES:
            valid = ", ".join(map(str, COMPONENT_SIZES))
            c.fail(f"{where} componentType", f"must be one of {valid}, not {_short(ctype)}")
        if not isinstance(atype, str) or atype not in TYPE_SIZES:
            c.fail(f"{where} type", f"must be one of {', '.join(TYPE_SIZES)}, not {_short(atype)}")
        count = c.count(f"{where} count", acc.get("count"), low=1)
        elem = COMPONENT_SIZES[ctype] * TYPE_SIZES[atype]
        if "bufferView" in acc:
            _check_span(c, where, acc["bufferView"], acc.get("byteOffset", 0), elem, count)
        elif count * elem > MAX_ZEROS_BYTES:
            c.fail(where, f"has no bufferView and {count} elements; too large to be zeros")
        if "sparse" in acc:
            _check_sparse(c, where, acc["sparse"], count, elem)
        for key in ("min", "max"):
            if key in acc:
                c.numbers(f"{where} {key}", acc[key])


def _check_looks(c: _Checker) -> None:
    for i, img in enumerate(c.objects("images")):
        if "uri" in img and not isinstance(img["uri"], str):
            c.fail(f"image {i} uri", "must be a string")
        if "bufferView" in img:
            c.index(f"image {i}", img["bufferView"], "bufferViews")
    for i, tex in enumerate(c.objects("textures")):
        if "source" in tex:
            c.index(f"texture {i} source", tex["source"], "images")
    for i, mat in enumerate(c.objects("materials")):
        pbr = c.mapping(f"material {i} pbrMetallicRoughness", mat.get("pbrMetallicRoughness", {}))
        if "baseColorFactor" in pbr:
            c.numbers(f"material {i} baseColorFactor", pbr["baseColorFactor"], 4)
        if "baseColorTexture" in pbr:
            tex = c.mapping(f"material {i} baseColorTexture", pbr["baseColorTexture"])
            c.index(f"material {i} baseColorTexture", tex.get("index"), "textures")


def _accessor_count(c: _Checker, where: str, index: object) -> int:
    i = c.index(where, index, "accessors")
    return c.js["accessors"][i]["count"]


def _check_primitive(c: _Checker, where: str, prim: dict) -> None:
    attrs = c.mapping(f"{where} attributes", prim.get("attributes"))
    counts = {_accessor_count(c, f"{where} attribute {k}", a) for k, a in attrs.items()}
    if len(counts) > 1:
        c.fail(where, f"has attributes of different counts {sorted(counts)}")
    _check_types(c, where, attrs)
    if "indices" in prim:
        i = c.index(f"{where} indices", prim["indices"], "accessors")
        acc = c.js["accessors"][i]
        if acc["type"] != "SCALAR" or acc["componentType"] not in INDEX_TYPES:
            c.fail(f"{where} indices", "must be a SCALAR accessor of unsigned integers")
    mode = prim.get("mode", 4)
    if not _is_int(mode) or not 0 <= mode <= 6:
        c.fail(f"{where} mode", f"must be 0 to 6, not {_short(mode)}")
    if "material" in prim:
        c.index(f"{where} material", prim["material"], "materials")
    targets = prim.get("targets", [])
    if not isinstance(targets, list):
        c.fail(f"{where} targets", "must be an array")
    for t, target in enumerate(targets):
        for k, a in c.mapping(f"{where} target {t}", target).items():
            if _accessor_count(c, f"{where} target {t} {k}", a) not in (counts or {None}):
                c.fail(f"{where} target {t} {k}", "has a count unlike the primitive's")
        _check_types(c, f"{where} target {t}", target)


def _check_types(c: _Checker, where: str, attrs: dict) -> None:
    """The attributes we read have the element type the readers assume."""
    for name, want in ATTRIBUTE_TYPES.items():
        if name in attrs and c.js["accessors"][attrs[name]]["type"] != want:
            c.fail(f"{where} {name}", f"must be a {want} accessor")


def _check_meshes(c: _Checker) -> None:
    for m, mesh in enumerate(c.objects("meshes")):
        prims = mesh.get("primitives")
        if not isinstance(prims, list) or not prims:
            c.fail(f"mesh {m} primitives", "must be a non-empty array")
        for p, prim in enumerate(prims):
            _check_primitive(c, f"mesh {m} primitive {p}", c.mapping(f"mesh {m} primitive {p}",
                                                                     prim))
        if "weights" in mesh:
            c.numbers(f"mesh {m} weights", mesh["weights"])


def _check_nodes(c: _Checker) -> None:
    for i, node in enumerate(c.objects("nodes")):
        where = f"node {i}"
        for key, n in (("matrix", 16), ("translation", 3), ("rotation", 4), ("scale", 3)):
            if key in node:
                c.numbers(f"{where} {key}", node[key], n)
        if "weights" in node:
            c.numbers(f"{where} weights", node["weights"])
        if "mesh" in node:
            c.index(f"{where} mesh", node["mesh"], "meshes")
        children = node.get("children", [])
        if not isinstance(children, list):
            c.fail(f"{where} children", "must be an array of node indices")
        for ch in children:
            c.index(f"{where} child", ch, "nodes")
    scenes = c.objects("scenes")
    for s, scene in enumerate(scenes):
        nodes = scene.get("nodes", [])
        if not isinstance(nodes, list):
            c.fail(f"scene {s} nodes", "must be an array of node indices")
        for n in nodes:
            c.index(f"scene {s}", n, "nodes")
    if "scene" in c.js:
        c.index("'scene'", c.js["scene"], "scenes")


def _check_samplers(c: _Checker, a: int, samplers: object) -> list[dict]:
    if not isinstance(samplers, list):
        c.fail(f"animation {a} samplers", "must be an array")
    for s, smp in enumerate(samplers):
        where = f"animation {a} sampler {s}"
        smp = c.mapping(where, smp)
        c.index(f"{where} input", smp.get("input"), "accessors")
        c.index(f"{where} output", smp.get("output"), "accessors")
        if smp.get("interpolation", "LINEAR") not in INTERPOLATIONS:
            c.fail(f"{where} interpolation", f"must be one of {', '.join(INTERPOLATIONS)}")
    return samplers


def _check_animations(c: _Checker) -> None:
    for a, anim in enumerate(c.objects("animations")):
        samplers = _check_samplers(c, a, anim.get("samplers", []))
        channels = anim.get("channels", [])
        if not isinstance(channels, list):
            c.fail(f"animation {a} channels", "must be an array")
        for k, ch in enumerate(channels):
            where = f"animation {a} channel {k}"
            ch = c.mapping(where, ch)
            smp = ch.get("sampler")
            if not _is_int(smp) or not 0 <= smp < len(samplers):
                c.fail(where, f"refers to sampler {smp!r}, but the animation has {len(samplers)}")
            target = c.mapping(f"{where} target", ch.get("target"))
            if not isinstance(target.get("path"), str):
                c.fail(f"{where} target path", f"must be a name such as {', '.join(PATH_TYPES)}")
            if "node" in target:
                c.index(f"{where} target", target["node"], "nodes")
                if target["path"] in PATH_TYPES:
                    _check_channel(c, where, samplers[smp], target["node"], target["path"])


def _morph_targets(c: _Checker, node: int) -> int:
    """How many morph targets the mesh of ``node`` has (0 without a mesh)."""
    mesh = c.js["nodes"][node].get("mesh")
    return len(c.js["meshes"][mesh]["primitives"][0].get("targets", [])) if mesh is not None \
        else 0


def _check_channel(c: _Checker, where: str, sampler: dict, node: int, path: str) -> None:
    """Keyframe times are floats; the values have the type and count the path needs."""
    times = c.js["accessors"][sampler["input"]]
    values = c.js["accessors"][sampler["output"]]
    if times["type"] != "SCALAR" or times["componentType"] != 5126:
        c.fail(f"{where} input", "must be a SCALAR float accessor of keyframe times")
    if values["type"] != PATH_TYPES[path]:
        c.fail(f"{where} output", f"must be {PATH_TYPES[path]} to animate {path}, not "
                                  f"{values['type']}")
    per_key = 3 if sampler.get("interpolation") == "CUBICSPLINE" else 1
    if path == "weights":
        per_key *= _morph_targets(c, node)
        if not per_key:
            c.fail(where, f"animates the morph weights of node {node}, which has no morph "
                          "targets")
    if values["count"] != times["count"] * per_key:
        c.fail(f"{where} output", f"has {values['count']} values for {times['count']} "
                                  f"keyframes; {times['count'] * per_key} expected")


def check_gltf(js: object, path: Path | None = None) -> None:
    """Raise :class:`InputError` unless ``js`` (a parsed glTF JSON document) is well formed
    wherever the readers look: object types, index ranges, enums, counts and byte ranges."""
    if not isinstance(js, dict):
        raise InputError(f"{path}: not a glTF 2.0 file (the JSON is not an object)")
    c = _Checker(js, path)
    _check_asset(c)
    for key in ARRAYS:
        c.objects(key)
    _check_buffers(c)
    _check_accessors(c)
    _check_looks(c)
    _check_meshes(c)
    _check_nodes(c)
    _check_animations(c)
