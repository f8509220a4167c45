"""The building blocks of the shape families (``sim/shapes.py``): the :class:`Shape` a family
returns, the draws it makes, and closed and open triangle meshes to build it from (metres,
+Y up). A :data:`Mesh` is a (vertices (N, 3) float64, faces (F, 3) int64) pair; closed meshes
are watertight with faces counter-clockwise seen from outside.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("solid", "sheet", "beam")

Mesh = tuple[np.ndarray, np.ndarray]  # vertices (N, 3) float64, faces (F, 3) int64


@dataclass
class Shape:
    """A rest shape for the simulator, with the parameters it was drawn with."""

    family: str  # registry name, e.g. "torus"
    vertices: np.ndarray  # (N, 3) float64, metres, +Y up, min y = 0, bbox centred in x and z
    faces: np.ndarray  # (F, 3) int64, counter-clockwise seen from outside for closed shapes
    kind: str  # "solid" (closed, soft body), "sheet" (open, cloth), "beam" (closed, clamped at -x)
    params: dict  # sampled parameters (JSON-serialisable floats and ints), for the dataset meta


# ---------------------------------------------------------------- sampling and finishing


def uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """A float in [lo, hi)."""
    return float(rng.uniform(lo, hi))


def integer(rng: np.random.Generator, lo: int, hi: int) -> int:
    """An integer in [lo, hi], both included."""
    return int(rng.integers(lo, hi + 1))


def finish(family: str, kind: str, mesh: Mesh, params: dict) -> Shape:
    """Move the mesh so its bbox is centred in x and z and its lowest point is at y = 0."""
    v = np.asarray(mesh[0], np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    v = v - np.array([(lo[0] + hi[0]) / 2, lo[1], (lo[2] + hi[2]) / 2])
    faces = np.ascontiguousarray(mesh[1], dtype=np.int64)
    return Shape(family=family, vertices=np.ascontiguousarray(v), faces=faces, kind=kind,
                 params=params)


def concat(parts: list[Mesh]) -> Mesh:
    """One mesh from several, vertex indices offset (parts stay separate components)."""
    offsets = np.cumsum([0] + [len(v) for v, _ in parts[:-1]])
    return (np.concatenate([v for v, _ in parts]),
            np.concatenate([f + o for (_, f), o in zip(parts, offsets)]))


def along_x(mesh: Mesh) -> Mesh:
    """Rotate -90 degrees about z: the +y axis becomes +x (a proper rotation keeps the winding)."""
    v = mesh[0]
    return np.stack([v[:, 1], -v[:, 0], v[:, 2]], axis=1), mesh[1]


# ---------------------------------------------------------------- primitive builders


def grid_faces(nu: int, nv: int, wrap_u: bool = False, wrap_v: bool = False) -> np.ndarray:
    """Triangles (F, 3) of an nu x nv vertex grid indexed ``i * nv + j``, diagonals alternating.

    The faces' normals point along d/du x d/dv; a wrapped direction closes the grid on itself.
    """
    i, j = np.meshgrid(np.arange(nu if wrap_u else nu - 1), np.arange(nv if wrap_v else nv - 1),
                       indexing="ij")
    i, j = i.ravel(), j.ravel()
    i1, j1 = (i + 1) % nu, (j + 1) % nv
    a, b, c, d = i * nv + j, i1 * nv + j, i1 * nv + j1, i * nv + j1
    alt = ((i + j) % 2 == 1)[:, None]
    t1 = np.where(alt, np.stack([a, b, d], 1), np.stack([a, b, c], 1))
    t2 = np.where(alt, np.stack([b, c, d], 1), np.stack([a, c, d], 1))
    return np.concatenate([t1, t2]).astype(np.int64)


def revolve(radius: np.ndarray, height: np.ndarray, n_seg: int, bottom: float,
             top: float) -> Mesh:
    """Closed surface of revolution about +y.

    radius, height: (K,) the profile rings from bottom to top (radius > 0, metres), closed by
    poles at (0, bottom, 0) and (0, top, 0); each ring has n_seg vertices.
    """
    t = 2 * np.pi * np.arange(n_seg) / n_seg
    r = np.asarray(radius, np.float64)
    r = r[:, None] if r.ndim == 1 else r  # (K, n_seg): rings of any star-shaped outline
    h = np.broadcast_to(np.asarray(height, np.float64)[:, None], (len(r), n_seg))
    rings = np.stack([r * np.cos(t), h, r * np.sin(t)], axis=-1).reshape(-1, 3)
    n = len(rings)
    poles = np.array([[0.0, bottom, 0.0], [0.0, top, 0.0]])
    j = np.arange(n_seg)
    j1 = (j + 1) % n_seg
    last = n - n_seg
    fans = [np.stack([np.full(n_seg, n), j, j1], 1),
            np.stack([np.full(n_seg, n + 1), last + j1, last + j], 1)]
    faces = np.concatenate([grid_faces(len(radius), n_seg, wrap_v=True), *fans])
    return np.concatenate([rings, poles]), faces


def cylinder(radius: float, height: float, n_seg: int, n_side: int, n_cap: int) -> Mesh:
    """Closed cylinder about +y from y = 0 to ``height``; caps with n_cap rings, n_side bands."""
    rc = radius * np.arange(1, n_cap + 1) / n_cap
    r = np.concatenate([rc, np.full(n_side - 1, radius), rc[::-1]])
    h = np.concatenate([np.zeros(n_cap), height * np.arange(1, n_side) / n_side,
                        np.full(n_cap, height)])
    return revolve(r, h, n_seg, 0.0, height)


def box(extents: np.ndarray, divisions: np.ndarray, centre: np.ndarray | None = None) -> Mesh:
    """Closed box of the given extents (3,) metres, its faces cut into a lattice of divisions (3,).

    Vertices are merged on integer lattice keys, so shared edges and corners are exact.
    """
    n = np.asarray(divisions, np.int64)
    keys, tris, offset = [], [], 0
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        i, j = np.meshgrid(np.arange(n[b] + 1), np.arange(n[c] + 1), indexing="ij")
        for side in (0, n[a]):
            k = np.zeros((i.size, 3), np.int64)
            k[:, a], k[:, b], k[:, c] = side, i.ravel(), j.ravel()
            f = grid_faces(n[b] + 1, n[c] + 1)  # normal along b x c = +a
            keys.append(k)
            tris.append((f if side else f[:, ::-1]) + offset)
            offset += len(k)
    uniq, inverse = np.unique(np.concatenate(keys), axis=0, return_inverse=True)
    faces = inverse.reshape(-1)[np.concatenate(tris)]
    v = (uniq / n - 0.5) * np.asarray(extents, np.float64)
    return v + (0.0 if centre is None else np.asarray(centre, np.float64)), faces


def box_h(extents: tuple[float, float, float], edge: float,
           centre: tuple[float, float, float] | None = None) -> Mesh:
    """A box whose lattice edges are about ``edge`` metres long (at least 2 per side)."""
    e = np.asarray(extents, np.float64)
    return box(e, np.maximum(2, np.round(e / edge)).astype(np.int64),
                None if centre is None else np.asarray(centre))


def unit_sphere(subdivisions: int = 3) -> Mesh:
    """Icosphere (642 vertices, or 162 at 2 subdivisions) of radius 1; it has vertices on all
    six axis directions."""
    import trimesh

    m = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.array(m.vertices, np.float64), np.array(m.faces, np.int64)


def capsule_mesh(r: float, length: float, n_seg: int = 24, n_hemi: int = 6) -> Mesh:
    """Capsule about +y: a cylinder from y = 0 to ``length`` with hemispherical ends."""
    n_side = int(np.clip(np.round(length / (2 * np.pi * r / n_seg)), 2, 30))
    low = -np.pi / 2 + np.pi / 2 * np.arange(1, n_hemi + 1) / n_hemi  # (-pi/2, 0]
    high = np.pi / 2 * np.arange(n_hemi) / n_hemi  # [0, pi/2)
    radius = np.concatenate([r * np.cos(low), np.full(n_side - 1, r), r * np.cos(high)])
    height = np.concatenate([r * np.sin(low), length * np.arange(1, n_side) / n_side,
                             length + r * np.sin(high)])
    return revolve(radius, height, n_seg, -r, length + r)


def ring_strip(inner: np.ndarray, outer: np.ndarray) -> list[list[int]]:
    """Triangles joining two concentric rings of vertex indices, both starting at angle 0."""
    n_in, n_out = len(inner), len(outer)
    a_in = np.arange(n_in + 1) / n_in  # fractions of a turn, with the wrap-around
    a_out = np.arange(n_out + 1) / n_out
    tris, i, j = [], 0, 0
    while i < n_in or j < n_out:
        if j < n_out and (i == n_in or a_out[j + 1] <= a_in[i + 1]):
            tris.append([inner[i % n_in], outer[j], outer[(j + 1) % n_out]])
            j += 1
        else:
            tris.append([inner[i % n_in], outer[j % n_out], inner[(i + 1) % n_in]])
            i += 1
    return tris


def bend(v: np.ndarray, radius: float) -> np.ndarray:
    """Bend points about the z axis: the x axis becomes an arc of ``radius`` curving up to +y,
    x = 0 staying put; a point's height y becomes its distance inward from the arc. The map's
    Jacobian determinant is (radius - y) / radius, so points below y = radius keep the winding."""
    theta, rho = v[:, 0] / radius, radius - v[:, 1]
    return np.stack([rho * np.sin(theta), radius - rho * np.cos(theta), v[:, 2]], axis=1)


def grid_sheet(x: np.ndarray, z: np.ndarray, keep: np.ndarray | None = None) -> Mesh:
    """A sheet in the x-z plane from grid coordinates x, z (nx, nz), normals +y; ``keep``
    (nx - 1, nz - 1) keeps only those cells, and the vertices they use."""
    nx, nz = x.shape
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    faces = grid_faces(nx, nz)[:, ::-1]
    if keep is not None:  # grid_faces lists each cell's first triangles, then its second
        faces = faces[np.tile(keep.ravel(), 2)]
        used, faces = np.unique(faces, return_inverse=True)
        v, faces = v[used], faces.reshape(-1, 3)
    return v, faces


def sheet_res(rng: np.random.Generator, a: float, b: float) -> tuple[int, int]:
    """Vertices per side (12-30) for an a x b sheet, with near-square cells (the engine's cost
    grows with the count: 30 x 30 takes ~2 s per simulated second)."""
    n = integer(rng, 12, 30)
    if a >= b:
        return n, max(12, int(np.round(n * b / a)))
    return max(12, int(np.round(n * a / b))), n
