"""Animated glTF: write per-frame vertex positions as morph targets plus a ``weights``
animation, or as a skin whose joints move (``bones``: gltf/bones.py).

The frames are factored into morph targets and weights by encoding.py (``exact`` or
``compact``), the weights rescaled to [0, 1] per target. The offset that leaves is folded
into the base mesh of a new document, and kept as one more target, at weight 1 in our
animations, in a glTF input's own document, whose base, targets and animations must stay as
they were. There, parts that the file's own animation moves ride on the body as nodes, and
our animations come first, playing the file's own channels too (gltf_parts.py).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pygltflib

from ...errors import UsageError
from ...limits import GLTF_ENCODINGS, TARGETS
from ..asset import Asset, Part
from ..encoding import encode, fit_normals, unit_weights
from ..normals import turned_normal_deltas, vertex_normals
from ..skinning import decompose
from .bones import (
    add_skin,
    animation_name,
    hold_weights,
    joint_animations,
    retarget_weights,
)
from .build import GENERATOR, build_document, part_normals
from .doc import ARRAY_BUFFER, GltfDocument, copy_document
from .meshopt import compress
from .parts import Rider, file_weight_tracks, find_riders, ride_and_compose
from .scene import default_weights


@dataclass
class ExportReport:
    """What the writer did: encoding, number of morph targets, achieved error, file size."""

    encoding: str
    targets: int
    max_error: float  # largest vertex error / bounding-box diagonal
    bytes: int = 0
    bones: int = 0  # joints of the skin (the bones encoding)
    mean_error: float | None = None  # mean vertex error / diagonal (the bones encoding)
    warnings: list[str] = field(default_factory=list)
    riding: list[str] = field(default_factory=list)  # parts the file's animation moves, riding
    # rigidly on the body (gltf_parts.py)


def _normal_deltas(asset: Asset, frames: np.ndarray, parts_normals: list[np.ndarray]
                   ) -> np.ndarray:
    """(T, N, 3) change of each file normal (asset frame), rotated with the welded surface."""
    w = asset.welded()
    rep = np.empty(len(w.vertices), np.int64)
    rep[w.index] = np.arange(len(w.index))
    rest = vertex_normals(w.vertices, w.faces)[w.index]
    return turned_normal_deltas(frames, w.faces, rep, w.index, rest,
                                np.concatenate(parts_normals))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def _open_document(asset: Asset, riders: Sequence[Rider] = ()
                   ) -> tuple[GltfDocument | None, list[tuple]]:
    """For a glTF asset: a copy of its document and, per part, (node, mesh, primitive,
    (3, 3) map from asset-frame vectors to the node's local frame). Instanced meshes get one
    copy per deformed node, since each instance deforms on its own; a rider's part keeps its
    mesh (mesh None in its row: it takes no targets). Other assets: (None, identity maps).
    """
    if asset.document is None:
        return None, [(None, None, None, np.eye(3)) for _ in asset.parts]
    doc = copy_document(asset.document)
    doc.gltf.asset.generator = GENERATOR
    nodes, meshes = doc.gltf.nodes, doc.gltf.meshes
    riding = {p for r in riders for p in r.parts}
    meshes_seen: dict[int, int] = {nodes[asset.parts[p].node].mesh: asset.parts[p].node
                                   for p in riding}
    out = []
    for pi, part in enumerate(asset.parts):
        node = nodes[part.node]
        if pi in riding:
            out.append((part.node, None, part.primitive, np.linalg.inv(part.matrix[:3, :3])))
            continue
        owner = meshes_seen.setdefault(node.mesh, part.node)
        if owner != part.node:
            meshes.append(copy.deepcopy(meshes[node.mesh]))
            node.mesh = len(meshes) - 1
            meshes_seen[node.mesh] = part.node
        out.append((part.node, node.mesh, part.primitive, np.linalg.inv(part.matrix[:3, :3])))
    return doc, out


def _local_normals(doc: GltfDocument | None, prim: pygltflib.Primitive | None, part: Part,
                   groups: np.ndarray) -> np.ndarray:
    if prim is not None and prim.attributes.NORMAL is not None:
        return doc.accessor(prim.attributes.NORMAL).astype(np.float64)
    return part_normals(part, groups)


def write_animated(asset: Asset, motions: Sequence[np.ndarray], path: str | Path, *,
                   fps: float, encoding: str = "compact", tolerance: float = 1e-3,
                   max_targets: int = TARGETS, names: Sequence[str] | None = None,
                   root_matrix: np.ndarray | None = None, as_gltf: bool = False,
                   bones: int | None = None, meshopt: bool = False,
                   overwrite: bool = False) -> ExportReport:
    """Write ``asset`` animated by ``motions`` to a GLB at ``path`` (atomically).

    Args:
        asset: the loaded asset; a glTF input keeps its scene, materials and animations.
        motions: one or more (T, N, 3) arrays of file-frame positions of all file vertices
            (parts concatenated, as :attr:`Asset.vertices`); each becomes one animation.
        fps: frames per second of every motion.
        encoding: "compact", "exact" or "bones". tolerance: compact's max error / bbox
            diagonal. max_targets: compact's most morph targets. bones: the skin's joints
            (None: as many as the clip needs, io/skinning.py).
        root_matrix: (4, 4) placed above a non-glTF asset (e.g. units to metres); None turns
            a Z-up asset's frame to glTF's +Y up (vertex data stays in the file's frame).
        as_gltf: write a single .gltf JSON file with the buffer embedded as a data URI.
        meshopt: compress the file's data with EXT_meshopt_compression (gltf/meshopt.py).
        overwrite: the motions' memory may be reused for the work (their contents are
            lost): one C-ordered float64 motion is then not copied (a 100k-vertex clip's
            copy took 0.56 s).
    """
    if encoding not in GLTF_ENCODINGS:
        raise UsageError(f"unknown encoding {encoding!r}; choose one of "
                         f"{', '.join(GLTF_ENCODINGS)}")
    if not fps > 0:
        raise UsageError(f"fps must be positive, not {fps}")
    motions = [np.asarray(m, np.float64) for m in motions]
    riders = find_riders(asset)  # parts the file's own animation moves: gltf_parts.py
    frames = _frames(asset, motions, riders, overwrite)
    doc, placements = _open_document(asset, riders)
    if encoding == "bones":
        report, doc = _write_bones(asset, doc, placements, frames, motions, riders, fps=fps,
                                   names=names, root_matrix=root_matrix, bones=bones)
        return _save(report, doc, path, as_gltf, meshopt)
    normals_local, normals_asset = _file_normals(asset, doc, placements)
    dn = _normal_deltas(asset, frames, normals_asset)  # (T, N, 3) float32
    diag = float(np.linalg.norm(np.ptp(asset.vertices, axis=0))) or 1.0
    frames -= asset.vertices  # the displacements, in place: a 100k-vertex clip is 290 MB
    bases, weights, err = encode(frames, encoding=encoding, tolerance=tolerance * diag,
                                 max_targets=max_targets)
    del frames
    report = ExportReport(encoding, len(bases), err / diag,
                          riding=[asset.parts[p].name for r in riders for p in r.parts])
    if encoding == "compact" and err > tolerance * diag:
        report.warnings.append(f"compact encoding reached {err / diag:.2e} of the diagonal "
                               f"with {max_targets} targets (asked {tolerance:.0e}); "
                               "use «encoding» exact")
    if encoding == "exact" and len(bases) > max_targets:
        report.warnings.append(f"{len(bases)} morph targets: some viewers (WebGL) blend at most "
                               "~200; use the compact encoding for wide support")
    bases, weights, offset = unit_weights(bases, weights)
    offs = asset.offsets
    nfit = fit_normals(dn, weights, exact=encoding == "exact")  # (K + 1, N, 3)
    if doc is None:  # a new document: write the final base data directly
        base_pos = [p.vertices + offset[a:b] for p, a, b in zip(asset.parts, offs, offs[1:])]
        base_n = [_unit(nl + nfit[0][a:b]) for nl, a, b in zip(normals_local, offs, offs[1:])]
        doc, built = build_document(asset, root_matrix, positions=base_pos, normals=base_n)
        placements = [(nd, m, pr, np.eye(3)) for nd, m, pr in built]
    elif np.abs(offset).max(initial=0.0) > 0 or np.abs(nfit[0]).max(initial=0.0) > 0:
        # the file's own base stays: the offset (and its normals' share) is a target of its
        # own, on (weight 1) wherever ours play and off in the file's animations
        bases = np.concatenate([offset[None], bases])
        weights = np.concatenate([np.ones((len(weights), 1)), weights], axis=1)
        nfit = np.concatenate([np.zeros_like(nfit[:1]), nfit])
        report.targets += 1
    target_count = _write_targets(doc, asset, placements, bases, nfit)
    deformed = {node for node, mesh, _, _ in placements if mesh is not None}
    src = asset.document
    lengths = [len(m) for m in motions]
    ours = _write_animations(doc, placements, weights, lengths, fps, names, target_count)
    if src is not None:
        ride_and_compose(doc, asset, ours, motions, fps=fps, riders=riders, deformed=deformed)
    return _save(report, doc, path, as_gltf, meshopt)


def _save(report: ExportReport, doc: GltfDocument, path: str | Path, as_gltf: bool,
          meshopt: bool) -> ExportReport:
    if meshopt:
        doc = compress(doc)
    if as_gltf:
        doc.save_gltf(path)
    else:
        doc.save_glb(path)
    report.bytes = Path(path).stat().st_size
    return report


def _write_bones(asset: Asset, doc: GltfDocument | None, placements: list[tuple],
                 frames: np.ndarray, motions: list[np.ndarray], riders: Sequence[Rider], *,
                 fps: float, names: Sequence[str] | None, root_matrix: np.ndarray | None,
                 bones: int | None) -> tuple[ExportReport, GltfDocument]:
    """The frames (T, N, 3) as a skin (gltf/bones.py) over the deformed parts' vertices,
    in ``doc`` (None: a new document) -> (report, the document)."""
    body = np.ones(len(asset.vertices), bool)
    for rider in riders:  # they ride on the body as nodes
        body[rider.rows] = False
    rows = np.flatnonzero(body)
    src = asset.document
    deformed = {node for node, mesh, _, _ in placements if mesh is not None}
    if src is not None:  # the deformed parts' own morph tracks: not played under ours
        baked = set(file_weight_tracks(src, deformed))
    welded = asset.welded()
    index, faces = _welded_rows(welded.index[rows], welded.faces)
    skin = decompose(asset.vertices[rows], frames[:, rows], faces, bones=bones, index=index)
    if doc is None:  # a new document: its root turns the file's frame to glTF's
        doc, built = build_document(asset, root_matrix)
        placements = [(nd, m, pr, np.eye(3)) for nd, m, pr in built]
        root = doc.gltf.nodes[0]
        doc.gltf.scenes[0].nodes = [0] + list(root.children)  # skinned nodes: scene roots
        root.children = []
        parent, to_asset = 0, [np.eye(4)] * len(asset.parts)
    else:
        parent, to_asset = None, [p.matrix for p in asset.parts]
    joints, moved = add_skin(doc, asset, placements, skin, rows, parent=parent,
                             to_asset=to_asset)
    retarget_weights(doc, moved)
    ours = joint_animations(doc, joints, skin, [len(m) for m in motions], fps, names)
    if src is not None:
        for node in baked:  # held at their defaults in ours, so that players playing the
            # clips that go together do not play the file's own tracks over the skin's
            hold_weights(doc, ours, moved.get(node, node),
                         default_weights(src.gltf.nodes[node], src.gltf.meshes[
                             src.gltf.nodes[node].mesh]), [len(m) for m in motions], fps)
        ride_and_compose(doc, asset, ours, motions, fps=fps, riders=riders,
                         deformed={moved.get(n, n) for n in deformed})
    report = ExportReport("bones", 0, skin.max_error, bones=skin.bones,
                          mean_error=skin.mean_error,
                          riding=[asset.parts[p].name for r in riders for p in r.parts])
    return report, doc


def _welded_rows(index: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Welded points of some vertices (``index``, into the welded surface) numbered from 0,
    and the welded ``faces`` among them, renumbered -> (index', faces')."""
    used, inverse = np.unique(index, return_inverse=True)
    number = np.full(int(max(faces.max(initial=0), used.max(initial=0))) + 1, -1, np.int64)
    number[used] = np.arange(len(used))
    inside = faces[(number[faces] >= 0).all(axis=1)]
    return inverse, number[inside]


def _frames(asset: Asset, motions: list[np.ndarray], riders: Sequence[Rider],
            overwrite: bool = False) -> np.ndarray:
    """All motions' frames (T, N, 3), checked, in one new C-ordered array (the motions may
    come as strided views: every later pass over them would pay for it), riders at rest;
    with ``overwrite``, one motion already so and no riders is that array itself."""
    n = len(asset.vertices)
    for m in motions:
        if m.ndim != 3 or m.shape[1:] != (n, 3) or len(m) == 0:
            raise UsageError(f"motion of shape {m.shape} does not match the asset's {n} vertices")
        if not np.isfinite(m).all():
            raise UsageError("motion contains NaN or infinite positions")
    if overwrite and len(motions) == 1 and not riders and motions[0].flags.c_contiguous:
        return motions[0]  # (float64 already: write_animated's np.asarray)
    frames = np.empty((sum(len(m) for m in motions), n, 3))
    np.concatenate(motions, out=frames)
    for rider in riders:  # they ride on the body as nodes; no morph targets of theirs
        frames[:, rider.rows] = asset.vertices[rider.rows]
    return frames


def _file_normals(asset: Asset, doc: GltfDocument | None, placements: list[tuple]
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each part's normals (V, 3) in its node's frame, and as unit vectors in the asset's."""
    welded, offs = asset.welded(), asset.offsets
    normals_local = []
    for part, (_, mesh, prim_i, _), o in zip(asset.parts, placements, offs[:-1]):
        prim = doc.gltf.meshes[mesh].primitives[prim_i] if mesh is not None else None
        normals_local.append(_local_normals(doc, prim, part,
                                            welded.index[o: o + len(part.vertices)]))
    normals_asset = []
    for nl, (_, _, _, to_local) in zip(normals_local, placements):
        world = nl @ to_local  # normals transform by the inverse transpose
        normals_asset.append(world / np.maximum(np.linalg.norm(world, axis=1, keepdims=True),
                                                1e-12))
    return normals_local, normals_asset


def _write_targets(doc: GltfDocument, asset: Asset, placements: list[tuple],
                   bases: np.ndarray, nfit: np.ndarray) -> dict[int, int]:
    """Append the morph targets to every part's primitive (its base data stays as it is);
    return {mesh: existing targets}."""
    existing: dict[int, int] = {}
    offs = asset.offsets
    for pi, (_, mesh_i, prim_i, to_local) in enumerate(placements):
        if mesh_i is None:  # a rider: moved by its node (gltf_parts.py)
            continue
        sl = slice(offs[pi], offs[pi + 1])
        mesh = doc.gltf.meshes[mesh_i]
        prim = mesh.primitives[prim_i]
        old_targets = prim.targets or []
        existing[mesh_i] = len(old_targets)
        with_normals = prim.attributes.NORMAL is not None
        pos = _to_frame(bases[:, sl], to_local.T)  # (K, V, 3) float32
        nrm = _to_frame(nfit[1:, sl], np.linalg.inv(to_local)) if with_normals else None
        new = []
        for k in range(len(bases)):
            tgt = pygltflib.Attributes(
                POSITION=doc.add_accessor(pos[k], target=ARRAY_BUFFER, minmax=True))
            if with_normals:
                tgt.NORMAL = doc.add_accessor(nrm[k], target=ARRAY_BUFFER)
            new.append(tgt)
        prim.targets = old_targets + new
        _name_targets(mesh, len(old_targets), len(bases))
    return existing


def _name_targets(mesh: pygltflib.Mesh, old: int, new: int) -> None:
    """Name the ``new`` targets after the ``old`` ones in ``extras.targetNames``, where Blender
    reads shape-key names (left alone when the file's own names do not match its targets,
    or its extras are not an object)."""
    if mesh.extras is None:
        mesh.extras = {}
    if not isinstance(mesh.extras, dict):
        return
    names = list(mesh.extras.get("targetNames", [f"target_{i}" for i in range(old)]))
    if len(names) == old:
        mesh.extras["targetNames"] = names + [f"neurok_{k:03d}" for k in range(new)]


def _to_frame(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x (..., 3) @ m (3, 3) as float32, without the product where m is the identity (every
    part of a new document: 2 x 47 products over 100k vertices)."""
    if np.array_equal(m, np.eye(3)):
        return x.astype(np.float32)
    return (x @ m).astype(np.float32)


def _pad_existing_weight_tracks(doc: GltfDocument, node_existing: dict[int, int], k: int,
                                n_original_animations: int) -> None:
    """Old ``weights`` tracks of deformed nodes must now cover the new targets too (as 0)."""
    done: set[int] = set()
    for anim in doc.gltf.animations[:n_original_animations]:
        for ch in anim.channels:
            node = ch.target.node
            if ch.target.path != "weights" or node not in node_existing:
                continue
            sampler = anim.samplers[ch.sampler]
            if id(sampler) in done:
                continue
            done.add(id(sampler))
            old = doc.accessor(sampler.output).reshape(-1, node_existing[node])
            padded = np.concatenate([old, np.zeros((len(old), k))], axis=1)
            sampler.output = doc.add_accessor(padded.reshape(-1).astype(np.float32))


def _write_animations(doc: GltfDocument, placements: list[tuple], weights: np.ndarray,
                      lengths: list[int], fps: float, names: Sequence[str] | None,
                      existing: dict[int, int]) -> list[pygltflib.Animation]:
    """One animation per motion, appended and returned; a ``weights`` channel for every
    deformed node. Its file's own targets keep their default weights, the rest the motion
    started from: the file's own morph animation of a part we move is not played under
    ours (a flag's baked wave, played under its cloth's motion, stretched its edges 13 %)."""
    nodes = {node: mesh for node, mesh, _, _ in placements if mesh is not None}
    node_existing = {node: existing[mesh] for node, mesh in nodes.items()}
    defaults = {}
    for node_i, mesh_i in nodes.items():
        mesh, node = doc.gltf.meshes[mesh_i], doc.gltf.nodes[node_i]
        e = node_existing[node_i]
        old = (default_weights(node, mesh) or [0.0] * e)[:e]
        defaults[node_i] = np.asarray(old, np.float64)
        full = [float(x) for x in np.concatenate([old, weights[0]])]
        mesh.weights = full
        if node.weights is not None:
            node.weights = full
    anims = doc.gltf.animations
    _pad_existing_weight_tracks(doc, node_existing, weights.shape[1], len(anims))
    start, added = 0, []
    for i, t in enumerate(lengths):
        w = weights[start: start + t]
        start += t
        times = doc.add_accessor((np.arange(t) / fps).astype(np.float32), minmax=True)
        samplers, channels, by_default = [], [], {}
        for node in nodes:
            key = tuple(defaults[node])
            if key not in by_default:
                out = np.concatenate([np.tile(defaults[node], (t, 1)), w], axis=1)
                samplers.append(pygltflib.AnimationSampler(
                    input=times, interpolation="LINEAR",
                    output=doc.add_accessor(out.reshape(-1).astype(np.float32))))
                by_default[key] = len(samplers) - 1
            channels.append(pygltflib.AnimationChannel(
                sampler=by_default[key],
                target=pygltflib.AnimationChannelTarget(node=node, path="weights")))
        anims.append(pygltflib.Animation(name=animation_name(names, i, len(lengths)),
                                         samplers=samplers, channels=channels))
        added.append(anims[-1])
    return added
