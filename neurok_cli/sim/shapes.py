"""Procedural shape families for the 4D physics dataset (metres, +Y up, resting on y = 0).

Each family is a function ``rng -> Shape`` that draws its parameters from the given
``numpy.random.Generator`` only, so a seed fixes the shape. ``FAMILIES`` at the end of the module
is the registry and ``CATEGORY_FAMILIES`` groups its names by the simulator category that uses
them. Closed shapes are watertight with faces counter-clockwise seen from outside; composites
(chair, mushroom, table) are closed parts concatenated into one mesh, each part watertight on its
own (parts overlap but share no vertices). Every shape ends centred in x and z with min y = 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError

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


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


def _i(rng: np.random.Generator, lo: int, hi: int) -> int:
    """An integer in [lo, hi], both included."""
    return int(rng.integers(lo, hi + 1))


def _finish(family: str, kind: str, mesh: Mesh, params: dict) -> Shape:
    """Move the mesh so its bbox is centred in x and z and its lowest point is at y = 0."""
    v = np.asarray(mesh[0], np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    v = v - np.array([(lo[0] + hi[0]) / 2, lo[1], (lo[2] + hi[2]) / 2])
    faces = np.ascontiguousarray(mesh[1], dtype=np.int64)
    return Shape(family=family, vertices=np.ascontiguousarray(v), faces=faces, kind=kind,
                 params=params)


def _concat(parts: list[Mesh]) -> Mesh:
    """One mesh from several, vertex indices offset (parts stay separate components)."""
    offsets = np.cumsum([0] + [len(v) for v, _ in parts[:-1]])
    return (np.concatenate([v for v, _ in parts]),
            np.concatenate([f + o for (_, f), o in zip(parts, offsets)]))


def _along_x(mesh: Mesh) -> Mesh:
    """Rotate -90 degrees about z: the +y axis becomes +x (a proper rotation keeps the winding)."""
    v = mesh[0]
    return np.stack([v[:, 1], -v[:, 0], v[:, 2]], axis=1), mesh[1]


# ---------------------------------------------------------------- primitive builders


def _grid_faces(nu: int, nv: int, wrap_u: bool = False, wrap_v: bool = False) -> np.ndarray:
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


def _revolve(radius: np.ndarray, height: np.ndarray, n_seg: int, bottom: float,
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
    faces = np.concatenate([_grid_faces(len(radius), n_seg, wrap_v=True), *fans])
    return np.concatenate([rings, poles]), faces


def _cylinder(radius: float, height: float, n_seg: int, n_side: int, n_cap: int) -> Mesh:
    """Closed cylinder about +y from y = 0 to ``height``; caps with n_cap rings, n_side bands."""
    rc = radius * np.arange(1, n_cap + 1) / n_cap
    r = np.concatenate([rc, np.full(n_side - 1, radius), rc[::-1]])
    h = np.concatenate([np.zeros(n_cap), height * np.arange(1, n_side) / n_side,
                        np.full(n_cap, height)])
    return _revolve(r, h, n_seg, 0.0, height)


def _box(extents: np.ndarray, divisions: np.ndarray, centre: np.ndarray | None = None) -> Mesh:
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
            f = _grid_faces(n[b] + 1, n[c] + 1)  # normal along b x c = +a
            keys.append(k)
            tris.append((f if side else f[:, ::-1]) + offset)
            offset += len(k)
    uniq, inverse = np.unique(np.concatenate(keys), axis=0, return_inverse=True)
    faces = inverse.reshape(-1)[np.concatenate(tris)]
    v = (uniq / n - 0.5) * np.asarray(extents, np.float64)
    return v + (0.0 if centre is None else np.asarray(centre, np.float64)), faces


def _box_h(extents: tuple[float, float, float], edge: float,
           centre: tuple[float, float, float] | None = None) -> Mesh:
    """A box whose lattice edges are about ``edge`` metres long (at least 2 per side)."""
    e = np.asarray(extents, np.float64)
    return _box(e, np.maximum(2, np.round(e / edge)).astype(np.int64),
                None if centre is None else np.asarray(centre))


def _unit_sphere(subdivisions: int = 3) -> Mesh:
    """Icosphere (642 vertices, or 162 at 2 subdivisions) of radius 1; it has vertices on all
    six axis directions."""
    import trimesh

    m = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.array(m.vertices, np.float64), np.array(m.faces, np.int64)


def _radii(rng: np.random.Generator, lo: float, hi: float) -> np.ndarray:
    """Three semi-axes (3,): the largest in [lo, hi], the others 0.35-1 of it, axes shuffled."""
    big = _u(rng, lo, hi)
    return rng.permutation(np.array([big, big * _u(rng, 0.35, 1), big * _u(rng, 0.35, 1)]))


# ---------------------------------------------------------------- solids


def _sphere(rng: np.random.Generator) -> Shape:
    r = _u(rng, 0.12, 0.7)
    v, f = _unit_sphere()
    return _finish("sphere", "solid", (v * r, f), {"radius": r})


def _ellipsoid(rng: np.random.Generator) -> Shape:
    radii = _radii(rng, 0.12, 0.7)
    v, f = _unit_sphere()
    return _finish("ellipsoid", "solid", (v * radii, f), {"radii": radii.tolist()})


def _superquadric(rng: np.random.Generator) -> Shape:
    """Barr superquadric (y is the polar axis), drawn radially so it stays star-shaped."""
    radii = _radii(rng, 0.12, 0.7)
    e1, e2 = _u(rng, 0.3, 3.0), _u(rng, 0.3, 3.0)  # polar and azimuthal exponents
    u, f = _unit_sphere()
    q = np.abs(u) / radii
    inside = (q[:, 0] ** (2 / e2) + q[:, 2] ** (2 / e2)) ** (e2 / e1) + q[:, 1] ** (2 / e1)
    # the implicit function is homogeneous of degree 2/e1: F(t u) = t^(2/e1) F(u)
    v = u * (inside ** (-e1 / 2))[:, None]
    return _finish("superquadric", "solid", (v, f),
                   {"radii": radii.tolist(), "e1": e1, "e2": e2})


def _blob(rng: np.random.Generator) -> Shape:
    """Sphere with smooth radial bumps: r(u) = exp(sum_k a_k exp((u.d_k - 1) / w_k^2))."""
    size = _u(rng, 0.25, 1.4)
    n = _i(rng, 3, 6)
    dirs = rng.normal(size=(n, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    amp, width = rng.uniform(-0.45, 0.55, n), rng.uniform(0.3, 0.7, n)
    u, f = _unit_sphere()
    log_r = (amp * np.exp((u @ dirs.T - 1) / width**2)).sum(axis=1)
    v = u * np.exp(log_r)[:, None]  # positive radius: star-shaped, so no self-intersection
    v *= size / np.ptp(v, axis=0).max()
    return _finish("blob", "solid", (v, f), {"size": size, "directions": dirs.tolist(),
                                             "amplitudes": amp.tolist(), "widths": width.tolist()})


def _torus(rng: np.random.Generator) -> Shape:
    """Torus lying flat (axis +y): 40 segments round the ring, 16 round the tube."""
    major = _u(rng, 0.1, 0.45)
    minor = major * _u(rng, 0.2, 0.6)
    nu, nv = 40, 16
    phi = 2 * np.pi * np.arange(nu)[:, None] / nu
    th = 2 * np.pi * np.arange(nv)[None, :] / nv
    ring = major + minor * np.cos(th)  # (1, nv) distance from the axis
    y = np.broadcast_to(minor * np.sin(th), (nu, nv))
    v = np.stack([ring * np.cos(phi), y, -ring * np.sin(phi)], axis=-1).reshape(-1, 3)
    return _finish("torus", "solid", (v, _grid_faces(nu, nv, True, True)),
                   {"major_radius": major, "minor_radius": minor})


def _capsule_mesh(r: float, length: float, n_seg: int = 24, n_hemi: int = 6) -> Mesh:
    """Capsule about +y: a cylinder from y = 0 to ``length`` with hemispherical ends."""
    n_side = int(np.clip(np.round(length / (2 * np.pi * r / n_seg)), 2, 30))
    low = -np.pi / 2 + np.pi / 2 * np.arange(1, n_hemi + 1) / n_hemi  # (-pi/2, 0]
    high = np.pi / 2 * np.arange(n_hemi) / n_hemi  # [0, pi/2)
    radius = np.concatenate([r * np.cos(low), np.full(n_side - 1, r), r * np.cos(high)])
    height = np.concatenate([r * np.sin(low), length * np.arange(1, n_side) / n_side,
                             length + r * np.sin(high)])
    return _revolve(radius, height, n_seg, -r, length + r)


def _capsule(rng: np.random.Generator) -> Shape:
    """Capsule lying along x: a cylinder of length ``length`` with hemispherical ends."""
    r = _u(rng, 0.07, 0.25)
    length = r * _u(rng, 0.8, 3.5)
    return _finish("capsule", "solid", _along_x(_capsule_mesh(r, length)),
                   {"radius": r, "length": length})


def _boxshape(rng: np.random.Generator) -> Shape:
    big = _u(rng, 0.25, 1.4)
    ext = rng.permutation(np.array([big, big * _u(rng, 0.3, 1), big * _u(rng, 0.3, 1)]))
    mesh = _box(ext, np.maximum(5, np.round(ext / (big / 14))).astype(np.int64))
    return _finish("box", "solid", mesh, {"extents": ext.tolist()})


def _chair(rng: np.random.Generator) -> Shape:
    """Seat box, four square legs reaching into the seat, and a back standing on the seat."""
    w, d, t = _u(rng, 0.35, 0.6), _u(rng, 0.35, 0.6), _u(rng, 0.03, 0.06)
    seat_h, leg, back_h = _u(rng, 0.35, 0.55), _u(rng, 0.03, 0.05), _u(rng, 0.3, 0.6)
    inset = _u(rng, 0.005, 0.03)  # > 0 so no leg face is coplanar with a seat face
    edge = 0.045
    parts = [_box_h((w, t, d), edge, (0, seat_h + t / 2, 0))]
    lx, lz, top = w / 2 - inset - leg / 2, d / 2 - inset - leg / 2, seat_h + 0.4 * t
    parts += [_box_h((leg, top, leg), edge, (sx * lx, top / 2, sz * lz))
              for sx in (-1, 1) for sz in (-1, 1)]
    y0, y1 = seat_h + 0.5 * t, seat_h + t + back_h
    parts.append(_box_h((w - inset, y1 - y0, t), edge, (0, (y0 + y1) / 2, -d / 2 + t / 2 + inset)))
    return _finish("chair", "solid", _concat(parts),
                   {"seat_width": w, "seat_depth": d, "thickness": t, "seat_height": seat_h,
                    "leg_width": leg, "back_height": back_h, "leg_inset": inset})


def _mushroom(rng: np.random.Generator) -> Shape:
    """Cap (upper half of a flattened ellipsoid, flat base) on a cylindrical stem."""
    a = _u(rng, 0.1, 0.4)  # cap radius
    c, rs, hs = a * _u(rng, 0.4, 0.9), a * _u(rng, 0.2, 0.4), _u(rng, 0.08, 0.3)
    n_seg, n_base, n_arc = 32, 4, 8
    t = np.pi / 2 * np.arange(1, n_arc) / n_arc
    radius = np.concatenate([a * np.arange(1, n_base + 1) / n_base, a * np.cos(t)])
    height = np.concatenate([np.full(n_base, hs), hs + c * np.sin(t)])
    cap = _revolve(radius, height, n_seg, hs, hs + c)
    stem = _cylinder(rs, hs + 0.3 * c, 16, max(3, int(np.round((hs + 0.3 * c) / (rs / 2)))), 2)
    return _finish("mushroom", "solid", _concat([cap, stem]),
                   {"cap_radius": a, "cap_height": c, "stem_radius": rs, "stem_height": hs})


def _table(rng: np.random.Generator) -> Shape:
    """Table top box on four cylindrical legs that reach into it."""
    w = _u(rng, 0.6, 1.4)
    d, t, height = w * _u(rng, 0.5, 1.0), _u(rng, 0.03, 0.06), _u(rng, 0.45, 0.8)
    leg_r, inset = _u(rng, 0.02, 0.04), _u(rng, 0.02, 0.08)
    parts = [_box_h((w, t, d), w / 14, (0, height - t / 2, 0))]
    leg_h = height - 0.6 * t
    lx, lz = w / 2 - inset - leg_r, d / 2 - inset - leg_r
    for sx in (-1, 1):
        for sz in (-1, 1):
            v, f = _cylinder(leg_r, leg_h, 12, 10, 1)
            parts.append((v + np.array([sx * lx, 0.0, sz * lz]), f))
    return _finish("table", "solid", _concat(parts),
                   {"width": w, "depth": d, "thickness": t, "height": height,
                    "leg_radius": leg_r, "leg_inset": inset})


# ---------------------------------------------------------------- sheets


def _sheet_res(rng: np.random.Generator, a: float, b: float) -> tuple[int, int]:
    """Vertices per side (12-30) for an a x b sheet, with near-square cells (the engine's cost
    grows with the count: 30 x 30 takes ~2 s per simulated second)."""
    n = _i(rng, 12, 30)
    if a >= b:
        return n, max(12, int(np.round(n * b / a)))
    return max(12, int(np.round(n * a / b))), n


def _sheet(rng: np.random.Generator) -> Shape:
    """Rectangular grid in the x-z plane at y = 0, normals +y."""
    w, d = _u(rng, 0.3, 1.5), _u(rng, 0.3, 1.5)
    nx, nz = _sheet_res(rng, w, d)
    x, z = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(-d / 2, d / 2, nz),
                       indexing="ij")
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    faces = _grid_faces(nx, nz)[:, ::-1]  # x cross z = -y, so reverse to face +y
    return _finish("sheet", "sheet", (v, faces), {"width": w, "depth": d, "nx": nx, "nz": nz})


def _flag(rng: np.random.Generator) -> Shape:
    """Vertical rectangular grid in the x-y plane (hanging), normals +z."""
    w, h = _u(rng, 0.3, 1.5), _u(rng, 0.3, 1.2)
    nx, ny = _sheet_res(rng, w, h)
    x, y = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(0, h, ny), indexing="ij")
    v = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    return _finish("flag", "sheet", (v, _grid_faces(nx, ny)),
                   {"width": w, "height": h, "nx": nx, "ny": ny})


def _ring_strip(inner: np.ndarray, outer: np.ndarray) -> list[list[int]]:
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


def _disc(rng: np.random.Generator) -> Shape:
    """Circular sheet at y = 0: a centre vertex and rings of 6k vertices, normals +y."""
    radius, n_rings = _u(rng, 0.15, 0.75), _i(rng, 8, 16)
    pts, tris = [np.zeros((1, 3))], []
    prev, start = np.zeros(1, np.int64), 1
    for k in range(1, n_rings + 1):
        m = 6 * k
        ang = 2 * np.pi * np.arange(m) / m
        rk = radius * k / n_rings
        pts.append(np.stack([rk * np.cos(ang), np.zeros(m), rk * np.sin(ang)], axis=1))
        ring = start + np.arange(m)
        if k == 1:  # a fan round the centre vertex
            tris += [[0, ring[j], ring[(j + 1) % m]] for j in range(m)]
        else:
            tris += _ring_strip(prev, ring)
        prev, start = ring, start + m
    faces = np.array(tris, np.int64)[:, ::-1]  # angles run x -> z, i.e. clockwise seen from +y
    return _finish("disc", "sheet", (np.concatenate(pts), faces),
                   {"radius": radius, "rings": n_rings})


# ---------------------------------------------------------------- beams


def _beam(rng: np.random.Generator) -> Shape:
    """Box long along x (clamped at -x by the simulator), about cubic lattice cells."""
    length, aspect = _u(rng, 0.4, 1.5), _u(rng, 6.0, 20.0)  # aspect: length / thickest side
    big = length / aspect
    height, width = (float(e) for e in rng.permutation([big, big * _u(rng, 0.5, 1.0)]))
    nx = max(8, int(np.round(3 * aspect)))  # nx + 1 >= 9 vertex rings along the length
    mesh = _box(np.array([length, height, width]), np.array([nx, 3, 3]))
    return _finish("beam", "beam", mesh,
                   {"length": length, "aspect": aspect, "width": width, "height": height})


def _rod(rng: np.random.Generator) -> Shape:
    """Closed cylinder along x with aspect length / diameter 8-30."""
    length, aspect = _u(rng, 0.4, 1.5), _u(rng, 8.0, 30.0)
    radius = length / aspect / 2
    n_side = int(np.clip(np.round(2 * aspect), 8, 60))
    mesh = _along_x(_cylinder(radius, length, 12, n_side, 2))
    return _finish("rod", "beam", mesh, {"length": length, "aspect": aspect, "radius": radius})


# ---------------------------------------------------------------- wider families
# Drawn for training only with ``neurok dataset generate --families wide``: more ways for a
# solid, a sheet or a beam to be shaped, so that a shape space learnt from them meets the test
# families (torus, mushroom, disc, rod) as one more shape rather than as a stranger.


def _bend(v: np.ndarray, radius: float) -> np.ndarray:
    """Bend points about the z axis: the x axis becomes an arc of ``radius`` curving up to +y,
    x = 0 staying put; a point's height y becomes its distance inward from the arc. The map's
    Jacobian determinant is (radius - y) / radius, so points below y = radius keep the winding."""
    theta, rho = v[:, 0] / radius, radius - v[:, 1]
    return np.stack([rho * np.sin(theta), radius - rho * np.cos(theta), v[:, 2]], axis=1)


def _lathe(rng: np.random.Generator) -> Shape:
    """Solid of revolution about +y with a smooth random profile and flat ends: vases, pears,
    gourds, cones and spools."""
    height = _u(rng, 0.2, 1.2)
    mean_r = height * _u(rng, 0.15, 0.6)
    k = np.arange(1, 4)[:, None]
    amp, phase = rng.uniform(-0.35, 0.35, (3, 1)) / k, rng.uniform(0, 2 * np.pi, (3, 1))
    taper = _u(rng, -0.7, 0.7)
    n_seg, n_side, n_cap = 24, 18, 3

    def profile(t: np.ndarray) -> np.ndarray:
        bumps = (amp * np.sin(np.pi * k * t[None] + phase)).sum(axis=0)
        return mean_r * np.maximum(1 + taper * (0.5 - t) + bumps, 0.2)

    t = np.arange(1, n_side) / n_side
    ends = profile(np.array([0.0, 1.0]))
    cap = np.arange(1, n_cap + 1) / n_cap
    radius = np.concatenate([ends[0] * cap, profile(t), ends[1] * cap[::-1]])
    h = np.concatenate([np.zeros(n_cap), height * t, np.full(n_cap, height)])
    return _finish("lathe", "solid", _revolve(radius, h, n_seg, 0.0, height),
                   {"height": height, "mean_radius": mean_r, "amplitudes": amp.ravel().tolist(),
                    "phases": phase.ravel().tolist(), "taper": taper})


def _banana(rng: np.random.Generator) -> Shape:
    """A capsule bent along an arc of 60-200 degrees: a banana, a horseshoe or an arch, lying
    on its side or standing on its ends."""
    r = _u(rng, 0.05, 0.18)
    length = r * _u(rng, 3.0, 8.0)
    angle = min(_u(rng, 1.0, 3.5), length / (1.6 * r))  # the axis' radius stays > 1.6 r
    mesh = _along_x(_capsule_mesh(r, length, n_seg=16, n_hemi=4))
    v = mesh[0] - np.array([length / 2, 0.0, 0.0])
    v = _bend(v, length / angle)
    standing = bool(rng.random() < 0.5)
    if not standing:  # bent in the ground plane: rotate +90 degrees about x
        v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
    else:  # an arch on its two ends: upside down, a half turn about x
        v = np.stack([v[:, 0], -v[:, 1], -v[:, 2]], axis=1)
    return _finish("banana", "solid", (v, mesh[1]),
                   {"radius": r, "length": length, "angle": angle, "standing": standing})


def _stack(rng: np.random.Generator) -> Shape:
    """Two or three ellipsoids stacked, each sunk into the one below: a snowman, a cairn."""
    u, f = _unit_sphere(2)
    parts, radii, y = [], [], 0.0
    width = _u(rng, 0.1, 0.35)
    for i in range(_i(rng, 2, 3)):
        r = np.array([width, width * _u(rng, 0.5, 1.1), width]) * _u(rng, 0.8, 1.2)
        shift = rng.uniform(-0.25, 0.25, 2) * width
        y += r[1] if i == 0 else r[1] * _u(rng, 0.55, 0.8)
        parts.append((u * r + np.array([shift[0], y, shift[1]]), f))
        radii.append(r.tolist())
        y += r[1] * _u(rng, 0.55, 0.8)
        width *= _u(rng, 0.55, 0.9)
    return _finish("stack", "solid", _concat(parts), {"radii": radii})


def _prism(rng: np.random.Generator) -> Shape:
    """A star-shaped outline with bumps and lobes extruded to a slab or a bar, standing or
    lying on its side."""
    size, n_seg, n_cap = _u(rng, 0.15, 0.5), 32, 3
    k = np.arange(2, 6)[:, None]
    amp, phase = rng.uniform(-0.3, 0.3, (4, 1)) / np.sqrt(k - 1), rng.uniform(0, 2 * np.pi, (4, 1))
    phi = 2 * np.pi * np.arange(n_seg) / n_seg
    outline = size * np.exp((amp * np.cos(k * phi[None] + phase)).sum(axis=0))
    thick = size * _u(rng, 0.3, 2.5)
    n_side = int(np.clip(np.round(thick / (size / 5)), 2, 14))
    cap = np.arange(1, n_cap + 1)[:, None] / n_cap
    radius = np.concatenate([outline * cap, np.repeat(outline[None], n_side - 1, axis=0),
                             outline * cap[::-1]])
    h = np.concatenate([np.zeros(n_cap), thick * np.arange(1, n_side) / n_side,
                        np.full(n_cap, thick)])
    v, f = _revolve(radius, h, n_seg, 0.0, thick)
    lying = bool(rng.random() < 0.5)
    if lying:  # on its side: -90 degrees about x
        v = np.stack([v[:, 0], v[:, 2], -v[:, 1]], axis=1)
    return _finish("prism", "solid", (v, f),
                   {"size": size, "thickness": thick, "amplitudes": amp.ravel().tolist(),
                    "phases": phase.ravel().tolist(), "lying": lying})


def _grid_sheet(x: np.ndarray, z: np.ndarray, keep: np.ndarray | None = None) -> Mesh:
    """A sheet in the x-z plane from grid coordinates x, z (nx, nz), normals +y; ``keep``
    (nx - 1, nz - 1) keeps only those cells, and the vertices they use."""
    nx, nz = x.shape
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    faces = _grid_faces(nx, nz)[:, ::-1]
    if keep is not None:  # _grid_faces lists each cell's first triangles, then its second
        faces = faces[np.tile(keep.ravel(), 2)]
        used, faces = np.unique(faces, return_inverse=True)
        v, faces = v[used], faces.reshape(-1, 3)
    return v, faces


def _pennant(rng: np.random.Generator) -> Shape:
    """A tapering sheet in the x-z plane: full depth at -x, a fraction of it at +x."""
    w, d = _u(rng, 0.4, 1.5), _u(rng, 0.25, 1.0)
    tip = _u(rng, 0.15, 0.6)
    nx, nz = _sheet_res(rng, w, d)
    s, t = np.meshgrid(np.linspace(0, 1, nx), np.linspace(-0.5, 0.5, nz), indexing="ij")
    mesh = _grid_sheet(w * (s - 0.5), d * t * (1 - (1 - tip) * s))
    return _finish("pennant", "sheet", mesh, {"width": w, "depth": d, "tip": tip, "nx": nx,
                                              "nz": nz})


CUTOUTS = ("L", "T", "U", "plus")


def _cutout(rng: np.random.Generator) -> Shape:
    """A rectangular sheet with rectangles cut from it along grid lines: an L, a T, a U or a
    plus sign, in the x-z plane."""
    w, d = _u(rng, 0.4, 1.5), _u(rng, 0.4, 1.5)
    nx, nz = (max(n, 14) for n in _sheet_res(rng, w, d))
    kind = str(rng.choice(CUTOUTS))
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(nz - 1), indexing="ij")
    a, b = (int(round(f * (n - 1))) for f, n in zip(rng.uniform(0.3, 0.45, 2), (nx, nz)))
    if kind == "L":
        cut = (i >= nx - 1 - a) & (j >= nz - 1 - b)
    elif kind == "T":
        cut = (j < b) & ((i < a // 2 + 1) | (i >= nx - 1 - a // 2 - 1))
    elif kind == "U":
        cut = (j >= nz - 1 - b) & (i >= a // 2 + 1) & (i < nx - 1 - a // 2 - 1)
    else:
        ci, cj = np.minimum(i, nx - 2 - i), np.minimum(j, nz - 2 - j)
        cut = (ci < a // 2 + 1) & (cj < b // 2 + 1)
    x, z = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(-d / 2, d / 2, nz),
                       indexing="ij")
    return _finish("cutout", "sheet", _grid_sheet(x, z, ~cut),
                   {"width": w, "depth": d, "cut": kind, "nx": nx, "nz": nz})


def _curl(rng: np.random.Generator) -> Shape:
    """A sheet rolled about x into an arc of 60-240 degrees (a gutter, a half pipe), normals
    towards the arc's axis."""
    w, d = _u(rng, 0.3, 1.2), _u(rng, 0.3, 1.2)
    angle = _u(rng, 1.0, 4.2)
    nx, nz = _sheet_res(rng, w, d)
    x, s = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(-d / 2, d / 2, nz),
                       indexing="ij")
    v, f = _grid_sheet(x, s)
    v = _bend(v[:, [2, 1, 0]], d / angle)[:, [2, 1, 0]]  # roll about x: swap x and z round it
    return _finish("curl", "sheet", (v, f), {"width": w, "depth": d, "angle": angle,
                                             "nx": nx, "nz": nz})


