"""Vertex normals of deforming surfaces (numpy; shared by export and rendering)."""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import sparse

from ..limits import COMPILED_FROM

FRAMES_AT_ONCE = 4  # frames per sparse product (larger blocks fall out of cache)


def vertex_normals(vertices: np.ndarray, faces: np.ndarray, groups: np.ndarray | None = None
                   ) -> np.ndarray:
    """Area-weighted smooth vertex normals.

    Args:
        vertices: (..., N, 3) positions (leading dims are frames).
        faces: (F, 3) indices.
        groups: (N,) ids; vertices with equal ids share one normal (UV seams stay smooth).
    Returns:
        (..., N, 3) unit normals (zero-area neighbourhoods get +Y).
    """
    v = np.asarray(vertices, np.float64)
    n, F = v.shape[-2], len(faces)
    gid = np.arange(n) if groups is None else np.asarray(groups)
    ng = int(gid.max()) + 1
    # each face's normal summed at its corners' groups: one sparse (groups x faces) product
    # for a few frames at a time (built once; a frame at a time, building it cost as much
    # as using it)
    corners = sparse.csr_matrix((np.ones(3 * F), (gid[faces].reshape(-1),
                                                  np.repeat(np.arange(F), 3))), shape=(ng, F))
    flat = v.reshape(-1, n, 3)
    out = np.empty(flat.shape)
    f0, f1, f2 = faces[:, 0], faces[:, 1], faces[:, 2]
    for s in range(0, len(flat), FRAMES_AT_ONCE):
        # contiguous rows first: gathering corners from a strided view cost twice as much
        x = np.ascontiguousarray(flat[s:s + FRAMES_AT_ONCE].transpose(2, 0, 1))  # (3, c, N)
        p0 = x.take(f0, axis=2)
        a, b = x.take(f1, axis=2), x.take(f2, axis=2)
        a -= p0
        b -= p0
        fn = np.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                       a[0] * b[1] - a[1] * b[0]])  # (3, c, F): 2 x area
        c = fn.shape[1]
        acc = (corners @ fn.reshape(3 * c, F).T).T.reshape(3, c, ng)
        out[s:s + c] = acc[:, :, gid].transpose(1, 2, 0)
    out = out.reshape(v.shape)
    norm = np.linalg.norm(out, axis=-1, keepdims=True)
    safe = np.where(norm > 1e-300, out / np.maximum(norm, 1e-300), [0.0, 1.0, 0.0])
    return safe


