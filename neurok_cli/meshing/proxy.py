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
    triangle: np.ndarray | None = None  # (N,) on a decimated proxy: the proxy triangle each
    # full vertex lies on (``neighbours`` its corners, ``weights`` its barycentric
    # coordinates); None: the nearest proxy vertices, each turning with its ring

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
        if self.triangle is not None:
            return self._carry_on_surface(proxy_frames, rest)
        return self._carry_turning(proxy_frames, rest)

    def _carry_on_surface(self, proxy_frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
        """(T, M, 3) -> (T, N, 3): each vertex at its barycentric point of its proxy
        triangle, its offset from there (the relief finer than the proxy) turned as the
        triangle's corners turned (each corner's turn: its triangles', by area), blended by
        the same coordinates, so the relief turns smoothly across the proxy's edges."""
        corners = self.neighbours  # (N, 3): the triangle's
        offset = rest - np.einsum("nk,nkj->nj", self.weights, self.vertices[corners])
        rest_frames = _frames_of(self.vertices, self.faces)
        area = 0.5 * np.linalg.norm(np.cross(
            self.vertices[self.faces[:, 1]] - self.vertices[self.faces[:, 0]],
            self.vertices[self.faces[:, 2]] - self.vertices[self.faces[:, 0]]), axis=1)
        out = np.empty((len(proxy_frames), len(rest), 3))
        for t, x in enumerate(proxy_frames):
            turn = np.einsum("fji,fjk->fik", _frames_of(x, self.faces), rest_frames)
            at_vertex = np.zeros((len(x), 3, 3))  # each proxy vertex's: its triangles' turns
            for k in range(3):  # by area, made a rotation again
                np.add.at(at_vertex, self.faces[:, k], area[:, None, None] * turn)
            at_vertex = _rotations(at_vertex)
            R = np.einsum("nk,nkij->nij", self.weights, at_vertex[corners])
            out[t] = np.einsum("nk,nkj->nj", self.weights, x[corners]) + \
                np.einsum("nij,nj->ni", R, offset)
        return out

    def _carry_turning(self, proxy_frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
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
               ring: int = 8, collapse: bool = False) -> Proxy:
    """Cluster the surface (N, 3)/(F, 3) into about ``target`` vertices (vertex clustering on a
    grid whose cell is sized from the surface area), bind every vertex to its ``k`` nearest
    proxy vertices and every proxy vertex to the ``ring`` nearest (itself among them) whose
    motion tells how it turns. ``collapse``: decimate by edge collapses instead (libigl's
    shortest edges first, no collapse that makes an intersection), which keeps a manifold's
    triangles apart where clustering folds a steep slope's into one another (the mountain's
    closest non-adjacent elements: 0.064 of an edge apart, against clustering's 0.007),
    and binds each vertex to the corners of the proxy triangle nearest it, by its
    barycentric coordinates there (nearest proxy vertices in space reach across a steep
    fold of the surface: the mountain's carried edges stretched 24 % where the proxy's
    stretched 3 %); clustering where the surface is no manifold."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    area = float(np.linalg.norm(np.cross(b - a, c - a), axis=1).sum() / 2)
    cell = np.sqrt(2.0 * area / target)  # ~2 triangles per vertex on a surface
    collapsed = _collapsed(vertices, faces, target) if collapse else None
    if collapsed is not None:
        pv, pf = collapsed
    else:
        for _ in range(8):  # adjust the cell until the proxy is near its target size
            pv, pf = _cluster(vertices, faces, cell)
            if len(pv) <= 1.25 * target:
                break
            cell *= np.sqrt(len(pv) / target)
    triangle = None
    if collapsed is not None:  # each vertex on the proxy triangle nearest it
        triangle, w = _on_surface(vertices, pv, pf)
        idx = pf[triangle]
    else:
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
                 ring=ring_idx.reshape(len(pv), -1), ring_weights=ring_w, triangle=triangle)


def _collapsed(vertices: np.ndarray, faces: np.ndarray, target: int
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """The surface decimated by edge collapses to about ``target`` vertices, or None where
    libigl cannot (not a manifold)."""
    import igl

    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]),
                    axis=1)
    if np.unique(edges, axis=0, return_counts=True)[1].max() > 2:
        return None
    try:
        pv, pf, _, _ = igl.decimate(np.asfortranarray(vertices, np.float64),
                                    np.asfortranarray(faces, np.int32), 2 * int(target), True)
    except (ValueError, RuntimeError):
        return None
    pv, pf = np.asarray(pv, np.float64), np.asarray(pf, np.int64)
    used = np.unique(pf)
    remap = np.full(len(pv), -1)
    remap[used] = np.arange(len(used))
    return (pv[used], remap[pf]) if len(used) >= 4 else None


def _on_surface(vertices: np.ndarray, pv: np.ndarray, pf: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(N,) the proxy triangle nearest each vertex and (N, 3) the barycentric coordinates
    of its nearest point there (clamped to the triangle)."""
    import igl

    _, tri, near = igl.point_mesh_squared_distance(np.ascontiguousarray(vertices, np.float64),
                                                   np.ascontiguousarray(pv, np.float64),
                                                   np.ascontiguousarray(pf, np.int64))
    corners = pf[np.asarray(tri, np.int64)]
    a, b, c = (pv[corners[:, i]] for i in range(3))
    e0, e1, d = b - a, c - a, np.asarray(near) - a
    d00, d01, d11 = (e0 * e0).sum(1), (e0 * e1).sum(1), (e1 * e1).sum(1)
    d20, d21 = (d * e0).sum(1), (d * e1).sum(1)
    den = np.maximum(d00 * d11 - d01 * d01, 1e-300)
    v = (d11 * d20 - d01 * d21) / den
    w = (d00 * d21 - d01 * d20) / den
    bary = np.clip(np.stack([1 - v - w, v, w], axis=1), 0.0, 1.0)
    bary /= np.maximum(bary.sum(axis=1, keepdims=True), 1e-300)
    return np.asarray(tri, np.int64), bary


def _frames_of(x: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """(N, 3, 3) each triangle's orthonormal frame as rows (its first edge, the normal's
    cross with it, the normal): world -> local."""
    a, b, c = (x[corners[:, i]] for i in range(3))
    e = b - a
    n = np.cross(e, c - a)
    e = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-300)
    n = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    return np.stack([e, np.cross(n, e), n], axis=1)


def _rotations(A: np.ndarray) -> np.ndarray:
    """(n, 3, 3) the rotations nearest the matrices A (the identity where A is zero)."""
    U, sv, Vt = np.linalg.svd(A)
    R = U @ Vt
    flip = np.linalg.det(R) < 0
    U[flip, :, 2] *= -1
    R[flip] = U[flip] @ Vt[flip]
    R[sv[:, 0] < 1e-300] = np.eye(3)
    return R