def _taper(rng: np.random.Generator) -> Shape:
    """A box beam whose section shrinks linearly to a fraction of itself at the free end."""
    shape = _beam(rng)
    ratio = _u(rng, 0.3, 0.9)
    v = shape.vertices.copy()
    centre = np.array([0.0, v[:, 1].max() / 2, 0.0])
    s = (v[:, 0] - v[:, 0].min()) / np.ptp(v[:, 0])
    v[:, 1:] = centre[1:] + (v[:, 1:] - centre[1:]) * (1 - (1 - ratio) * s)[:, None]
    return _finish("taper", "beam", (v, shape.faces), {**shape.params, "ratio": ratio})


def _arc(rng: np.random.Generator) -> Shape:
    """A box beam bent along an arc of 15-50 degrees, up or sideways."""
    shape = _beam(rng)
    angle = _u(rng, 0.26, 0.87)
    length = shape.params["length"]
    v = shape.vertices - np.array([0.0, shape.params["height"] / 2, 0.0])
    v = _bend(v, length / angle)
    sideways = bool(rng.random() < 0.5)
    if sideways:  # bent in the x-z plane: +90 degrees about x
        v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
    return _finish("arc", "beam", (v, shape.faces),
                   {**shape.params, "angle": angle, "sideways": sideways})


