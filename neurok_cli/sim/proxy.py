"""A coarse stand-in for dense meshes: simulate few vertices, carry the motion to all of them.

The engine's cost grows with the vertices it simulates (a 25k-vertex cloth needs minutes and
GBs), so a dense surface is clustered into a proxy of about ``target`` vertices, simulated,
and each original vertex follows the displacements of its nearest proxy vertices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree


@dataclass
class Proxy:
    """A clustered surface and how the full surface follows it."""

    vertices: np.ndarray  # (M, 3) proxy vertices
    faces: np.ndarray  # (F', 3)
    neighbours: np.ndarray  # (N, K) proxy vertices each full vertex follows
    weights: np.ndarray  # (N, K) their weights, rows summing to 1

    def carry(self, proxy_frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
        """(T, M, 3) proxy positions -> (T, N, 3) positions of the full surface ``rest``."""
        disp = proxy_frames - self.vertices[None]  # (T, M, 3)
        return rest[None] + np.einsum("nk,tnkc->tnc", self.weights, disp[:, self.neighbours])


def _cluster(vertices: np.ndarray, faces: np.ndarray, cell: float
             ) -> tuple[np.ndarray, np.ndarray]:
    keys = np.floor((vertices - vertices.min(axis=0)) / cell).astype(np.int64)
    _, label = np.unique(keys, axis=0, return_inverse=True)
    label = label.reshape(-1)
    count = np.bincount(label)
    centre = np.stack([np.bincount(label, weights=vertices[:, a]) / count for a in range(3)], 1)
    f = label[faces]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
    _, first = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
    f = f[np.sort(first)]
    used = np.unique(f)
    remap = np.full(len(centre), -1)
    remap[used] = np.arange(len(used))
    return centre[used], remap[f]


def make_proxy(vertices: np.ndarray, faces: np.ndarray, target: int, *, k: int = 12) -> Proxy:
    """Cluster the surface (N, 3)/(F, 3) into about ``target`` vertices (vertex clustering on a
    grid whose cell is sized from the surface area) and bind every vertex to its ``k`` nearest
    proxy vertices."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    area = float(np.linalg.norm(np.cross(b - a, c - a), axis=1).sum() / 2)
    cell = np.sqrt(2.0 * area / target)  # ~2 triangles per vertex on a surface
    for _ in range(8):  # adjust the cell until the proxy is near its target size
        pv, pf = _cluster(vertices, faces, cell)
        if len(pv) <= 1.25 * target:
            break
        cell *= np.sqrt(len(pv) / target)
    dist, idx = cKDTree(pv).query(vertices, k=min(k, len(pv)))
    idx, dist = idx.reshape(len(vertices), -1), dist.reshape(len(vertices), -1)
    # Gaussian weights over a neighbourhood of ~2 cells: smooth, so no steps where the
    # nearest proxy vertex changes
    w = np.exp(-((dist / cell) ** 2))
    w[:, 0] = np.maximum(w[:, 0], 1e-12)
    return Proxy(vertices=pv, faces=pf, neighbours=idx, weights=w / w.sum(axis=1, keepdims=True))
