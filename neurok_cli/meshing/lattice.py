"""A closed surface as a solid: a body-centred cubic lattice of tetrahedra inside it, and the
surface carried by the lattice's nodes through a smooth map.

The engine's cage of trilinear cells is a shell: its elasticity lives on the surface, so a
finer cage adds nodes that nothing inside holds, and the surface crumples more at each
refinement (docs/results.md). A lattice of tetrahedra fills the solid instead, so its motion
converges as the lattice is refined and a squash is a volume's, not a balloon's. Steps:

- ``lattice``: the BCC lattice over the surface's box (cube corners and centres; every face
  two cubes share gives four tetrahedra, well shaped by construction), the tetrahedra whose
  centres lie inside the surface (generalized winding number), and the nodes of the hull
  moved onto the surface as far as no tetrahedron gets flatter than a third of its own;
- ``carry_weights``: each surface vertex as a moving-least-squares fit (affine basis,
  Wendland weights) of the nodes near it. The map is linear in the nodes, smooth (no creases
  where the surface crosses a tetrahedron's face), reproduces every affine motion exactly,
  and gives back the rest surface at the rest lattice.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..errors import UsageError


def winding_number(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray,
                   chunk: int = 256) -> np.ndarray:
    """(P,) generalized winding number of a triangle surface at ``points``: 1 inside a
    closed, outward-facing surface, 0 outside, in between near holes (Jacobson et al. 2013)."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        p = points[s: s + chunk, None, :]
        ra, rb, rc = a[None] - p, b[None] - p, c[None] - p
        la, lb, lc = (np.linalg.norm(r, axis=-1) for r in (ra, rb, rc))
        det = np.einsum("pfi,pfi->pf", ra, np.cross(rb, rc))
        den = (la * lb * lc + np.einsum("pfi,pfi->pf", ra, rb) * lc
               + np.einsum("pfi,pfi->pf", rb, rc) * la + np.einsum("pfi,pfi->pf", rc, ra) * lb)
        out[s: s + chunk] = np.arctan2(det, den).sum(axis=1) / (2 * np.pi)
    return out