# ---------------------------------------------------------------- public API


def make_shape(family: str, rng: np.random.Generator) -> Shape:
    """Draw a shape of the named family; the same generator state gives the same shape."""
    if family not in FAMILIES:
        raise UsageError(f"unknown shape family {family!r}; choose one of: {', '.join(FAMILIES)}")
    if not isinstance(rng, np.random.Generator):
        raise UsageError(f"make_shape needs a numpy.random.Generator, got {type(rng).__name__}; "
                         "pass numpy.random.default_rng(seed)")
    return FAMILIES[family](rng)


def shape_from_mesh(vertices: np.ndarray, faces: np.ndarray, *, family: str = "user",
                    kind: str = "solid", size: float | None = None) -> Shape:
    """Normalise a user mesh into a :class:`Shape` (+Y up as given, vertices kept in order).

    vertices: (N, 3) metres; faces: (F, 3) integer indices. The mesh is scaled about the origin
    so its largest bbox extent is ``size`` metres (when given), then moved so its bbox is centred
    in x and z and its lowest point is at y = 0.
    """
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0 or not np.isfinite(v).all():
        raise UsageError(f"vertices must be a non-empty finite (N, 3) array, got shape {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise UsageError(f"faces must be an (F, 3) integer array, got {f.dtype} {f.shape}")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise UsageError(f"face indices must lie in [0, {len(v) - 1}]")
    if kind not in KINDS:
        raise UsageError(f"unknown shape kind {kind!r}; choose one of: {', '.join(KINDS)}")
    params: dict = {}
    if size is not None:
        extent = float(np.ptp(v, axis=0).max())
        if not (np.isfinite(size) and size > 0) or extent <= 0:
            raise UsageError(f"cannot scale to size {size!r}: need size > 0 and a mesh of "
                             f"non-zero extent (its extent is {extent})")
        v = v * (size / extent)
        params = {"size": float(size), "scale": float(size / extent)}
    return _finish(family, kind, (v, f), params)


def mesh_stats(shape: Shape) -> dict:
    """Counts and size of a shape, JSON-serialisable.

    Returns vertices, faces, components (connected parts), extent (3 floats, metres),
    watertight (every directed edge matched by its reverse exactly once: closed and consistently
    wound) and volume (m^3, sum of the parts' signed volumes, overlaps counted twice; None for
    sheets).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    v, f = shape.vertices, shape.faces
    n = len(v)
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    code = edges[:, 0] * n + edges[:, 1]
    watertight = bool(len(np.unique(code)) == len(code)
                      and np.isin(edges[:, 1] * n + edges[:, 0], code).all())
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    components = int(connected_components(graph, directed=False)[0])
    volume = None
    if shape.kind != "sheet":
        tri = v[f]
        volume = float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6)
    return {"vertices": int(n), "faces": int(len(f)), "components": components,
            "extent": np.ptp(v, axis=0).tolist(), "watertight": watertight, "volume": volume}


# name -> builder(rng) -> Shape
FAMILIES: dict[str, Callable[[np.random.Generator], Shape]] = {
    "sphere": _sphere,
    "ellipsoid": _ellipsoid,
    "superquadric": _superquadric,
    "torus": _torus,
    "blob": _blob,
    "capsule": _capsule,
    "box": _boxshape,
    "chair": _chair,
    "mushroom": _mushroom,
    "table": _table,
    "sheet": _sheet,
    "disc": _disc,
    "flag": _flag,
    "beam": _beam,
    "rod": _rod,
    "lathe": _lathe,
    "banana": _banana,
    "stack": _stack,
    "prism": _prism,
    "pennant": _pennant,
    "cutout": _cutout,
    "curl": _curl,
    "taper": _taper,
    "arc": _arc,
}

# simulator category -> the families it draws from
CATEGORY_FAMILIES: dict[str, tuple[str, ...]] = {
    "soft": ("sphere", "ellipsoid", "superquadric", "torus", "blob", "capsule", "box", "chair",
             "mushroom", "table"),
    "cloth": ("sheet", "disc", "flag"),
    "beam": ("beam", "rod"),
}

# simulator category -> the families that ``--families wide`` adds to its training draws
WIDE_FAMILIES: dict[str, tuple[str, ...]] = {
    "soft": ("lathe", "banana", "stack", "prism"),
    "cloth": ("pennant", "cutout", "curl"),
    "beam": ("taper", "arc"),
}
