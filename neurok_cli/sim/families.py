"""The shape families of the corpus (``neurok dataset generate``): soft solids, cloth sheets
and beams, each a function ``rng -> Shape`` that draws its parameters from the given
``numpy.random.Generator`` only, so a seed fixes the shape. Composites (chair, mushroom,
table) are closed parts concatenated into one mesh, each part watertight on its own (parts
overlap but share no vertices). Every shape ends centred in x and z with min y = 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .meshes import (
    Shape,
    along_x,
    box,
    box_h,
    capsule_mesh,
    concat,
    cylinder,
    finish,
    grid_faces,
    integer,
    revolve,
    ring_strip,
    sheet_res,
    uniform,
    unit_sphere,
)

# ---------------------------------------------------------------- solids


def _radii(rng: np.random.Generator, lo: float, hi: float) -> np.ndarray:
    """Three semi-axes (3,): the largest in [lo, hi], the others 0.35-1 of it, axes shuffled."""
    big = uniform(rng, lo, hi)
    return rng.permutation(np.array([big, big * uniform(rng, 0.35, 1),
                                     big * uniform(rng, 0.35, 1)]))


def _sphere(rng: np.random.Generator) -> Shape:
    r = uniform(rng, 0.12, 0.7)
    v, f = unit_sphere()
    return finish("sphere", "solid", (v * r, f), {"radius": r})


def _ellipsoid(rng: np.random.Generator) -> Shape:
    radii = _radii(rng, 0.12, 0.7)
    v, f = unit_sphere()
    return finish("ellipsoid", "solid", (v * radii, f), {"radii": radii.tolist()})


def _superquadric(rng: np.random.Generator) -> Shape:
    """Barr superquadric (y is the polar axis), drawn radially so it stays star-shaped."""
    radii = _radii(rng, 0.12, 0.7)
    e1, e2 = uniform(rng, 0.3, 3.0), uniform(rng, 0.3, 3.0)  # polar and azimuthal exponents
    u, f = unit_sphere()
    q = np.abs(u) / radii
    inside = (q[:, 0] ** (2 / e2) + q[:, 2] ** (2 / e2)) ** (e2 / e1) + q[:, 1] ** (2 / e1)
    # the implicit function is homogeneous of degree 2/e1: F(t u) = t^(2/e1) F(u)
    v = u * (inside ** (-e1 / 2))[:, None]
    return finish("superquadric", "solid", (v, f),
                   {"radii": radii.tolist(), "e1": e1, "e2": e2})


def _blob(rng: np.random.Generator) -> Shape:
    """Sphere with smooth radial bumps: r(u) = exp(sum_k a_k exp((u.d_k - 1) / w_k^2))."""
    size = uniform(rng, 0.25, 1.4)
    n = integer(rng, 3, 6)
    dirs = rng.normal(size=(n, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    amp, width = rng.uniform(-0.45, 0.55, n), rng.uniform(0.3, 0.7, n)
    u, f = unit_sphere()
    log_r = (amp * np.exp((u @ dirs.T - 1) / width**2)).sum(axis=1)
    v = u * np.exp(log_r)[:, None]  # positive radius: star-shaped, so no self-intersection
    v *= size / np.ptp(v, axis=0).max()
    return finish("blob", "solid", (v, f), {"size": size, "directions": dirs.tolist(),
                                             "amplitudes": amp.tolist(), "widths": width.tolist()})


def _torus(rng: np.random.Generator) -> Shape:
    """Torus lying flat (axis +y): 40 segments round the ring, 16 round the tube."""
    major = uniform(rng, 0.1, 0.45)
    minor = major * uniform(rng, 0.2, 0.6)
    nu, nv = 40, 16
    phi = 2 * np.pi * np.arange(nu)[:, None] / nu
    th = 2 * np.pi * np.arange(nv)[None, :] / nv
    ring = major + minor * np.cos(th)  # (1, nv) distance from the axis
    y = np.broadcast_to(minor * np.sin(th), (nu, nv))
    v = np.stack([ring * np.cos(phi), y, -ring * np.sin(phi)], axis=-1).reshape(-1, 3)
    return finish("torus", "solid", (v, grid_faces(nu, nv, True, True)),
                   {"major_radius": major, "minor_radius": minor})


def _capsule(rng: np.random.Generator) -> Shape:
    """Capsule lying along x: a cylinder of length ``length`` with hemispherical ends."""
    r = uniform(rng, 0.07, 0.25)
    length = r * uniform(rng, 0.8, 3.5)
    return finish("capsule", "solid", along_x(capsule_mesh(r, length)),
                   {"radius": r, "length": length})


def _boxshape(rng: np.random.Generator) -> Shape:
    big = uniform(rng, 0.25, 1.4)
    ext = rng.permutation(np.array([big, big * uniform(rng, 0.3, 1), big * uniform(rng, 0.3, 1)]))
    mesh = box(ext, np.maximum(5, np.round(ext / (big / 14))).astype(np.int64))
    return finish("box", "solid", mesh, {"extents": ext.tolist()})


def _chair(rng: np.random.Generator) -> Shape:
    """Seat box, four square legs reaching into the seat, and a back standing on the seat."""
    w, d, t = uniform(rng, 0.35, 0.6), uniform(rng, 0.35, 0.6), uniform(rng, 0.03, 0.06)
    seat_h, leg, back_h = uniform(rng, 0.35, 0.55), uniform(rng, 0.03, 0.05), uniform(rng, 0.3, 0.6)
    inset = uniform(rng, 0.005, 0.03)  # > 0 so no leg face is coplanar with a seat face
    edge = 0.045
    parts = [box_h((w, t, d), edge, (0, seat_h + t / 2, 0))]
    lx, lz, top = w / 2 - inset - leg / 2, d / 2 - inset - leg / 2, seat_h + 0.4 * t
    parts += [box_h((leg, top, leg), edge, (sx * lx, top / 2, sz * lz))
              for sx in (-1, 1) for sz in (-1, 1)]
    y0, y1 = seat_h + 0.5 * t, seat_h + t + back_h
    parts.append(box_h((w - inset, y1 - y0, t), edge, (0, (y0 + y1) / 2, -d / 2 + t / 2 + inset)))
    return finish("chair", "solid", concat(parts),
                   {"seat_width": w, "seat_depth": d, "thickness": t, "seat_height": seat_h,
                    "leg_width": leg, "back_height": back_h, "leg_inset": inset})


def _mushroom(rng: np.random.Generator) -> Shape:
    """Cap (upper half of a flattened ellipsoid, flat base) on a cylindrical stem."""
    a = uniform(rng, 0.1, 0.4)  # cap radius
    c, rs, hs = a * uniform(rng, 0.4, 0.9), a * uniform(rng, 0.2, 0.4), uniform(rng, 0.08, 0.3)
    n_seg, n_base, n_arc = 32, 4, 8
    t = np.pi / 2 * np.arange(1, n_arc) / n_arc
    radius = np.concatenate([a * np.arange(1, n_base + 1) / n_base, a * np.cos(t)])
    height = np.concatenate([np.full(n_base, hs), hs + c * np.sin(t)])
    cap = revolve(radius, height, n_seg, hs, hs + c)
    stem = cylinder(rs, hs + 0.3 * c, 16, max(3, int(np.round((hs + 0.3 * c) / (rs / 2)))), 2)
    return finish("mushroom", "solid", concat([cap, stem]),
                   {"cap_radius": a, "cap_height": c, "stem_radius": rs, "stem_height": hs})


def _table(rng: np.random.Generator) -> Shape:
    """Table top box on four cylindrical legs that reach into it."""
    w = uniform(rng, 0.6, 1.4)
    d, t, height = w * uniform(rng, 0.5, 1.0), uniform(rng, 0.03, 0.06), uniform(rng, 0.45, 0.8)
    leg_r, inset = uniform(rng, 0.02, 0.04), uniform(rng, 0.02, 0.08)
    parts = [box_h((w, t, d), w / 14, (0, height - t / 2, 0))]
    leg_h = height - 0.6 * t
    lx, lz = w / 2 - inset - leg_r, d / 2 - inset - leg_r
    for sx in (-1, 1):
        for sz in (-1, 1):
            v, f = cylinder(leg_r, leg_h, 12, 10, 1)
            parts.append((v + np.array([sx * lx, 0.0, sz * lz]), f))
    return finish("table", "solid", concat(parts),
                   {"width": w, "depth": d, "thickness": t, "height": height,
                    "leg_radius": leg_r, "leg_inset": inset})


# ---------------------------------------------------------------- sheets


def _sheet(rng: np.random.Generator) -> Shape:
    """Rectangular grid in the x-z plane at y = 0, normals +y."""
    w, d = uniform(rng, 0.3, 1.5), uniform(rng, 0.3, 1.5)
    nx, nz = sheet_res(rng, w, d)
    x, z = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(-d / 2, d / 2, nz),
                       indexing="ij")
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    faces = grid_faces(nx, nz)[:, ::-1]  # x cross z = -y, so reverse to face +y
    return finish("sheet", "sheet", (v, faces), {"width": w, "depth": d, "nx": nx, "nz": nz})


def _flag(rng: np.random.Generator) -> Shape:
    """Vertical rectangular grid in the x-y plane (hanging), normals +z."""
    w, h = uniform(rng, 0.3, 1.5), uniform(rng, 0.3, 1.2)
    nx, ny = sheet_res(rng, w, h)
    x, y = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(0, h, ny), indexing="ij")
    v = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    return finish("flag", "sheet", (v, grid_faces(nx, ny)),
                   {"width": w, "height": h, "nx": nx, "ny": ny})


def _disc(rng: np.random.Generator) -> Shape:
    """Circular sheet at y = 0: a centre vertex and rings of 6k vertices, normals +y."""
    radius, n_rings = uniform(rng, 0.15, 0.75), integer(rng, 8, 16)
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
            tris += ring_strip(prev, ring)
        prev, start = ring, start + m
    faces = np.array(tris, np.int64)[:, ::-1]  # angles run x -> z, i.e. clockwise seen from +y
    return finish("disc", "sheet", (np.concatenate(pts), faces),
                   {"radius": radius, "rings": n_rings})


# ---------------------------------------------------------------- beams


def _beam(rng: np.random.Generator) -> Shape:
    """Box long along x (clamped at -x by the simulator), about cubic lattice cells."""
    # aspect: length / thickest side
    length, aspect = uniform(rng, 0.4, 1.5), uniform(rng, 6.0, 20.0)
    big = length / aspect
    height, width = (float(e) for e in rng.permutation([big, big * uniform(rng, 0.5, 1.0)]))
    nx = max(8, int(np.round(3 * aspect)))  # nx + 1 >= 9 vertex rings along the length
    mesh = box(np.array([length, height, width]), np.array([nx, 3, 3]))
    return finish("beam", "beam", mesh,
                   {"length": length, "aspect": aspect, "width": width, "height": height})


def _rod(rng: np.random.Generator) -> Shape:
    """Closed cylinder along x with aspect length / diameter 8-30."""
    length, aspect = uniform(rng, 0.4, 1.5), uniform(rng, 8.0, 30.0)
    radius = length / aspect / 2
    n_side = int(np.clip(np.round(2 * aspect), 8, 60))
    mesh = along_x(cylinder(radius, length, 12, n_side, 2))
    return finish("rod", "beam", mesh, {"length": length, "aspect": aspect, "radius": radius})


# name -> builder(rng) -> Shape, the families of corpus-v1
BASE_FAMILIES: dict[str, Callable[[np.random.Generator], Shape]] = {
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
}