def voxels(vertices: np.ndarray, faces: np.ndarray, cells: int = 48
           ) -> tuple[np.ndarray, float]:
    """Inside voxels of a closed surface by ray parity along y: (X, Y, Z) bool over the
    surface's box, and the voxel side. One pass over the triangles: each one marks
    where it crosses the vertical lines through the voxel centres it covers."""
    v = np.asarray(vertices, np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    s = float((hi - lo).max()) / cells
    n = np.maximum(np.ceil((hi - lo) / s).astype(np.int64), 1)
    origin = lo + 0.5 * s
    hits: list[list[float]] = [[] for _ in range(int(n[0] * n[2]))]
    tri = v[np.asarray(faces, np.int64)]
    # nudge the lines off the vertices so a line never passes exactly through an edge
    jitter = np.array([1e-7, 0.0, 2e-7]) * s
    for a, b, c in tri:
        xs, zs = np.array([a[0], b[0], c[0]]), np.array([a[2], b[2], c[2]])
        i0 = max(int(np.ceil((xs.min() - origin[0]) / s)), 0)
        i1 = min(int(np.floor((xs.max() - origin[0]) / s)), n[0] - 1)
        k0 = max(int(np.ceil((zs.min() - origin[2]) / s)), 0)
        k1 = min(int(np.floor((zs.max() - origin[2]) / s)), n[2] - 1)
        if i1 < i0 or k1 < k0:
            continue
        gi, gk = np.meshgrid(np.arange(i0, i1 + 1), np.arange(k0, k1 + 1), indexing="ij")
        px = origin[0] + gi.ravel() * s + jitter[0]
        pz = origin[2] + gk.ravel() * s + jitter[2]
        det = (b[0] - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (b[2] - a[2])
        if abs(det) < 1e-30:
            continue
        u = ((px - a[0]) * (c[2] - a[2]) - (c[0] - a[0]) * (pz - a[2])) / det
        w = ((b[0] - a[0]) * (pz - a[2]) - (px - a[0]) * (b[2] - a[2])) / det
        ok = (u >= 0) & (w >= 0) & (u + w <= 1)
        y = a[1] + u * (b[1] - a[1]) + w * (c[1] - a[1])
        for col, yy in zip((gi.ravel() * n[2] + gk.ravel())[ok], y[ok]):
            hits[col].append(yy)
    inside = np.zeros((n[0], n[1], n[2]), bool)
    ycent = origin[1] + np.arange(n[1]) * s
    for col, ys in enumerate(hits):
        if len(ys) < 2:
            continue
        ys = np.sort(ys)
        count = np.searchsorted(ys, ycent)  # crossings below each voxel centre
        inside[col // n[2], :, col % n[2]] = count % 2 == 1
    return inside, s


def thickness(vertices: np.ndarray, faces: np.ndarray, cells: int = 48,
              quantile: float = 0.05) -> float:
    """How thick the solid's thin parts are (m): the ``quantile``, over the inside voxels, of
    the diameter of the largest inscribed ball that holds each (a leg, an arm, a rim).
    Inscribed balls are the medial ridge of the distance transform; the ones of a voxel's
    size (the grid's own noise) are left out unless nothing else is there."""
    from scipy import ndimage

    inside, s = voxels(vertices, faces, cells)
    if not inside.any():
        return 0.0
    inside = np.pad(inside, 1)  # outside all round: the grid spans the box exactly
    dist = ndimage.distance_transform_edt(inside)  # in voxels
    ridge = inside & (dist >= ndimage.maximum_filter(dist, size=3) - 1e-9)
    if (ridge & (dist > 1.5)).any():
        ridge &= dist > 1.5
    local = np.zeros_like(dist)  # diameter of the largest inscribed ball holding each voxel
    for r in np.unique(np.round(dist[ridge] * 2) / 2):
        centres = ridge & (np.abs(dist - r) <= 0.25)
        near = ndimage.distance_transform_edt(~centres)
        local = np.where(near <= r, np.maximum(local, 2 * r), local)
    values = local[inside & (local > 0)]
    return float(np.quantile(values, quantile) * s) if len(values) else float(2 * s)


def _bcc(lo: np.ndarray, h: float, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and tetrahedra of the BCC lattice of ``n`` cubes of side ``h`` from ``lo``."""
    corners = np.stack(np.meshgrid(*[np.arange(k + 1) for k in n], indexing="ij"),
                       axis=-1).reshape(-1, 3)
    centres = np.stack(np.meshgrid(*[np.arange(k) for k in n], indexing="ij"),
                       axis=-1).reshape(-1, 3)
    nodes = np.vstack([corners * h, (centres + 0.5) * h]) + lo

    def corner(i, j, k):
        return (i * (n[1] + 1) + j) * (n[2] + 1) + k

    def centre(i, j, k):
        return len(corners) + (i * n[1] + j) * n[2] + k

    tets = []
    for axis in range(3):  # faces normal to ``axis`` shared by cubes c and c + e_axis
        u, v = [a for a in range(3) if a != axis]
        lo_c = np.stack(np.meshgrid(*[np.arange(k - (a == axis)) for a, k in enumerate(n)],
                                    indexing="ij"), axis=-1).reshape(-1, 3)
        hi_c = lo_c.copy()
        hi_c[:, axis] += 1
        c1, c2 = centre(*lo_c.T), centre(*hi_c.T)
        face = hi_c.copy()  # the shared face's corners: the cube above's lower face
        quad = []
        for du, dv in ((0, 0), (1, 0), (1, 1), (0, 1)):
            q = face.copy()
            q[:, u] += du
            q[:, v] += dv
            quad.append(corner(*q.T))
        for e in range(4):
            tets.append(np.stack([c1, c2, quad[e], quad[(e + 1) % 4]], axis=1))
    return nodes, np.concatenate(tets)


def _volumes(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    a, b, c, d = (nodes[tets[:, i]] for i in range(4))
    return np.einsum("ij,ij->i", b - a, np.cross(c - a, d - a)) / 6.0


def _nearest_on_surface(points: np.ndarray, vertices: np.ndarray,
                        faces: np.ndarray) -> np.ndarray:
    """(P, 3) the closest point of the triangle surface to each point (exact, per triangle,
    among the triangles whose vertices lie nearest)."""
    tree = cKDTree(vertices)
    _, near_v = tree.query(points, k=min(8, len(vertices)))
    v2f = [[] for _ in range(len(vertices))]
    for f, tri in enumerate(faces):
        for v in tri:
            v2f[v].append(f)
    out = np.empty_like(points)
    for i, p in enumerate(points):
        cand = np.unique(np.array([t for v in np.atleast_1d(near_v[i]) for t in v2f[v]],
                                  np.int64))
        if not len(cand):  # only vertices no face uses nearby
            cand = np.arange(len(faces))
        q = _closest_on_triangles(p, vertices[faces[cand]])
        out[i] = q[np.argmin(np.linalg.norm(q - p, axis=1))]
    return out


def _closest_on_triangles(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(T, 3) closest point to ``p`` on each triangle (T, 3, 3) (Ericson's regions)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)
    bp, cp = p - b, p - c
    d3, d4 = np.einsum("ij,ij->i", ab, bp), np.einsum("ij,ij->i", ac, bp)
    d5, d6 = np.einsum("ij,ij->i", ab, cp), np.einsum("ij,ij->i", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    denom = np.where(np.abs(va + vb + vc) > 1e-30, va + vb + vc, 1e-30)
    v, w = vb / denom, vc / denom
    out = a + ab * v[:, None] + ac * w[:, None]  # inside the face
    safe = lambda x: np.where(np.abs(x) > 1e-30, x, 1e-30)  # noqa: E731
    # edges
    t_ab = d1 / safe(d1 - d3)
    e_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    t_ac = d2 / safe(d2 - d6)
    e_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    t_bc = (d4 - d3) / safe((d4 - d3) + (d5 - d6))
    e_bc = (va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0)
    out = np.where(e_bc[:, None], b + (c - b) * t_bc[:, None], out)
    out = np.where(e_ac[:, None], a + ac * t_ac[:, None], out)
    out = np.where(e_ab[:, None], a + ab * t_ab[:, None], out)
    # vertices
    out = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, out)
    out = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, out)
    out = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, out)
    return out


def _hull_nodes(tets: np.ndarray) -> np.ndarray:
    """Indices of the nodes on the boundary of a tetrahedral mesh."""
    faces = np.concatenate([tets[:, [0, 1, 2]], tets[:, [0, 1, 3]], tets[:, [0, 2, 3]],
                            tets[:, [1, 2, 3]]])
    key = np.sort(faces, axis=1)
    _, inv, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return np.unique(key[count[inv.reshape(-1)] == 1])


def lattice(vertices: np.ndarray, faces: np.ndarray, cells: int, winding=winding_number
            ) -> tuple[np.ndarray, np.ndarray]:
    """(K, 3) nodes and (T, 4) positively oriented tetrahedra filling a closed surface.

    Args:
        vertices, faces: the surface (closed, outward-facing).
        cells: lattice cubes along the box's longest side (the resolution).
        winding: ``(points, vertices, faces) -> (P,)`` winding numbers (a faster
            approximation may stand in for the exact ``winding_number``).
    """
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    h = float((hi - lo).max()) / max(int(cells), 1)
    n = np.maximum(np.ceil((hi - lo) / h - 1e-9).astype(np.int64), 1) + 2  # one cube margin
    origin = (lo + hi) / 2 - n * h / 2
    nodes, tets = _bcc(origin, h, n)
    centre = nodes[tets].mean(axis=1)
    tets = tets[winding(centre, v, f) > 0.5]
    if not len(tets):
        raise UsageError(f"no lattice cube of {cells} along the longest side lies inside the "
                         "surface: the surface is not closed, or thinner than the cubes; use "
                         "more «cells», or the cage («dof» trilinear)")
    used, tets = np.unique(tets, return_inverse=True)
    tets = tets.reshape(-1, 4)
    nodes = nodes[used]
    vol = _volumes(nodes, tets)
    tets[vol < 0] = tets[vol < 0][:, [0, 2, 1, 3]]
    nodes = _snap(nodes, tets, v, f)
    a, b, c = (v[f[:, i]] for i in range(3))
    inside = float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    held = float(_volumes(nodes, tets).sum())
    if not 0.5 * inside < held < 2.0 * inside:
        raise UsageError(f"the lattice of {cells} cubes along the longest side holds "
                         f"{held / max(inside, 1e-30):.0%} of the solid's volume: the surface "
                         "is not closed, or parts of it are thinner than the cubes; use more "
                         "«cells», or the cage («dof» trilinear)")
    return nodes, tets


def _snap(nodes: np.ndarray, tets: np.ndarray, vertices: np.ndarray,
          faces: np.ndarray) -> np.ndarray:
    """Hull nodes moved towards their closest surface points; a move is halved until no
    tetrahedron around the node keeps less than a third of its lattice volume."""
    hull = _hull_nodes(tets)
    target = _nearest_on_surface(nodes[hull], vertices, faces)
    rest_vol = np.abs(_volumes(nodes, tets))
    out = nodes.copy()
    frac = np.ones(len(hull))
    for _ in range(6):
        out[hull] = nodes[hull] + frac[:, None] * (target - nodes[hull])
        bad_tet = _volumes(out, tets) < rest_vol / 3
        if not bad_tet.any():
            break
        bad_node = np.isin(hull, np.unique(tets[bad_tet]))
        frac[bad_node] *= 0.5
    else:
        out[hull] = nodes[hull] + frac[:, None] * (target - nodes[hull])
        still = _volumes(out, tets) < rest_vol / 3
        frac[np.isin(hull, np.unique(tets[still]))] = 0.0
        out[hull] = nodes[hull] + frac[:, None] * (target - nodes[hull])
    return out


def carry_weights(points: np.ndarray, nodes: np.ndarray, spacing: float,
                  k: int = 24) -> sp.csr_matrix:
    """(P, K) sparse map from node positions to ``points``: moving least squares with an
    affine basis and Wendland weights of support 2.5 ``spacing`` (at least 8 nodes each).

    Each row reproduces any affine map of the nodes exactly, so the rest lattice gives the
    rest points and a rigid motion of the lattice moves them rigidly.
    """
    pts = np.asarray(points, np.float64)
    k = min(k, len(nodes))
    dist, near = cKDTree(nodes).query(pts, k=k)
    support = np.maximum(2.5 * spacing, dist[:, min(7, k - 1)] * 1.2)[:, None]
    r = np.clip(dist / support, 0.0, 1.0)
    w = (1 - r) ** 4 * (4 * r + 1)  # Wendland C2
    x = np.concatenate([nodes[near] - pts[:, None, :], np.ones((*near.shape, 1))], axis=-1)
    xtw = x.transpose(0, 2, 1) * w[:, None, :]  # (P, 4, k)
    m = xtw @ x + 1e-12 * np.eye(4)
    # value at the point (x = 0): the last row of M^-1 X^T W
    coef = np.linalg.solve(m, xtw)[:, 3, :]
    rows = np.repeat(np.arange(len(pts)), k)
    out = sp.csr_matrix((coef.reshape(-1), (rows, near.reshape(-1))),
                        shape=(len(pts), len(nodes)))
    out.eliminate_zeros()
    return out
