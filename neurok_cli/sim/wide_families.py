"""The wider shape families, drawn for training only with ``neurok dataset generate --families
wide``: more ways for a solid, a sheet or a beam to be shaped, so that a shape space learnt
from them meets the test families (torus, mushroom, disc, rod) as one more shape rather than
as a stranger. Each is a function ``rng -> Shape``, as in ``sim/families.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .families import BASE_FAMILIES
from .meshes import (
    Shape,
    along_x,
    bend,
    capsule_mesh,
    concat,
    finish,
    grid_sheet,
    integer,
    revolve,
    sheet_res,
    uniform,
    unit_sphere,
)


def _lathe(rng: np.random.Generator) -> Shape:
    """Solid of revolution about +y with a smooth random profile and flat ends: vases, pears,
    gourds, cones and spools."""
    height = uniform(rng, 0.2, 1.2)
    mean_r = height * uniform(rng, 0.15, 0.6)
    k = np.arange(1, 4)[:, None]
    amp, phase = rng.uniform(-0.35, 0.35, (3, 1)) / k, rng.uniform(0, 2 * np.pi, (3, 1))
    taper = uniform(rng, -0.7, 0.7)
    n_seg, n_side, n_cap = 24, 18, 3

    def profile(t: np.ndarray) -> np.ndarray:
        bumps = (amp * np.sin(np.pi * k * t[None] + phase)).sum(axis=0)
        return mean_r * np.maximum(1 + taper * (0.5 - t) + bumps, 0.2)

    t = np.arange(1, n_side) / n_side
    ends = profile(np.array([0.0, 1.0]))
    cap = np.arange(1, n_cap + 1) / n_cap
    radius = np.concatenate([ends[0] * cap, profile(t), ends[1] * cap[::-1]])
    h = np.concatenate([np.zeros(n_cap), height * t, np.full(n_cap, height)])
    return finish("lathe", "solid", revolve(radius, h, n_seg, 0.0, height),
                   {"height": height, "mean_radius": mean_r, "amplitudes": amp.ravel().tolist(),
                    "phases": phase.ravel().tolist(), "taper": taper})


def _banana(rng: np.random.Generator) -> Shape:
    """A capsule bent along an arc of 60-200 degrees: a banana, a horseshoe or an arch, lying
    on its side or standing on its ends."""
    r = uniform(rng, 0.05, 0.18)
    length = r * uniform(rng, 3.0, 8.0)
    angle = min(uniform(rng, 1.0, 3.5), length / (1.6 * r))  # the axis' radius stays > 1.6 r
    mesh = along_x(capsule_mesh(r, length, n_seg=16, n_hemi=4))
    v = mesh[0] - np.array([length / 2, 0.0, 0.0])
    v = bend(v, length / angle)
    standing = bool(rng.random() < 0.5)
    if not standing:  # bent in the ground plane: rotate +90 degrees about x
        v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
    else:  # an arch on its two ends: upside down, a half turn about x
        v = np.stack([v[:, 0], -v[:, 1], -v[:, 2]], axis=1)
    return finish("banana", "solid", (v, mesh[1]),
                   {"radius": r, "length": length, "angle": angle, "standing": standing})


def _stack(rng: np.random.Generator) -> Shape:
    """Two or three ellipsoids stacked, each sunk into the one below: a snowman, a cairn."""
    u, f = unit_sphere(2)
    parts, radii, y = [], [], 0.0
    width = uniform(rng, 0.1, 0.35)
    for i in range(integer(rng, 2, 3)):
        r = np.array([width, width * uniform(rng, 0.5, 1.1), width]) * uniform(rng, 0.8, 1.2)
        shift = rng.uniform(-0.25, 0.25, 2) * width
        y += r[1] if i == 0 else r[1] * uniform(rng, 0.55, 0.8)
        parts.append((u * r + np.array([shift[0], y, shift[1]]), f))
        radii.append(r.tolist())
        y += r[1] * uniform(rng, 0.55, 0.8)
        width *= uniform(rng, 0.55, 0.9)
    return finish("stack", "solid", concat(parts), {"radii": radii})


def _prism(rng: np.random.Generator) -> Shape:
    """A star-shaped outline with bumps and lobes extruded to a slab or a bar, standing or
    lying on its side."""
    size, n_seg, n_cap = uniform(rng, 0.15, 0.5), 32, 3
    k = np.arange(2, 6)[:, None]
    amp, phase = rng.uniform(-0.3, 0.3, (4, 1)) / np.sqrt(k - 1), rng.uniform(0, 2 * np.pi, (4, 1))
    phi = 2 * np.pi * np.arange(n_seg) / n_seg
    outline = size * np.exp((amp * np.cos(k * phi[None] + phase)).sum(axis=0))
    thick = size * uniform(rng, 0.3, 2.5)
    n_side = int(np.clip(np.round(thick / (size / 5)), 2, 14))
    cap = np.arange(1, n_cap + 1)[:, None] / n_cap
    radius = np.concatenate([outline * cap, np.repeat(outline[None], n_side - 1, axis=0),
                             outline * cap[::-1]])
    h = np.concatenate([np.zeros(n_cap), thick * np.arange(1, n_side) / n_side,
                        np.full(n_cap, thick)])
    v, f = revolve(radius, h, n_seg, 0.0, thick)
    lying = bool(rng.random() < 0.5)
    if lying:  # on its side: -90 degrees about x
        v = np.stack([v[:, 0], v[:, 2], -v[:, 1]], axis=1)
    return finish("prism", "solid", (v, f),
                   {"size": size, "thickness": thick, "amplitudes": amp.ravel().tolist(),
                    "phases": phase.ravel().tolist(), "lying": lying})


def _pennant(rng: np.random.Generator) -> Shape:
    """A tapering sheet in the x-z plane: full depth at -x, a fraction of it at +x."""
    w, d = uniform(rng, 0.4, 1.5), uniform(rng, 0.25, 1.0)
    tip = uniform(rng, 0.15, 0.6)
    nx, nz = sheet_res(rng, w, d)
    s, t = np.meshgrid(np.linspace(0, 1, nx), np.linspace(-0.5, 0.5, nz), indexing="ij")
    mesh = grid_sheet(w * (s - 0.5), d * t * (1 - (1 - tip) * s))
    return finish("pennant", "sheet", mesh, {"width": w, "depth": d, "tip": tip, "nx": nx,
                                              "nz": nz})


CUTOUTS = ("L", "T", "U", "plus")


def _cutout(rng: np.random.Generator) -> Shape:
    """A rectangular sheet with rectangles cut from it along grid lines: an L, a T, a U or a
    plus sign, in the x-z plane."""
    w, d = uniform(rng, 0.4, 1.5), uniform(rng, 0.4, 1.5)
    nx, nz = (max(n, 14) for n in sheet_res(rng, w, d))
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
    return finish("cutout", "sheet", grid_sheet(x, z, ~cut),
                   {"width": w, "depth": d, "cut": kind, "nx": nx, "nz": nz})


def _curl(rng: np.random.Generator) -> Shape:
    """A sheet rolled about x into an arc of 60-240 degrees (a gutter, a half pipe), normals
    towards the arc's axis."""
    w, d = uniform(rng, 0.3, 1.2), uniform(rng, 0.3, 1.2)
    angle = uniform(rng, 1.0, 4.2)
    nx, nz = sheet_res(rng, w, d)
    x, s = np.meshgrid(np.linspace(-w / 2, w / 2, nx), np.linspace(-d / 2, d / 2, nz),
                       indexing="ij")
    v, f = grid_sheet(x, s)
    v = bend(v[:, [2, 1, 0]], d / angle)[:, [2, 1, 0]]  # roll about x: swap x and z round it
    return finish("curl", "sheet", (v, f), {"width": w, "depth": d, "angle": angle,
                                             "nx": nx, "nz": nz})


