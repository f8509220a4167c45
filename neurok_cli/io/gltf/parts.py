"""A glTF's own node animation and ours in one clip: the parts the file moves ride on the body.

Morph targets live in their mesh's local frame, so a deformation baked into a part that the
file spins (a milk truck's wheel) turns with it: a dropped truck played with its own wheel
animation lost its wheels, their centres 0.44 of its diagonal from the body. So a *rider*, any
part below a node that the file's animations translate, rotate or scale, takes no morph
targets. A node inserted above its topmost animated node carries it rigidly with the body's
surface nearest to it (a weighted rigid fit of how that surface moved), and the file's
animation plays below that node as it did. The *body*, the parts the file leaves in place,
deforms by morph targets. A file that moves every part has no body to ride on: its parts
deform in their own frames, carried by the file's animation.

The first animation written plays our motion together with the file's own channels (those of
the animations that play at once, gltf_anim.animations_together), each repeated to last as
long as ours when it is shorter, as a viewer loops it; the file's animations follow, as they
were and by their names. Blender plays the first (its active action) and most viewers the
first clip, so both show the deformation with the file's motion.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pygltflib
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from ..asset import Asset
from .anim import Sampler, animations_together, is_ours
from .codec import Node
from .doc import TYPE_SIZES, GltfDocument
from .scene import scene_roots, world_matrices

NODE_PATHS = ("translation", "rotation", "scale")
RIDE_PREFIX = "neurok_ride"  # name of an inserted node: "neurok_ride_<part>"


@dataclass
class Rider:
    """Parts below one node that the file animates; they move rigidly with the body."""

    top: int  # the topmost node on the parts' path from the scene root that the file animates
    parts: list[int]  # indices into asset.parts
    rows: np.ndarray  # (n,) their file vertices (indices into asset.vertices)
    anchor: np.ndarray  # (k,) body vertices they rest on (indices into asset.vertices)
    weights: np.ndarray  # (k,) how much each anchor vertex counts, summing to 1
    parent_world: np.ndarray  # (4, 4) world matrix of ``top``'s parent at rest (identity: root)
    node: int | None = None  # the inserted node, once written


def animated_nodes(doc: GltfDocument) -> set[int]:
    """Nodes whose translation, rotation or scale any of the file's own animations drives
    (not one ``neurok`` wrote into it: see gltf_anim.is_ours)."""
    return {ch.target.node for a in doc.gltf.animations if not is_ours(a)
            for ch in a.channels if ch.target.path in NODE_PATHS and ch.target.node is not None}


def _paths(doc: GltfDocument) -> dict[int, list[int]]:
    """Every node of the default scene and its path from a scene root (root first)."""
    nodes = doc.gltf.nodes
    out: dict[int, list[int]] = {}
    stack = [[r] for r in scene_roots(doc)]
    while stack:
        path = stack.pop()
        out[path[-1]] = path
        stack.extend(path + [c] for c in nodes[path[-1]].children or [] if c not in out)
    return out


def find_riders(asset: Asset) -> list[Rider]:
    """The riders of a glTF asset (none for other assets, or when the file moves every part).

    Each rests on the body vertices nearest to its own: Gaussian weights of their distance to
    the rider's surface, over a scale of half the rider's radius (at least the distance of the
    16th nearest, so a part standing off the body still has a patch to ride on).
    """
    doc = asset.document
    if doc is None:
        return []
    moved = animated_nodes(doc)
    if not moved:
        return []
    paths, offs = _paths(doc), asset.offsets
    groups: dict[int, list[int]] = {}
    for pi, part in enumerate(asset.parts):
        top = next((n for n in paths.get(part.node, []) if n in moved), None)
        if top is not None:
            groups.setdefault(top, []).append(pi)
    body = [pi for pi in range(len(asset.parts)) if not any(pi in g for g in groups.values())]
    if not groups or not body:
        return []
    verts, welded = asset.vertices, asset.welded()
    body_rows = np.concatenate([np.arange(offs[p], offs[p + 1]) for p in body])
    _, first = np.unique(welded.index[body_rows], return_index=True)
    body_rows = body_rows[first]  # one file vertex per welded position: seams count once
    worlds = world_matrices(doc)
    riders = []
    for top, parts in groups.items():
        rows = np.concatenate([np.arange(offs[p], offs[p + 1]) for p in parts])
        pts = verts[rows]
        radius = float(np.linalg.norm(pts - pts.mean(axis=0), axis=1).max()) or 1.0
        dist, _ = cKDTree(pts).query(verts[body_rows])
        h = max(0.5 * radius, float(np.sort(dist)[min(15, len(dist) - 1)]), 1e-12)
        near = dist < 3.0 * h
        w = np.exp(-((dist[near] / h) ** 2))
        parent = paths[top][-2] if len(paths[top]) > 1 else None
        riders.append(Rider(top=top, parts=parts, rows=rows, anchor=body_rows[near],
                            weights=w / w.sum(),
                            parent_world=worlds[parent] if parent is not None else np.eye(4)))
    return riders


def rigid_fits(rest: np.ndarray, moved: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares rigid motions (rotation and translation) from rest to each frame.

    Args:
        rest: (k, 3) positions. moved: (T, k, 3) the same points over time. weights: (k,).
    Returns:
        (T, 4, 4) matrices M with moved[t] ~ M[t] applied to rest.
    """
    w = weights / weights.sum()
    c0 = w @ rest  # (3,)
    c = np.einsum("k,tkd->td", w, moved)  # (T, 3)
    h = np.einsum("k,ki,tkj->tij", w, rest - c0, moved - c[:, None])  # (T, 3, 3)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(u @ vt))  # no reflections
    u[:, :, 2] *= d[:, None]
    rot = np.transpose(u @ vt, (0, 2, 1))  # V diag(1, 1, d) U^T
    out = np.tile(np.eye(4), (len(moved), 1, 1))
    out[:, :3, :3] = rot
    out[:, :3, 3] = c - rot @ c0
    return out


