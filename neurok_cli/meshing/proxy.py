"""A coarse stand-in for dense meshes: simulate few vertices, carry the motion to all of them.

The engine's cost grows with the vertices it simulates (a 25k-vertex cloth needs minutes and
GBs), so a dense surface is clustered into a proxy of about ``target`` vertices, simulated,
and each original vertex follows its nearest proxy vertices, each moving it as it moves and
turns: a vertex's offset from them (the relief finer than the proxy) turns with the proxy
around it, so a sheet that hangs down carries its relief along with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree


@dataclass
class Proxy:
    """A clustered surface and how the full surface follows it."""

    vertices: np.ndarray  # (M, 3) proxy vertices
    faces: np.ndarray  # (F', 3)
    neighbours: np.ndarray  # (N, K) proxy vertices each full vertex follows
    weights: np.ndarray  # (N, K) their weights, rows summing to 1
    ring: np.ndarray  # (M, R) proxy vertices whose motion gives each proxy vertex's turn
    ring_weights: np.ndarray  # (M, R), rows summing to 1

    def turns(self, proxy_frames: np.ndarray) -> np.ndarray:
        """(T, M, 3) proxy positions -> (T, M, 3, 3): each proxy vertex's rotation, the best
        fit of how its ring turned (weighted shape matching; a flat ring's normal follows
        from its plane)."""
        w = self.ring_weights[..., None]  # (M, R, 1)
        rest = self.vertices[self.ring]
        rest = rest - (w * rest).sum(axis=1, keepdims=True)
        out = np.empty((len(proxy_frames), len(self.vertices), 3, 3))
        for t, x in enumerate(proxy_frames):
            now = x[self.ring]
            now = now - (w * now).sum(axis=1, keepdims=True)
            u, _, vt = np.linalg.svd(np.einsum("mr,mri,mrj->mij", self.ring_weights, now, rest))
            u[:, :, 2] *= np.sign(np.linalg.det(u @ vt))[:, None]
            out[t] = u @ vt
        return out

    def carry(self, proxy_frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
        """(T, M, 3) proxy positions -> (T, N, 3) positions of the full surface ``rest``: each
        vertex where its proxy vertices take it, its offset from each turned as that one
        turned (linear blend skinning on the proxy: x' = sum_k w_k (p'_k + R_k (x - p_k)))."""
        turns = self.turns(proxy_frames)  # (T, M, 3, 3)
        shift = proxy_frames - np.einsum("tmij,mj->tmi", turns, self.vertices)
        maps = np.concatenate([turns, shift[..., None]], axis=3)  # (T, M, 3, 4)
        n, k = self.neighbours.shape
        W = sp.csr_matrix((self.weights.reshape(-1), self.neighbours.reshape(-1),
                           np.arange(0, n * k + 1, k)), shape=(n, len(self.vertices)))
        t = len(proxy_frames)
        blend = W @ maps.transpose(1, 0, 2, 3).reshape(len(self.vertices), -1)  # (N, T 12)
        blend = blend.reshape(n, t, 3, 4)
        return (np.einsum("ntij,nj->tni", blend[..., :3], rest)
                + blend[..., 3].transpose(1, 0, 2))


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


def make_proxy(vertices: np.ndarray, faces: np.ndarray, target: int, *, k: int = 12,
               ring: int = 8) -> Proxy:
    """Cluster the surface (N, 3)/(F, 3) into about ``target`` vertices (vertex clustering on a
    grid whose cell is sized from the surface area), bind every vertex to its ``k`` nearest
    proxy vertices and every proxy vertex to the ``ring`` nearest (itself among them) whose
    motion tells how it turns."""
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
    ring_dist, ring_idx = cKDTree(pv).query(pv, k=min(ring, len(pv)))
    ring_w = np.exp(-((ring_dist.reshape(len(pv), -1) / cell) ** 2))
    ring_w /= ring_w.sum(axis=1, keepdims=True)
    return Proxy(vertices=pv, faces=pf, neighbours=idx, weights=w / w.sum(axis=1, keepdims=True),
                 ring=ring_idx.reshape(len(pv), -1), ring_weights=ring_w)
