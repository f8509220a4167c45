"""Vertex normals of deforming surfaces (numpy; shared by export and rendering)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

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