def rider_motion(rider: Rider, rest: np.ndarray, frames: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Translation (T, 3) and rotation quaternions (T, 4; x, y, z, w, sign-continuous) of the
    node inserted above ``rider.top``, for ``frames`` (T, N, 3) of all file vertices.

    The body's rigid motion G (world frame) reaches the node through its parent P: the node
    holds P^-1 G P, so the world matrix of ``top`` becomes G P L(t) with L the file's own.
    """
    g = rigid_fits(rest[rider.anchor], frames[:, rider.anchor], rider.weights)
    p = rider.parent_world
    local = np.linalg.inv(p) @ g @ p  # (T, 4, 4)
    quat = Rotation.from_matrix(local[:, :3, :3]).as_quat()  # nearest rotation; exact when
    # the parent's frame is a similarity (no non-uniform scale)
    flip = np.cumprod(np.where(np.sum(quat[1:] * quat[:-1], axis=1) < 0, -1.0, 1.0))
    quat[1:] *= flip[:, None]
    return local[:, :3, 3], quat


def insert_rider_nodes(doc: GltfDocument, riders: list[Rider], names: list[str]) -> None:
    """A node above each rider's top node, in its place in the hierarchy (indices of the
    file's nodes unchanged, so its animations still reach them)."""
    nodes = doc.gltf.nodes
    for rider, name in zip(riders, names):
        nodes.append(Node(name=f"{RIDE_PREFIX}_{name}", children=[rider.top]))
        rider.node = len(nodes) - 1
        holders = [n.children for n in nodes[:-1]] + [s.nodes for s in doc.gltf.scenes]
        for held in holders:
            if held:
                held[:] = [rider.node if c == rider.top else c for c in held]


def file_weight_tracks(src: GltfDocument, nodes: set[int]
                       ) -> dict[int, Callable[[np.ndarray], np.ndarray]]:
    """The file's own ``weights`` tracks of the ``nodes`` we deform, from the animations that
    play together: node -> f(times (T,)) -> (T, its targets), looped like a viewer loops.
    A motion ``neurok`` wrote earlier (an output animated again, or the sequence that
    ``fit --then-animate`` continues) is a result, not part of the asset: it is not added."""
    out = {}
    chosen, _ = animations_together(src, theirs=True)
    for ai in chosen:
        anim = src.gltf.animations[ai]
        period = _duration(src, anim)
        for ch in anim.channels:
            tgt = ch.target
            if tgt.path == "weights" and tgt.node in nodes:
                s = Sampler(src, anim.samplers[ch.sampler], "weights")
                out[tgt.node] = (lambda ts, s=s, d=period:
                                 np.stack([s(float(t % d if d > 0 else t)) for t in ts]))
    return out


def _duration(doc: GltfDocument, anim: pygltflib.Animation) -> float:
    """An animation's length: its last key time (seconds)."""
    return max((float(doc.accessor(s.input).max(initial=0.0)) for s in anim.samplers),
               default=0.0)


def _looped(doc: GltfDocument, sampler: pygltflib.AnimationSampler, period: float,
            until: float, cache: dict) -> pygltflib.AnimationSampler:
    """A copy of ``sampler`` whose keys repeat every ``period`` seconds up to ``until``."""
    if not 0 < period < until:
        return copy.deepcopy(sampler)
    key = (sampler.input, sampler.output, period, until)
    if key not in cache:
        times = doc.accessor(sampler.input).astype(np.float64).reshape(-1)
        values = doc.accessor(sampler.output)
        values = values.reshape(len(times), -1)  # one row per key (tangents, targets inside)
        reps = int(np.ceil(until / period))
        all_t = (times[None] + period * np.arange(reps)[:, None]).reshape(-1)
        all_v = np.tile(values, (reps, 1))
        keep = np.ones(len(all_t), bool)  # a key at 0 repeats the one at the period: once
        keep[1:] = np.diff(all_t) > 1e-6 * max(period, 1.0)
        t32 = all_t[keep].astype(np.float32)
        keep_t = np.concatenate([[True], np.diff(t32) > 0])  # strictly increasing in float32
        out_v = all_v[keep][keep_t]
        ncomp = TYPE_SIZES[doc.gltf.accessors[sampler.output].type]
        cache[key] = (doc.add_accessor(t32[keep_t], minmax=True),
                      doc.add_accessor(out_v.reshape(-1, ncomp) if ncomp > 1
                                       else out_v.reshape(-1)))
    new = copy.deepcopy(sampler)
    new.input, new.output = cache[key]
    return new


def compose(doc: GltfDocument, src: GltfDocument, ours: list[pygltflib.Animation],
            lengths: list[int], *,
            fps: float, riders: list[Rider], tracks: list[list[tuple[np.ndarray, np.ndarray]]],
            deformed: set[int]) -> None:
    """Complete each of ``ours`` (the animations just appended to ``doc``, ``lengths`` frames
    each at ``fps``) with the riders' node tracks and the file's own channels; put ours first.

    Args:
        src: the file as read (its animations are ``doc``'s first ones).
        tracks: per animation, per rider, (translations (T, 3), quaternions (T, 4)).
        deformed: nodes whose morph weights ours drive (ours hold those nodes' own targets
            at their defaults: the file's morph animation is not played under ours).
    """
    chosen, _ = animations_together(src, theirs=True)
    n_file = len(src.gltf.animations)
    cache: dict = {}
    for anim, t, per_rider in zip(ours, lengths, tracks):
        until = (t - 1) / fps
        if riders:
            times = anim.samplers[0].input if anim.samplers else doc.add_accessor(
                (np.arange(t) / fps).astype(np.float32), minmax=True)
        for rider, (trans, quat) in zip(riders, per_rider):
            for path, values in (("translation", trans), ("rotation", quat)):
                anim.samplers.append(pygltflib.AnimationSampler(
                    input=times, interpolation="LINEAR",
                    output=doc.add_accessor(values.astype(np.float32))))
                anim.channels.append(pygltflib.AnimationChannel(
                    sampler=len(anim.samplers) - 1,
                    target=pygltflib.AnimationChannelTarget(node=rider.node, path=path)))
        for ai in chosen:
            theirs = doc.gltf.animations[ai]
            period = _duration(doc, theirs)
            for ch in theirs.channels:
                if ch.target.path == "weights" and ch.target.node in deformed:
                    continue
                anim.samplers.append(_looped(doc, theirs.samplers[ch.sampler], period, until,
                                             cache))
                new = copy.deepcopy(ch)
                new.sampler = len(anim.samplers) - 1
                anim.channels.append(new)
    anims = doc.gltf.animations
    doc.gltf.animations = anims[n_file:] + anims[:n_file]


def ride_and_compose(doc: GltfDocument, asset: Asset, ours: list[pygltflib.Animation],
                     motions: list[np.ndarray], *, fps: float, riders: list[Rider],
                     deformed: set[int]) -> None:
    """Write the riders' nodes and tracks, then make ``ours`` (one animation per motion,
    (T, N, 3) file-frame positions of every file vertex) play the file's own channels too,
    first in the file. The riders' nodes stand, without animation, where the first frame
    puts them, as the body's default morph weights do."""
    insert_rider_nodes(doc, riders, [asset.parts[r.parts[0]].name for r in riders])
    tracks = [[rider_motion(r, asset.vertices, m) for r in riders] for m in motions]
    for rider, (trans, quat) in zip(riders, tracks[0]):
        node = doc.gltf.nodes[rider.node]
        node.translation = [float(x) for x in trans[0]]
        node.rotation = [float(x) for x in quat[0] / np.linalg.norm(quat[0])]
    compose(doc, asset.document, ours, [len(m) for m in motions], fps=fps, riders=riders,
            tracks=tracks, deformed=deformed)