def _taper(rng: np.random.Generator) -> Shape:
    """A box beam whose section shrinks linearly to a fraction of itself at the free end."""
    shape = BASE_FAMILIES["beam"](rng)
    ratio = uniform(rng, 0.3, 0.9)
    v = shape.vertices.copy()
    centre = np.array([0.0, v[:, 1].max() / 2, 0.0])
    s = (v[:, 0] - v[:, 0].min()) / np.ptp(v[:, 0])
    v[:, 1:] = centre[1:] + (v[:, 1:] - centre[1:]) * (1 - (1 - ratio) * s)[:, None]
    return finish("taper", "beam", (v, shape.faces), {**shape.params, "ratio": ratio})


def _arc(rng: np.random.Generator) -> Shape:
    """A box beam bent along an arc of 15-50 degrees, up or sideways."""
    shape = BASE_FAMILIES["beam"](rng)
    angle = uniform(rng, 0.26, 0.87)
    length = shape.params["length"]
    v = shape.vertices - np.array([0.0, shape.params["height"] / 2, 0.0])
    v = bend(v, length / angle)
    sideways = bool(rng.random() < 0.5)
    if sideways:  # bent in the x-z plane: +90 degrees about x
        v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
    return finish("arc", "beam", (v, shape.faces),
                   {**shape.params, "angle": angle, "sideways": sideways})


# name -> builder(rng) -> Shape, the families that ``--families wide`` adds
WIDER_FAMILIES: dict[str, Callable[[np.random.Generator], Shape]] = {
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
