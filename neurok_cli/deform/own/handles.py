"""An object's own shape space: affine handles with smooth weights over its material, built at
load from the mesh alone (docs/design.md, "The object's own shape space").

Each handle h is an affine map: a point X moves to ``X + sum_h w_h(X) (A_h (X - c_h) + t_h)``,
where ``c_h`` is the handle's rest centre and ``w`` a partition of unity. Every point moves
linearly in the handle coordinates, so the mass matrix is constant, and an affine (so rigid)
motion of the whole object is exact. Steps:

- the material's points: the surface's vertices, and for a solid the nodes of a tetrahedral
  lattice inside it (``meshing/lattice.py``), joined in one graph (mesh edges, the lattice's edges
  and each point's nearest neighbours; separate parts joined at their closest points);
- handle centres by farthest-point sampling in graph distance (geodesic through the
  material, so the two sides of a thin gap do not share a handle);
- weights: Gaussians of the graph distance to each handle (each WIDTH x its distance to
  its nearest other handle wide), the ``TOP`` largest kept per point and normalized to
  sum to one;
- a solid's surface: its vertices' weights averaged over the surface's own edges, the
  ``TOP`` largest kept again (``skin_weights``), so that the skin moves smoothly at the scale
  of its triangles, which the lattice and the graph's distances do not resolve.

Coordinates are stored as ``Z`` (4H, 3): rows ``4h..4h+2`` hold ``A_h`` transposed and row
``4h+3`` holds ``t_h``; displacements are ``Phi @ Z`` for the (P, 4H) sparse ``Phi`` of the
points (``basis_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra
from scipy.spatial import cKDTree

TOP = 4  # handles that move a point
WIDTH = 0.6  # a handle's Gaussian width, x its distance to its nearest other handle
SMOOTHING = 4  # rounds of averaging the handles' distances over the graph
NEIGHBOURS = 8  # graph edges from each point to its nearest ones
SKIN_SMOOTHING = 2  # rounds of averaging a solid's surface weights over its own edges


@dataclass
class HandleBasis:
    """Smooth weights of ``H`` affine handles over the material's points (metres)."""

    points: np.ndarray  # (P, 3) rest points: the surface's vertices first, then inner nodes
    weights: sp.csr_matrix  # (P, H) non-negative, rows sum to one, at most TOP per row
    centres: np.ndarray  # (H, 3) handle rest centres
    spacing: float  # the median graph distance from a handle to its nearest other, m

    @property
    def handles(self) -> int:
        return len(self.centres)

    def rows(self, index: np.ndarray | None = None, at: np.ndarray | None = None
             ) -> sp.csr_matrix:
        """(n, 4H) map from ``Z`` to the displacements of points ``index`` (all: None), at
        rest positions ``at`` (default: their own)."""
        w = self.weights if index is None else self.weights[index]
        x = self.points if index is None else self.points[index]
        return basis_rows(w.tocoo(), x if at is None else at, self.centres)


def basis_rows(w: sp.coo_matrix, x: np.ndarray, centres: np.ndarray) -> sp.csr_matrix:
    """(n, 4H) rows ``kron(w_i, [x_i - c_h, 1])`` of weights ``w`` (n, H) at points x (n, 3)."""
    rel = x[w.row] - centres[w.col]  # (nnz, 3)
    vals = np.concatenate([w.data[:, None] * rel, w.data[:, None]], axis=1)  # (nnz, 4)
    rows = np.repeat(w.row, 4)
    cols = (4 * w.col[:, None] + np.arange(4)).reshape(-1)
    return sp.csr_matrix((vals.reshape(-1), (rows, cols)),
                         shape=(w.shape[0], 4 * w.shape[1]))


def identity_coords(centres: np.ndarray) -> np.ndarray:
    """``Z`` (4H, 3) of the displacement ``x -> x`` (every handle the identity less one):
    ``Phi @ (Z_R)`` for ``Z_R = affine_coords(R - I, ...)`` rotates the object."""
    return affine_coords(np.eye(3), np.zeros(3), centres)


