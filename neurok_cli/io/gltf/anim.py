"""Evaluating glTF animations: samplers (STEP, LINEAR, CUBICSPLINE), node TRS, morph weights
and skins."""

from __future__ import annotations

import numpy as np
import pygltflib

from ...errors import InputError, UsageError
from ..asset import Part
from ..skinning import skinned
from .bones import inverse_binds, primitive_skin, skin_matrices
from .doc import GltfDocument
from .scene import default_weights, world_matrices


def _slerp(a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
    if np.dot(a, b) < 0:
        b = -b
    d = float(np.clip(np.dot(a, b), -1.0, 1.0))
    if d > 0.9995:
        q = a + u * (b - a)
    else:
        th = np.arccos(d)
        q = (np.sin((1 - u) * th) * a + np.sin(u * th) * b) / np.sin(th)
    return q / np.linalg.norm(q)


class Sampler:
    """One animation sampler: keyframe times and values, evaluated at any time (clamped)."""

    def __init__(self, doc: GltfDocument, sampler: pygltflib.AnimationSampler, path: str):
        self.times = doc.accessor(sampler.input).astype(np.float64).reshape(-1)
        self.mode = sampler.interpolation or "LINEAR"
        values = doc.accessor(sampler.output).astype(np.float64)
        k = len(self.times)
        per_key = 3 if self.mode == "CUBICSPLINE" else 1
        if k == 0 or len(values) % (k * per_key):
            raise InputError(f"{doc.path}: animation sampler output count does not match its "
                             "keyframes")
        if not (np.isfinite(self.times).all() and np.isfinite(values).all()):
            raise InputError(f"{doc.path}: an animation's keyframes hold values that are not "
                             "finite numbers (NaN or infinity)")
        self.values = values.reshape(k, per_key, -1)  # (K, 1|3, components)
        self.rotation = path == "rotation"

    def __call__(self, t: float) -> np.ndarray:
        ts, v = self.times, self.values
        mid = 1 if self.mode == "CUBICSPLINE" else 0
        if t <= ts[0] or len(ts) == 1:
            return v[0, mid]
        if t >= ts[-1]:
            return v[-1, mid]
        i = int(np.searchsorted(ts, t, side="right")) - 1
        dt = ts[i + 1] - ts[i]
        u = (t - ts[i]) / dt if dt > 0 else 0.0
        if self.mode == "STEP":
            return v[i, 0]
        if self.mode == "CUBICSPLINE":
            p0, m0 = v[i, 1], v[i, 2] * dt
            p1, m1 = v[i + 1, 1], v[i + 1, 0] * dt
            u2, u3 = u * u, u * u * u
            out = ((2 * u3 - 3 * u2 + 1) * p0 + (u3 - 2 * u2 + u) * m0
                   + (-2 * u3 + 3 * u2) * p1 + (u3 - u2) * m1)
            return out / np.linalg.norm(out) if self.rotation else out
        if self.rotation:
            return _slerp(v[i, 0], v[i + 1, 0], u)
        return (1 - u) * v[i, 0] + u * v[i + 1, 0]


def animation_channels(doc: GltfDocument, which: list[int] | None = None
                       ) -> list[tuple[int, str, Sampler]]:
    """(node, path, sampler) for every channel of the chosen animations (default: all)."""
    anims = doc.gltf.animations
    out = []
    for ai in which if which is not None else range(len(anims)):
        anim = anims[ai]
        for ch in anim.channels:
            tgt = ch.target
            if tgt.node is None or tgt.path not in ("translation", "rotation", "scale",
                                                    "weights"):
                continue
            out.append((tgt.node, tgt.path, Sampler(doc, anim.samplers[ch.sampler], tgt.path)))
    return out


def _names(doc: GltfDocument) -> list[str]:
    return [a.name or f"#{i}" for i, a in enumerate(doc.gltf.animations)]


def animation_names(doc: GltfDocument, which: list[int]) -> str:
    """The animations ``which`` by name (``#i`` for an unnamed one), quoted and joined."""
    names = _names(doc)
    return ", ".join(f"'{names[i]}'" for i in which)


def animation_index(doc: GltfDocument, name: str) -> int:
    """An animation of the file by its name or its index (``"0"``)."""
    names = _names(doc)
    if name in names:
        return names.index(name)
    if name.isdigit() and int(name) < len(names):
        return int(name)
    held = ", ".join(names) if names else "none"
    raise UsageError(f"{doc.path}: no animation {name!r}; it has {held}")


def first_of_ours(doc: GltfDocument) -> int | None:
    """The first animation ``neurok`` wrote into the file ("neurok", "neurok_..."), or None.

    An animated glTF input keeps its own animations ahead of ours; after ``neurok animate``
    the motion to look at is ours."""
    for i, anim in enumerate(doc.gltf.animations):
        if is_ours(anim):
            return i
    return None


def is_ours(anim: pygltflib.Animation) -> bool:
    """Whether ``neurok`` wrote this animation (named "neurok" or "neurok_...")."""
    name = str(anim.name or "")
    return name == "neurok" or name.startswith("neurok_")


def animations_together(doc: GltfDocument, first: int | None = None, *,
                        theirs: bool = False) -> tuple[list[int], list[int]]:
    """The animations to play at once: ``first`` (default the file's first), then each other
    one, in file order, that drives none of the channels (node and property) of those
    already chosen; and the ones left out, which are alternatives to the chosen (the motions
    of ``neurok animate --samples``, say). A milk truck's wheel animation and a deformation
    added to it play together. ``theirs``: among the file's own animations only, leaving out
    those ``neurok`` wrote (see :func:`is_ours`)."""
    anims = doc.gltf.animations
    skip = {i for i, a in enumerate(anims) if theirs and is_ours(a)}
    if len(skip) == len(anims):
        return [], []

    def driven(i: int) -> set[tuple]:
        return {(ch.target.node, ch.target.path) for ch in anims[i].channels}

    start = first if first is not None else min(set(range(len(anims))) - skip)
    order = [start] + [i for i in range(len(anims)) if i != start and i not in skip]
    chosen, left, busy = [], [], set()
    for i in order:
        mine = driven(i)
        if mine & busy:
            left.append(i)
        else:
            chosen.append(i)
            busy |= mine
    return chosen, left


def key_times(doc: GltfDocument, which: list[int] | None = None) -> np.ndarray:
    """Sorted union of the keyframe times of the chosen animations (seconds)."""
    chans = animation_channels(doc, which)
    if not chans:
        return np.zeros(0)
    return np.unique(np.concatenate([s.times for _, _, s in chans]))


def _default_weights(doc: GltfDocument, node: int) -> np.ndarray | None:
    n = doc.gltf.nodes[node]
    mesh = doc.gltf.meshes[n.mesh]
    ntargets = len(mesh.primitives[0].targets or [])
    if not ntargets:
        return None
    return np.asarray(default_weights(n, mesh) or [0.0] * ntargets, np.float64)


def sample_positions(doc: GltfDocument, parts: list[Part], times: np.ndarray,
                     which: list[int] | None = None) -> list[np.ndarray]:
    """World positions of every part at each time: a list of (T, n_p, 3) float64 arrays."""
    chans = animation_channels(doc, which)
    targets = {}
    for p in parts:
        prim = doc.gltf.meshes[p.mesh].primitives[p.primitive]
        deltas = [doc.accessor(t.POSITION).astype(np.float64) if t.POSITION is not None
                  else np.zeros((len(p.vertices), 3)) for t in prim.targets or []]
        if deltas and not all(np.isfinite(d).all() for d in deltas):
            raise InputError(f"{doc.path}: a morph target holds positions that are not finite "
                             "numbers (NaN or infinity)")
        targets[id(p)] = np.stack(deltas) if deltas else None  # (K, n, 3)
    base = {id(p): doc.accessor(doc.gltf.meshes[p.mesh].primitives[p.primitive]
                                .attributes.POSITION).astype(np.float64) for p in parts}
    skins = {id(p): primitive_skin(doc, doc.gltf.meshes[p.mesh].primitives[p.primitive])
             for p in parts if doc.gltf.nodes[p.node].skin is not None}
    binds = {s: inverse_binds(doc, s) for s in {doc.gltf.nodes[p.node].skin for p in parts}
             if s is not None}  # read once, not every frame
    out = [np.empty((len(times), len(p.vertices), 3)) for p in parts]
    for ti, t in enumerate(times):
        trs: dict[int, dict] = {}
        weights: dict[int, np.ndarray] = {}
        for node, path, sampler in chans:
            if path == "weights":
                weights[node] = sampler(float(t))
            else:
                trs.setdefault(node, {})[path] = sampler(float(t))
        world = world_matrices(doc, trs)
        for pi, p in enumerate(parts):
            local = base[id(p)]
            tg = targets[id(p)]
            if tg is not None:
                w = weights.get(p.node)
                if w is None:
                    w = _default_weights(doc, p.node)
                local = local + np.tensordot(w[: len(tg)], tg, axes=1)
            if skins.get(id(p)) is not None:  # the joints place it; its node's own
                joints, w = skins[id(p)]  # transform is ignored, as players do
                si = doc.gltf.nodes[p.node].skin
                m = skin_matrices(doc, si, world, binds[si])
                out[pi][ti] = skinned(local, joints, w, m[None])[0]
                continue
            m = world[p.node]
            out[pi][ti] = local @ m[:3, :3].T + m[:3, 3]
    return out
