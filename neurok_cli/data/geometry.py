"""Small surface geometry in NumPy: areas, normals, area-weighted sampling, rigid alignment.

Shared by the training sampler and the evaluation metrics so both draw points the same way.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def face_areas(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Triangle areas ``(F,)`` of a mesh ``vertices (N, 3)``, ``faces (F, 3)`` (units²)."""
    v = np.asarray(vertices, np.float64)
    tri = v[np.asarray(faces)]  # (F, 3, 3)
    return 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)


def face_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Unit triangle normals ``(F, 3)`` (right-handed winding); degenerate faces get (0, 1, 0)."""
    v = np.asarray(vertices, np.float64)
    tri = v[np.asarray(faces)]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    up = np.broadcast_to(np.array([0.0, 1.0, 0.0]), n.shape)
    return np.where(length > 1e-20, n / np.maximum(length, 1e-300), up)


def sample_surface(vertices: np.ndarray, faces: np.ndarray, n: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` points uniformly distributed over a triangle mesh's area.

    Args:
        vertices: ``(N, 3)`` positions.
        faces: ``(F, 3)`` vertex indices.
        n: number of samples.
        rng: the only source of randomness.

    Returns:
        ``points (n, 3)`` float64, ``face_idx (n,)`` int64 and ``bary (n, 3)`` float64
        barycentric weights (non-negative, rows sum to 1), so that
        ``points == barycentric_points(vertices, faces, face_idx, bary)``. A mesh whose faces
        all have zero area is sampled uniformly over its faces.
    """
    areas = face_areas(vertices, faces)
    total = areas.sum()
    p = areas / total if total > 0 else None
    face_idx = rng.choice(len(faces), size=n, p=p)
    r1, r2 = rng.random(n), rng.random(n)
    s = np.sqrt(r1)  # the square root makes the density uniform over the triangle
    bary = np.stack([1.0 - s, s * (1.0 - r2), s * r2], axis=1)
    return barycentric_points(vertices, faces, face_idx, bary), face_idx.astype(np.int64), bary


def barycentric_points(vertices: np.ndarray, faces: np.ndarray, face_idx: np.ndarray,
                       bary: np.ndarray) -> np.ndarray:
    """Points ``(..., n, 3)`` at barycentric ``bary (n, 3)`` of faces ``face_idx (n,)``.

    ``vertices`` may be one mesh ``(N, 3)`` or a stack of poses ``(T, N, 3)`` of the same mesh.
    """
    corners = np.asarray(vertices, np.float64)[..., np.asarray(faces)[face_idx], :]  # (..,n,3,3)
    return np.einsum("...nkc,nk->...nc", corners, bary)


def kabsch(source: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rigid motion that best maps ``source`` onto ``target`` (least squares, no scaling).

    Args:
        source, target: ``(N, 3)`` corresponding points.

    Returns:
        ``rotation (3, 3)`` (a proper rotation, det +1) and ``translation (3,)`` minimising
        ``sum ||rotation @ source_i + translation - target_i||²``.
    """
    src = np.asarray(source, np.float64)
    dst = np.asarray(target, np.float64)
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    h = (src - cs).T @ (dst - cd)  # (3, 3) cross-covariance
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0  # no reflections
    rotation = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return rotation, cd - rotation @ cs


def bbox_diagonal(points: np.ndarray) -> float:
    """Length of the axis-aligned bounding-box diagonal of ``points (N, 3)``."""
    p = np.asarray(points, np.float64).reshape(-1, 3)
    return float(np.linalg.norm(p.max(axis=0) - p.min(axis=0)))


def vertex_areas(v: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(N,) each vertex's third of its triangles' areas."""
    out = np.zeros(len(v))
    np.add.at(out, faces.reshape(-1), np.repeat(face_areas(v, faces) / 3.0, 3))
    return out


def surface_grid(vertices: np.ndarray, faces: np.ndarray, spacing: float, most: int = 20_000
                 ) -> tuple[sp.csr_matrix, np.ndarray]:
    """Points over a triangle mesh at most about ``spacing`` apart (wider where that would
    add more than ``most``): its vertices, then a barycentric grid on each triangle longer
    than that (n steps along each side, n from its longest), shared where two triangles
    split a side alike -> (B (C, N) sparse: the points as combinations of the vertices,
    the vertices first as themselves; area (C,): each point's third of its grid
    triangles' areas, summing to the mesh's)."""
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    tri = v[f]
    longest = np.max(np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2), axis=1)
    steps = np.maximum(np.ceil(longest / max(spacing, 1e-30) - 1e-9), 1).astype(np.int64)
    grown = float(np.sum((steps - 1) * (steps - 2) / 2 + 1.5 * (steps - 1)))  # new points
    if grown > most:  # wider apart, so that there are about ``most`` more
        steps = np.maximum(np.ceil(steps * np.sqrt(most / grown) - 1e-9), 1).astype(np.int64)
    n_v = len(v)
    ids: dict[tuple, int] = {}
    rows, cols, vals = [np.arange(n_v)], [np.arange(n_v)], [np.ones(n_v)]
    area = list(vertex_areas(v, f))
    for fi in np.flatnonzero(steps > 1):
        n = int(steps[fi])
        corner = f[fi]
        i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = i + j <= n
        i, j = i[keep], j[keep]
        k = n - i - j
        whole = face_areas(tri[fi], np.array([[0, 1, 2]]))[0]
        for a, b, c in zip(i.tolist(), j.tolist(), k.tolist()):
            p = _grid_point(ids, rows, cols, vals, area, corner, (a, b, c), n)
            if p >= n_v:  # a third of each grid triangle it is a corner of (up to 6)
                area[p] += _grid_triangles(a, b, n) * whole / (3 * n ** 2)
        for c_idx in corner:  # a corner keeps one grid triangle of the face's n^2
            area[c_idx] -= (1 - 1 / n ** 2) * whole / 3
    B = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(len(area), n_v))
    return B, np.asarray(area)


def _grid_triangles(a: int, b: int, n: int) -> int:
    """How many triangles of a grid of n steps a side have point (a, b) as a corner: up
    ones (u, w), (u+1, w), (u, w+1) for u + w < n, down ones (u+1, w), (u, w+1), (u+1,
    w+1) for u + w < n - 1."""
    up = sum(u >= 0 and w >= 0 and u + w < n for u, w in ((a, b), (a - 1, b), (a, b - 1)))
    down = sum(u >= 0 and w >= 0 and u + w < n - 1
               for u, w in ((a - 1, b), (a, b - 1), (a - 1, b - 1)))
    return up + down


def _grid_point(ids, rows, cols, vals, area, corner, abc, n) -> int:
    """The id of the grid point ``abc`` / n of a triangle ``corner`` (a new one if unseen;
    a corner of the triangle is its vertex)."""
    nz = [(int(corner[t]), abc[t]) for t in range(3) if abc[t]]
    if len(nz) == 1:
        return nz[0][0]
    g = np.gcd.reduce([w for _, w in nz] + [n])
    key = tuple(sorted((vid, w // g) for vid, w in nz))
    if key not in ids:
        ids[key] = len(area)
        total = sum(w for _, w in key)
        rows.append(np.full(len(key), ids[key]))
        cols.append(np.array([vid for vid, _ in key]))
        vals.append(np.array([w / total for _, w in key]))
        area.append(0.0)
    return ids[key]
