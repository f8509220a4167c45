"""EXT_meshopt_compression: a document's bufferViews compressed with meshoptimizer's codecs,
and a compressed file's views decoded back when it is read.

The codecs are meshoptimizer's own, through the ``meshopt`` binding (its JavaScript module's
functions in Python; a wheel that needs only NumPy). What each view holds decides its codec:

- **Quantization first** (KHR_mesh_quantization), where a mesh's placement allows it (one
  node shows it, a leaf without a transform, a skin or moving channels of its own: every
  mesh ``neurok`` writes from an OBJ, PLY or STL): positions and morph deltas become 16-bit
  integers on a grid of the mesh's extent, whose scale and centre its node takes, and the
  normals' morph deltas 8-bit normalized integers, as gltfpack writes them.
- **Vertex data, animation keys, inverse bind matrices** (rows of 4 to 256 bytes, in fours):
  the vertex codec (``ATTRIBUTES``), lossless. Float positions, normals and their morph
  deltas (VEC3) that stayed float also go through the exponential filter, a mantissa of
  ``bits`` bits (``NORMAL_BITS`` for normals) with an exponent shared down each component:
  lossy, at most 2^(1-bits) of the largest value that shares it.
- **Triangle indices** (16 or 32 bit): the index codec (``TRIANGLES``), lossless; it may
  start a triangle at another corner, keeping its winding.
- **Anything else** (images, 8-bit indices, views with mixed rows): stored as it was.

docs/design.md#meshopt gives the sizes and errors measured.

A compressed view keeps its place in a *fallback* buffer that has no data (so the extension
is required: a player without it cannot read the file, as Blender's importer cannot); the
codec's bytes live in the one real buffer, the blob. Reading undoes all of it
(:func:`decode_views`), so the rest of the package never sees a compressed view.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import pygltflib

from ...errors import InputError
from .check import COMPONENT_SIZES, TYPE_SIZES

if TYPE_CHECKING:  # doc.py reads files through this module
    from .doc import GltfDocument

EXTENSION = "EXT_meshopt_compression"
BITS = 16  # the exponential filter's mantissa for float positions: docs/design.md#meshopt
NORMAL_BITS = 12  # and for normals (0.01 degrees)
QUANTIZATION = "KHR_mesh_quantization"
MODES = ("ATTRIBUTES", "TRIANGLES", "INDICES")
FILTERS = ("NONE", "OCTAHEDRAL", "QUATERNION", "EXPONENTIAL", "COLOR")


def _codec():
    import meshopt  # a core dependency; imported only where a file is compressed or read so

    return meshopt


# --- writing -----------------------------------------------------------------------------
def _view_uses(g: pygltflib.GLTF2) -> dict[int, list[tuple[int, str]]]:
    """Each bufferView's accessors and what they are: ``(accessor, role)`` with role an
    attribute's name (``POSITION``, ``TEXCOORD_0``, ...), ``indices``, ``key`` (animation),
    ``sparse`` (a sparse accessor's parts) or ``other`` (inverse bind matrices, ...)."""
    roles: dict[int, str] = {}

    def mark(a: int, role: str) -> None:
        roles[a] = role if roles.get(a, role) == role else "other"

    for mesh in g.meshes:
        for prim in mesh.primitives:
            for name, a in _attributes(prim.attributes).items():
                mark(a, name)
            for target in prim.targets or []:
                for name, a in _attributes(target).items():
                    mark(a, name)
            if prim.indices is not None:
                mark(prim.indices, "indices" if prim.mode in (None, 4) else "other")
    for anim in g.animations:
        for s in anim.samplers:
            mark(s.input, "key")
            mark(s.output, "key")
    uses: dict[int, list[tuple[int, str]]] = {}
    for i, acc in enumerate(g.accessors):
        if acc.bufferView is not None:
            uses.setdefault(acc.bufferView, []).append((i, roles.get(i, "other")))
        if acc.sparse is not None:  # sparse parts: read as they are
            uses.setdefault(acc.sparse.indices.bufferView, []).append((i, "sparse"))
            uses.setdefault(acc.sparse.values.bufferView, []).append((i, "sparse"))
    return uses


def _attributes(attrs) -> dict[str, int]:
    items = attrs.items() if isinstance(attrs, dict) else vars(attrs).items()
    return {k: v for k, v in items if isinstance(v, int)}


def _quantize(doc: GltfDocument, g: pygltflib.GLTF2, uses: dict[int, list[tuple[int, str]]]
              ) -> dict[int, bytes]:
    """Quantize each mesh whose placement allows it (the module's docstring says which and
    how); ``g`` (a copy of ``doc.gltf``) is edited. Returns the new data of each view.

    Integers compress far better than floats: the vertex codec stores each row's change
    from the row before, and small deltas of integers are small. Error: half a step of
    the grid, the mesh's extent / 131,070, on the rest shape and on each morph delta."""
    moved = {c.target.node for a in g.animations for c in a.channels
             if c.target.path in ("translation", "rotation", "scale")}
    shown: dict[int, list[int]] = {}
    for ni, node in enumerate(g.nodes):
        if node.mesh is not None:
            shown.setdefault(node.mesh, []).append(ni)
    owners: dict[int, set[int]] = {}  # the meshes each vertex accessor serves
    for mi, mesh in enumerate(g.meshes):
        for p in mesh.primitives:
            for attrs in [p.attributes, *(p.targets or [])]:
                for a in _attributes(attrs).values():
                    owners.setdefault(a, set()).add(mi)
    out: dict[int, bytes] = {}
    for mi, nodes in shown.items():
        node = g.nodes[nodes[0]]
        if len(nodes) > 1 or node.children or node.skin is not None or nodes[0] in moved \
                or any(x is not None for x in (node.matrix, node.translation, node.rotation,
                                                node.scale)):
            continue
        prims = g.meshes[mi].primitives
        base = {p.attributes.POSITION for p in prims} - {None}
        deltas = {t.POSITION for p in prims for t in p.targets or [] if t.POSITION is not None}
        if not base or base & deltas or not all(
                _alone(g, a, uses) and owners[a] == {mi} for a in base | deltas):
            continue  # (an accessor another mesh shares would lose that mesh's placement)
        data = {a: doc.accessor(a).astype(np.float64) for a in base | deltas}
        rest = np.concatenate([data[a] for a in sorted(base)])
        centre = (rest.min(axis=0) + rest.max(axis=0)) / 2
        reach = max(np.abs(rest - centre).max(),
                    max((np.abs(data[a]).max(initial=0.0) for a in deltas), default=0), 1e-30)
        step = float(reach) / 32767
        for a, x in data.items():
            q = np.rint((x - centre if a in base else x) / step).astype(np.int16)
            _replace(g, a, q, out, normalized=False)
            g.accessors[a].min, g.accessors[a].max = q.min(axis=0).tolist(), q.max(axis=0).tolist()
        # normals' deltas to 8 bits, as gltfpack writes them: 0.5 degrees
        turns = {t.NORMAL for p in prims for t in p.targets or [] if t.NORMAL is not None}
        for a in turns - base - deltas:
            if _alone(g, a, uses) and owners[a] == {mi}:
                x = np.clip(doc.accessor(a), -1.0, 1.0)
                _replace(g, a, np.rint(x * 127).astype(np.int8), out, normalized=True)
        node.translation, node.scale = centre.tolist(), [step] * 3
    if out:
        g.extensionsUsed = sorted({*(g.extensionsUsed or []), QUANTIZATION})
        g.extensionsRequired = sorted({*(g.extensionsRequired or []), QUANTIZATION})
    return out


def _replace(g: pygltflib.GLTF2, a: int, q: np.ndarray, out: dict[int, bytes], *,
             normalized: bool) -> None:
    """Accessor ``a``'s data becomes the integers ``q`` (n, 3), each row padded to four
    components (vertex rows align to 4 bytes), in its own bufferView."""
    rows = np.zeros((len(q), 4), q.dtype)
    rows[:, :3] = q
    acc = g.accessors[a]
    acc.componentType = 5122 if q.dtype == np.int16 else 5120
    acc.normalized, acc.byteOffset, acc.min, acc.max = normalized or None, None, None, None
    view = g.bufferViews[acc.bufferView]
    view.byteStride, view.byteLength = rows.itemsize * 4, rows.nbytes
    out[acc.bufferView] = rows.tobytes()


def _alone(g: pygltflib.GLTF2, a: int, uses: dict[int, list[tuple[int, str]]]) -> bool:
    """Accessor ``a`` is float VEC3, dense, and the only one its bufferView holds."""
    acc = g.accessors[a]
    return (acc.componentType == 5126 and acc.type == "VEC3" and acc.sparse is None
            and acc.bufferView is not None and not acc.byteOffset
            and len(uses.get(acc.bufferView, [])) == 1
            and g.bufferViews[acc.bufferView].byteStride in (None, 12))


def _plan(g: pygltflib.GLTF2, view: int, uses: list[tuple[int, str]], bits: int
          ) -> tuple[str, int, int] | None:
    """(mode, row bytes, exponential filter bits or 0) for a view; None to store it as is."""
    if any(role == "sparse" for _, role in uses):
        return None
    accs = [g.accessors[a] for a, _ in uses]
    sizes = {COMPONENT_SIZES[a.componentType] * TYPE_SIZES[a.type] for a in accs}
    length = g.bufferViews[view].byteLength
    if all(role == "indices" for _, role in uses):
        size = sizes.pop() if len(sizes) == 1 else 0
        # the codec reads whole triangles from the view's start
        whole = all((a.byteOffset or 0) % (3 * size or 1) == 0 for a in accs)
        return ("TRIANGLES", size, 0) if size in (2, 4) and length % (3 * size) == 0 \
            and whole else None
    stride = g.bufferViews[view].byteStride or (sizes.pop() if len(sizes) == 1 else 0)
    if not (0 < stride <= 256 and stride % 4 == 0 and length % stride == 0):
        return None
    floats = stride == 12 and all(a.componentType == 5126 and a.type == "VEC3" for a in accs)
    roles = {role for _, role in uses}
    if floats and roles == {"NORMAL"}:
        return "ATTRIBUTES", stride, min(bits, NORMAL_BITS)
    return "ATTRIBUTES", stride, bits if floats and roles <= {"POSITION", "NORMAL"} else 0


def _encode(data: bytes, mode: str, stride: int, bits: int) -> bytes:
    codec = _codec()
    if mode == "TRIANGLES":
        return codec.encode_gltf_buffer(np.frombuffer(data, f"<u{stride}"), mode)
    rows = np.frombuffer(data, np.uint8).reshape(-1, stride)
    if bits:
        rows = codec.encode_filter_exp(np.frombuffer(data, "<f4").reshape(-1, 3), bits,
                                       "SharedComponent")
    return codec.encode_gltf_buffer(rows, mode)


def compress(doc: GltfDocument, *, bits: int = BITS, quantize: bool = True) -> GltfDocument:
    """A new document whose vertex, index and key views are meshopt-compressed, and whose
    meshes are quantized where their placement allows (the module's docstring says which);
    ``doc`` is left as it was. Views no codec fits stay as they are."""
    if not 1 <= bits <= 24:
        raise ValueError(f"bits must be 1 to 24, not {bits}")
    g = copy.deepcopy(doc.gltf)
    uses = _view_uses(g)
    replaced = _quantize(doc, g, uses) if quantize else {}
    out = dataclasses.replace(doc, gltf=g, blob=bytearray())
    views, fallback = [], 0
    for i, view in enumerate(g.bufferViews):
        start = view.byteOffset or 0
        data = replaced.get(i, bytes(doc.blob[start: start + view.byteLength]))
        stride = view.byteStride
        view = pygltflib.BufferView(buffer=0, byteOffset=None, byteLength=len(data),
                                    byteStride=stride, target=view.target, name=view.name,
                                    extras=view.extras, extensions=dict(view.extensions or {}))
        plan = _plan(g, i, uses[i], bits) if i in uses else None
        out.blob.extend(b"\0" * (-len(out.blob) % 4))
        if plan is None:
            view.byteOffset = len(out.blob)
            out.blob.extend(data)
        else:
            mode, rows, filt_bits = plan
            packed = _encode(data, mode, rows, filt_bits)
            ext = {"buffer": 0, "byteOffset": len(out.blob), "byteLength": len(packed),
                   "byteStride": rows, "count": len(data) // rows, "mode": mode}
            if filt_bits:
                ext["filter"] = "EXPONENTIAL"
            out.blob.extend(packed)
            fallback += -fallback % 4
            view.buffer, view.byteOffset = 1, fallback
            view.extensions[EXTENSION] = ext
            fallback += len(data)
        views.append(view)
    g.bufferViews = views
    out.fallback = fallback
    if fallback:
        g.extensionsUsed = sorted({*(g.extensionsUsed or []), EXTENSION})
        g.extensionsRequired = sorted({*(g.extensionsRequired or []), EXTENSION})
    return out


# --- reading -----------------------------------------------------------------------------
def is_fallback(buf: pygltflib.Buffer) -> bool:
    """A buffer the extension marks as a fallback: it may have no data."""
    ext = (buf.extensions or {}).get(EXTENSION)
    return isinstance(ext, dict) and ext.get("fallback") is True


def decode_views(doc: GltfDocument, starts: list[int], name: str) -> set[int]:
    """Decode every compressed bufferView of ``doc`` into its blob (``starts``: where each
    file buffer begins in the blob); the views then point at the plain data, as if the file
    had never been compressed. Returns the decoded views' indices."""
    decoded = set()
    for i, view in enumerate(doc.gltf.bufferViews):
        ext = (view.extensions or {}).get(EXTENSION)
        if ext is None:
            continue
        data = _decode(doc, starts, ext, view.byteLength,
                       f"{name}: bufferView {i}'s {EXTENSION}")
        doc.blob.extend(b"\0" * (-len(doc.blob) % 4))
        view.byteOffset, view.buffer = len(doc.blob), 0
        view.byteLength = len(data)
        doc.blob.extend(data)
        view.extensions = {k: v for k, v in view.extensions.items() if k != EXTENSION} or None
        decoded.add(i)
    if decoded:
        g = doc.gltf
        g.extensionsUsed = [e for e in g.extensionsUsed or [] if e != EXTENSION]
        g.extensionsRequired = [e for e in g.extensionsRequired or [] if e != EXTENSION]
    return decoded


def _decode(doc: GltfDocument, starts: list[int], ext: object, length_out: int, where: str
            ) -> bytes:
    """A compressed view's data, decoded; ``length_out``: the bytes its bufferView says it
    holds, which the extension's rows must fill (a corrupt count would ask for any size)."""
    if not isinstance(ext, dict):
        raise InputError(f"{where} must be an object")
    b, offset, length = ext.get("buffer"), ext.get("byteOffset", 0), ext.get("byteLength")
    stride, count = ext.get("byteStride"), ext.get("count")
    mode, filt = ext.get("mode"), ext.get("filter", "NONE")
    ints = (b, offset, length, stride, count)
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in ints) \
            or b >= len(starts) or mode not in MODES or filt not in FILTERS:
        raise InputError(f"{where} is malformed (buffer, byteLength, byteStride, count, "
                         f"mode {mode!r}, filter {filt!r})")
    if count * stride != length_out:
        raise InputError(f"{where}: {count} rows of {stride} bytes, where its bufferView "
                         f"holds {length_out} bytes (corrupt file)")
    start = starts[b] + offset
    if start + length > len(doc.blob):
        raise InputError(f"{where} runs past the end of buffer {b} (truncated or corrupt file)")
    source = bytes(doc.blob[start: start + length])
    try:
        out = _codec().decode_gltf_buffer(source, count, stride, mode,
                                          None if filt == "NONE" else filt)
    except (ValueError, RuntimeError) as e:
        raise InputError(f"{where} does not decode ({e}); the file is corrupt") from e
    return np.ascontiguousarray(out).tobytes()
