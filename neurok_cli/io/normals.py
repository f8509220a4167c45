"""Vertex normals of deforming surfaces (numpy; shared by export and rendering)."""

from __future__ import annotations

import numpy as np


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
    n = v.shape[-2]
    gid = np.arange(n) if groups is None else np.asarray(groups)
    ng = int(gid.max()) + 1
    fn = np.cross(v[..., faces[:, 1], :] - v[..., faces[:, 0], :],
                  v[..., faces[:, 2], :] - v[..., faces[:, 0], :])  # (..., F, 3), 2 x area
    lead = v.shape[:-2]
    flat = fn.reshape(-1, len(faces), 3)
    acc = np.zeros((flat.shape[0], ng, 3))
    corner_groups = gid[faces].reshape(-1)  # (3F,)
    for b in range(flat.shape[0]):
        w = np.repeat(flat[b], 3, axis=0)  # (3F, 3): each face normal to its three corners
        for c in range(3):
            acc[b, :, c] = np.bincount(corner_groups, weights=w[:, c], minlength=ng)
    out = acc[:, gid].reshape(*lead, n, 3)
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
    """Rotate ``v`` by the smallest rotation taking unit ``a`` to unit ``b`` (all (..., 3))."""
    k = np.cross(a, b)
    s = np.linalg.norm(k, axis=-1, keepdims=True)
    c = np.sum(a * b, axis=-1, keepdims=True)
    k = np.where(s > 1e-12, k / np.maximum(s, 1e-12), 0.0)
    out = v * c + np.cross(k, v) * s + k * np.sum(k * v, axis=-1, keepdims=True) * (1 - c)
    return np.where(c < -0.999999, -v, out)  # antiparallel: any half-turn; flipping suffices