def affine_coords(a: np.ndarray, t: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """``Z`` (4H, 3) of the displacement field ``u(x) = a x + t`` (a (3, 3), t (3,)): every
    handle carries it, so any partition of unity reproduces it exactly."""
    z = np.zeros((len(centres), 4, 3))
    z[:, :3, :] = a.T
    z[:, 3, :] = centres @ a.T + t
    return z.reshape(-1, 3)


def material_graph(points: np.ndarray, edges: np.ndarray) -> sp.csr_matrix:
    """Symmetric graph of ``points`` with Euclidean edge lengths: the given ``edges`` (E, 2)
    and each point's NEIGHBOURS nearest, separate parts joined at their closest points."""
    k = min(NEIGHBOURS + 1, len(points))
    tree = cKDTree(points)
    _, near = tree.query(points, k=k)
    knn = np.stack([np.repeat(np.arange(len(points)), k - 1), near[:, 1:].reshape(-1)], 1)
    pairs = np.concatenate([edges.reshape(-1, 2), knn])
    for _ in range(64):  # each round joins every part to its nearest other part
        graph = _graph(points, pairs)
        n, label = connected_components(graph, directed=False)
        if n == 1:
            return graph
        pairs = np.concatenate([pairs, _bridges(points, label, n)])
    return _graph(points, pairs)


def _graph(points: np.ndarray, pairs: np.ndarray) -> sp.csr_matrix:
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    length = np.linalg.norm(points[pairs[:, 0]] - points[pairs[:, 1]], axis=1)
    length = np.maximum(length, 1e-12)  # a zero-length edge would read as no edge
    n = len(points)
    g = sp.coo_matrix((np.concatenate([length, length]),
                       (np.concatenate([pairs[:, 0], pairs[:, 1]]),
                        np.concatenate([pairs[:, 1], pairs[:, 0]]))), shape=(n, n)).tocsr()
    g.sum_duplicates()
    g.data = np.minimum(g.data, 1e300)
    return g


def _bridges(points: np.ndarray, label: np.ndarray, n: int) -> np.ndarray:
    """One edge from each part but the largest to the closest point of another part."""
    largest = np.bincount(label).argmax()
    out = []
    for part in range(n):
        if part == largest:
            continue
        inside = np.flatnonzero(label == part)
        others = np.flatnonzero(label != part)
        d, j = cKDTree(points[others]).query(points[inside])
        i = int(np.argmin(d))
        out.append((inside[i], others[j[i]]))
    return np.asarray(out, np.int64).reshape(-1, 2)


def farthest_handles(graph: sp.csr_matrix, points: np.ndarray, count: int,
                     candidates: np.ndarray | None = None,
                     groups: list[np.ndarray] = (), scale: np.ndarray | None = None
                     ) -> tuple[int, np.ndarray, np.ndarray]:
    """``count`` handles: one for each of ``groups`` (point indices), then points among
    ``candidates`` (default: all) by farthest-point sampling in graph distance, starting
    from the candidate farthest from the centroid (deterministic). With ``scale`` (one per
    candidate: the material's local thickness), distances are read in its units, so a
    slender part gets handles along its length rather than across it -> (how many handles
    the groups hold, distances (H, P) of each handle from its point or group, (H,) the
    point each sampled handle stands on, -1 for a group's)."""
    cand = np.arange(len(points)) if candidates is None else np.asarray(candidates)
    count = max(1, len(groups), min(count, len(cand) + len(groups)))
    unit = np.ones(len(cand)) if scale is None else np.maximum(scale, 1e-12)
    dist = [dijkstra(graph, directed=False, indices=g, min_only=True) for g in groups]
    at = [-1] * len(groups)
    if dist:
        nearest = np.min(np.stack(dist), axis=0)[cand]
    else:
        first = int(cand[np.argmax(np.linalg.norm(points[cand] - points.mean(axis=0),
                                                  axis=1))])
        dist.append(dijkstra(graph, directed=False, indices=first))
        at.append(first)
        nearest = dist[0][cand].copy()
    while len(dist) < count:
        i = int(np.argmax(nearest / unit))
        if nearest[i] <= 0:
            break
        at.append(int(cand[i]))
        dist.append(dijkstra(graph, directed=False, indices=at[-1]))
        nearest = np.minimum(nearest, dist[-1][cand])
    return len(groups), np.stack(dist), np.asarray(at)


def handle_spacing(dist: np.ndarray, at: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """(H,) each handle's graph distance to its nearest other handle (a group's: from its
    nearest point)."""
    h = len(dist)
    out = np.empty(h)
    for k in range(h):
        others = np.delete(np.arange(h), k)
        if not len(others):
            out[k] = np.inf
        elif at[k] >= 0:
            out[k] = dist[others, at[k]].min()
        else:
            out[k] = dist[np.ix_(others, groups[k])].min()
    return out


def gaussian_weights(dist: np.ndarray, sigma: np.ndarray, top: int | None = None
                     ) -> sp.csr_matrix:
    """(P, H) normalized Gaussians of the distances (H, P), handle h's of width
    ``sigma[h]``, the ``top`` largest per point."""
    h, p = dist.shape
    top = min(top or TOP, h)
    log = -0.5 * (dist / np.maximum(sigma, 1e-12)[:, None]) ** 2  # (H, P)
    order = np.argsort(-log, axis=0)[:top + 1]  # (top + 1, P) the nearest handles first
    w = np.exp(np.take_along_axis(log, order, axis=0) - log[order[0], np.arange(p)])
    if top < h:  # less the next one's: a handle's weight fades to 0 as it leaves the top
        w = w[:top] - w[top]
        order = order[:top]
    w /= w.sum(axis=0, keepdims=True)
    cols = order.T.reshape(-1)
    rows = np.repeat(np.arange(p), top)
    out = sp.csr_matrix((w.T.reshape(-1), (rows, cols)), shape=(p, h))
    out.eliminate_zeros()
    return out


def build_basis(points: np.ndarray, edges: np.ndarray, handles: int,
                candidates: np.ndarray | None = None,
                groups: list[np.ndarray] = (), scale: np.ndarray | None = None,
                resolution: float = 0.0, skin: np.ndarray | None = None,
                skin_reach: float = 0.0) -> HandleBasis:
    """The handle basis over ``points`` (P, 3), joined by ``edges`` (E, 2) (mesh and lattice
    edges; nearest neighbours are added), with ``handles`` handles placed on ``candidates``
    (default: any point; a solid's: its inner nodes, which carry its mass), spaced in
    units of ``scale`` (see ``farthest_handles``). Each of ``groups`` (a pinned region's
    points) is one handle that alone moves its points, so holding it holds them and no
    other handle: a clamp without a clamped neighbourhood. Each handle's weight is a
    Gaussian WIDTH x its spacing wide, and at least ``resolution`` (the spacing of the
    points its energy is measured at: a weight that changes faster is not seen there).
    ``skin``: a solid's surface triangles over the first points, whose weights are then
    smoothed over them (``skin_weights``, over edges about ``skin_reach`` long)."""
    pts = np.asarray(points, np.float64)
    graph = material_graph(pts, np.asarray(edges, np.int64))
    held, dist, at = farthest_handles(graph, pts, handles, candidates, groups, scale)
    spacing = handle_spacing(dist, at, list(groups))
    if not np.isfinite(spacing).any():
        spacing = np.full(len(dist), float(np.ptp(pts, axis=0).max()))
    spacing = np.where(np.isfinite(spacing), spacing, np.nanmax(spacing[np.isfinite(spacing)]))
    dist = smoothed(dist, graph, SMOOTHING)
    weights = gaussian_weights(dist, np.maximum(WIDTH * spacing, resolution))
    if skin is not None and len(skin):
        if skin_reach <= 0:
            raise ValueError("build_basis: a skin needs the spacing it is smoothed over")
        weights = skin_weights(weights, skin, SKIN_SMOOTHING, TOP, pts, skin_reach)
    weights = weights.tolil()
    for h, g in enumerate(groups[:held]):
        weights[g] = 0.0
        weights[g, h] = 1.0
    weights = weights.tocsr()
    weights.eliminate_zeros()
    centres = np.asarray(weights.T @ pts / np.maximum(weights.sum(axis=0).A1, 1e-30)[:, None])
    return HandleBasis(points=pts, weights=weights, centres=centres,
                       spacing=float(np.median(spacing)))


def skin_weights(weights: sp.csr_matrix, faces: np.ndarray, rounds: int, top: int,
                 points: np.ndarray, reach: float) -> sp.csr_matrix:
    """Weights (P, H) with those of the surface's vertices (the first, indexed by ``faces``,
    at ``points``) averaged ``rounds`` times with their neighbours' along its edges (half
    each), then the ``top`` largest kept, each less the next one's (so a handle fades out as
    it leaves them), and normalized. A surface vertex's own weights come from its graph
    distances, which jump at the scale of its triangles with where the lattice's nodes
    fall; the penguin's resting crumple was twice a smooth fit's (0.030 against 0.016,
    docs/design.md). A neighbour counts by exp(-(its edge's length / ``reach``)^2) (the rest
    of its share stays the vertex's own): the ripple is finer than the lattice, and a coarse
    surface's long edges would carry weights far from the material under them (the milk
    truck's boxy parts crumpled 0.66 where they had 0.40). Copies of one point (a seam's)
    are one vertex here and get the same weights."""
    n = int(np.max(faces)) + 1
    _, one, count = np.unique(np.asarray(points[:n]), axis=0, return_inverse=True,
                              return_counts=True)
    one = one.reshape(-1)
    m = len(count)
    e = np.unique(np.sort(one[mesh_edges(faces)], axis=1), axis=0)
    e = e[e[:, 0] != e[:, 1]]
    at = np.zeros((m, 3))
    at[one] = np.asarray(points[:n])
    near = np.exp(-(np.linalg.norm(at[e[:, 0]] - at[e[:, 1]], axis=1)
                    / max(reach, 1e-30)) ** 2)
    adj = sp.coo_matrix((np.r_[near, near], (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                        shape=(m, m)).tocsr()
    degree = np.maximum(np.bincount(e.reshape(-1), minlength=m), 1)
    step = sp.diags(1.0 / degree) @ adj + sp.diags(1.0 - adj.sum(axis=1).A1 / degree)
    copies = sp.csr_matrix((np.ones(n), (one, np.arange(n))), shape=(m, n))
    w = (sp.diags(1.0 / count) @ copies @ weights[:n]).toarray()  # each point's copies' mean
    for _ in range(rounds):
        w = 0.5 * w + 0.5 * (step @ w)
    k = min(top, w.shape[1])
    order = np.argsort(-w, axis=1)[:, :k + 1]
    kept = np.take_along_axis(w, order, axis=1)
    if k < w.shape[1]:
        kept = np.maximum(kept[:, :k] - kept[:, k:], 0.0)
        order = order[:, :k]
    kept /= np.maximum(kept.sum(axis=1, keepdims=True), 1e-30)
    rows = np.repeat(np.arange(n), k)
    surface = sp.csr_matrix((kept[one].reshape(-1), (rows, order[one].reshape(-1))),
                            shape=(n, w.shape[1]))
    out = sp.vstack([surface, weights[n:]]).tocsr()
    out.eliminate_zeros()
    return out


def smoothed(dist: np.ndarray, graph: sp.csr_matrix, rounds: int) -> np.ndarray:
    """Distances (H, P) averaged ``rounds`` times with their graph neighbours' (half each)."""
    adj = graph.copy()
    adj.data[:] = 1.0
    step = sp.diags(1.0 / np.maximum(adj.sum(axis=1).A1, 1.0)) @ adj
    out = dist.copy()
    for _ in range(rounds):
        out = 0.5 * out + 0.5 * (step @ out.T).T
    return out


def mesh_edges(faces: np.ndarray) -> np.ndarray:
    """(E, 2) unique undirected edges of triangles or tetrahedra."""
    f = np.asarray(faces, np.int64)
    k = f.shape[1]
    e = np.concatenate([f[:, [i, j]] for i in range(k) for j in range(i + 1, k)])
    return np.unique(np.sort(e, axis=1), axis=0)