def oriented_normals(vertices: np.ndarray, faces: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Smooth normals shared across ``groups`` (N,), each turned to its own faces' side.

    Double-sided meshes repeat every triangle with the opposite winding on copied vertices;
    summing both copies per position would cancel the normal. Each group's normal comes from
    one copy of each triangle, and each vertex flips it to agree with its own faces.
    """
    _, first = np.unique(np.sort(groups[faces], axis=1), axis=0, return_index=True)
    shared = vertex_normals(vertices, faces[np.sort(first)], groups)  # (N, 3)
    own = vertex_normals(vertices, faces)
    return np.where((np.sum(shared * own, axis=-1) < 0)[:, None], -shared, shared)


def rotate_between(v: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the smallest rotation taking unit ``a`` to unit ``b`` (all (..., 3),
    broadcast).

    Rodrigues with the unnormalised axis k = a x b, |k|^2 = (1 - c)(1 + c) for c = a.b:
    v c + k x v + k (k.v) / (1 + c); written per component, as whole-array products over
    the frames of a clip are memory-bound and np.cross's strided copies doubled the time.
    """
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    v0, v1, v2 = v[..., 0], v[..., 1], v[..., 2]
    k0, k1, k2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    c = a0 * b0 + a1 * b1 + a2 * b2
    f = (k0 * v0 + k1 * v1 + k2 * v2) / np.maximum(1.0 + c, 1e-12)
    out = np.stack([v0 * c + k1 * v2 - k2 * v1 + k0 * f, v1 * c + k2 * v0 - k0 * v2 + k1 * f,
                    v2 * c + k0 * v1 - k1 * v0 + k2 * f], axis=-1)
    return np.where((c < -0.999999)[..., None], -v, out)  # antiparallel: flipping suffices


def turned_normal_deltas(frames: np.ndarray, faces: np.ndarray, rep: np.ndarray,
                         index: np.ndarray, rest: np.ndarray, normals: np.ndarray
                         ) -> np.ndarray:
    """How far each normal turns as a welded surface deforms, frame by frame.

    Args:
        frames: (T, N, 3) positions of N vertices.
        faces: (F, 3) triangles over the W welded vertices.
        rep: (W,) a vertex (row of ``frames``) standing for each welded vertex.
        index: (N,) each vertex's welded vertex.
        rest: (N, 3) unit vertex normals of the surface at rest (``vertex_normals`` of the
            welded rest positions, gathered by ``index``).
        normals: (N, 3) unit normals to carry along.
    Returns:
        (T, N, 3) float32: ``rotate_between(normals, rest, now) - normals`` with ``now``
        each frame's ``vertex_normals`` of the welded surface, gathered by ``index``.

    The same arithmetic as those two functions, in one compiled pass per frame: in NumPy, a
    121-frame clip of 100k vertices made ~40 passes over (T, N, 3) arrays (~9 s). A clip
    below ``COMPILED_FROM`` vertex-frames takes those two functions, without numba's start.
    """
    if frames.shape[0] * frames.shape[1] < COMPILED_FROM:  # the penguin's clip: 0.2 s
        now = vertex_normals(np.asarray(frames, np.float64)[:, rep], faces)[:, index]
        return (rotate_between(normals, rest, now) - normals).astype(np.float32)
    frames = np.ascontiguousarray(frames, np.float64)
    out = np.empty(frames.shape, np.float32)
    _deltas_kernel()(frames, np.ascontiguousarray(faces, np.int64),
                     np.ascontiguousarray(rep, np.int64), np.ascontiguousarray(index, np.int64),
                     np.ascontiguousarray(rest, np.float64),
                     np.ascontiguousarray(normals, np.float64), out)
    return out


def _deltas(frames, faces, rep, index, rest, normals, out):  # pragma: no cover - compiled
    acc = np.empty((len(rep), 3))
    for t in range(frames.shape[0]):
        x = frames[t]
        acc[:] = 0.0
        for f in range(faces.shape[0]):  # face normals (2 x area) summed in face order, as
            i, j, k = rep[faces[f, 0]], rep[faces[f, 1]], rep[faces[f, 2]]  # the sparse sum
            a0, a1, a2 = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
            b0, b1, b2 = x[k, 0] - x[i, 0], x[k, 1] - x[i, 1], x[k, 2] - x[i, 2]
            n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
            for c in range(3):
                w = faces[f, c]
                acc[w, 0] += n0
                acc[w, 1] += n1
                acc[w, 2] += n2
        for w in range(len(rep)):
            norm = np.sqrt(acc[w, 0] * acc[w, 0] + acc[w, 1] * acc[w, 1]
                           + acc[w, 2] * acc[w, 2])
            if norm > 1e-300:
                acc[w, 0] /= norm
                acc[w, 1] /= norm
                acc[w, 2] /= norm
            else:
                acc[w, 0], acc[w, 1], acc[w, 2] = 0.0, 1.0, 0.0
        for v in range(len(index)):  # rotate_between(normals, rest, now), per component
            a0, a1, a2 = rest[v, 0], rest[v, 1], rest[v, 2]
            w = index[v]
            b0, b1, b2 = acc[w, 0], acc[w, 1], acc[w, 2]
            v0, v1, v2 = normals[v, 0], normals[v, 1], normals[v, 2]
            c = a0 * b0 + a1 * b1 + a2 * b2
            if c < -0.999999:  # antiparallel: flipping suffices
                r0, r1, r2 = -v0, -v1, -v2
            else:
                k0, k1, k2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
                f = (k0 * v0 + k1 * v1 + k2 * v2) / max(1.0 + c, 1e-12)
                r0 = v0 * c + k1 * v2 - k2 * v1 + k0 * f
                r1 = v1 * c + k2 * v0 - k0 * v2 + k1 * f
                r2 = v2 * c + k0 * v1 - k1 * v0 + k2 * f
            out[t, v, 0] = r0 - v0
            out[t, v, 1] = r1 - v1
            out[t, v, 2] = r2 - v2


@cache
def _deltas_kernel():
    """:func:`_deltas` compiled (numba, cached on disk; imported here, so that reading and
    rendering do not pay numba's start-up)."""
    from numba import njit

    return njit(cache=True, nogil=True)(_deltas)
