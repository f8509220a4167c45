"""An object's body for the latent dynamics, from its surface: what kind of body it is
(sheet, beam or soft), how its pins hold, a slender body's centreline, and the small
geometry these need (vertex areas and normals, open boundaries, nearest points). Pure
NumPy, plus the tensors the dynamics take (model/dynamics/bodies.py); ``motion.latent_motion``
assembles them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ...data.geometry import face_areas, face_normals
from ...errors import UsageError
from ...model.dynamics.bodies import Centreline
from ...scenario.category import SHEET_HOLES, auto_category, hole_share, open_boundary  # noqa: F401
from ...scenario.conditions import select_region

BEAM_SLICES = 8  # a beam's centreline: slices along its axis (see beam_centreline) ...
SLICE_POINTS = 8  # ... of at least this many dynamics points each
GRAPH_SHARE = 0.5  # ... and its spring graph's weight (see beam_centreline)
PIN_JOINT = 0.12  # a sheet's pins narrower than this x its size across an axis: a joint
PIN_CURVE = 0.25  # ... and an edge strip that curves within this x its size of its line: a hinge


def vertex_normals(v: np.ndarray, faces: np.ndarray) -> np.ndarray:
    n = face_normals(v, faces) * face_areas(v, faces)[:, None]
    out = np.zeros_like(v)
    for c in range(3):
        np.add.at(out, faces[:, c], n)
    length = np.linalg.norm(out, axis=1, keepdims=True)
    return np.where(length > 0, out / np.maximum(length, 1e-300), [0.0, 1.0, 0.0])


def knn_edges(points: np.ndarray, k: int) -> np.ndarray:
    d = np.linalg.norm(points[:, None] - points[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1)[:, : min(k, len(points) - 1)]
    pairs = {(min(i, j), max(i, j)) for i in range(len(points)) for j in near[i]}
    return np.array(sorted(pairs), np.int64).reshape(-1, 2)


def beam_centreline(rest: np.ndarray, mass: np.ndarray, young: float, volume: float,
                    edges: np.ndarray, k_edge: float) -> Centreline | None:
    """The Euler–Bernoulli centreline of a slender body from its dynamics points rest (Q, 3),
    masses (Q,) and spring graph (edges (E, 2), k_edge each), or None when there are too few
    points for three slices (or no length).

    BEAM_SLICES slices of equal point count along the principal axis (at least SLICE_POINTS
    points each): few, long slices, since the turn at a centre is a difference of
    differences, and the decoder's small errors across a thin section, read over short
    slices, would outweigh the bend itself. Cross-section area A = volume / length; second
    moment I = A x the points' mean square distance from their slice's centre across the
    axis / 4 (the mean of the two axes, halved: exact for the surface points of a round or
    square section standing for the solid one).

    Two weights keep the decoder's errors from becoming stiffness the body does not have.
    The stretch springs are weighted by A / length² (1 / aspect², the bending's scale): a
    decoded bend carries small axial errors that a slender body's stretch stiffness would
    amplify. And the graph still reads the shear inside each slice of a bend whose sections
    move sideways without turning: it is weighted so that such a bend, w(s) = s² across the
    axis, costs it GRAPH_SHARE of what the centreline charges for the same bend."""
    n = min(BEAM_SLICES, len(rest) // SLICE_POINTS)
    if n < 3:
        return None
    centred = rest - (mass[:, None] * rest).sum(0) / mass.sum()
    axes = np.linalg.svd(centred * np.sqrt(mass)[:, None], full_matrices=False)[2]
    s = centred @ axes[0]
    length = float(np.ptp(s))
    if not length > 0:
        return None
    area = volume / length
    slice_of = np.empty(len(rest), np.int64)
    for j, members in enumerate(np.array_split(np.argsort(s, kind="stable"), n)):
        slice_of[members] = j
    weight = np.zeros((n, len(rest)))
    weight[slice_of, np.arange(len(rest))] = mass
    average = weight / weight.sum(1, keepdims=True)  # (n, Q)
    centres = average @ rest
    across = rest - centres[slice_of]
    across = across - np.outer(across @ axes[0], axes[0])
    second = area * float((across**2).sum(1).mean()) / 4.0
    h = np.linalg.norm(np.diff(centres, axis=0), axis=1)  # (n - 1,)
    bending = young * second / (0.5 * (h[1:] + h[:-1]))
    # the test bend: every point moved along the second axis by w(s) = s^2 (s in lengths)
    w = ((s - s.min()) / length) ** 2
    slope = np.diff(average @ w) / h  # (n - 1,)
    e_bend = 0.5 * float((bending * np.diff(slope) ** 2).sum())
    left = w - (average @ w)[slice_of]  # what the slices' sideways moves leave
    a, b = edges[:, 0], edges[:, 1]
    d0 = rest[a] - rest[b]
    along = (d0 @ axes[1]) / np.maximum(np.linalg.norm(d0, axis=1), 1e-300)
    e_graph = 0.5 * k_edge * float((((left[a] - left[b]) * along) ** 2).sum())
    return Centreline(slice_of=torch.as_tensor(slice_of),
                      stretch=torch.as_tensor(young * area / h * min(1.0, area / length**2),
                                              dtype=torch.float64),
                      bending=torch.as_tensor(bending, dtype=torch.float64),
                      graph=min(1.0, GRAPH_SHARE * e_bend / max(e_graph, 1e-300)))


def spans_plane(points: np.ndarray, flat: float = 0.05) -> bool:
    """Whether points (P, 3) hold a rigid body still: three or more, not all near one line
    (the second principal extent above ``flat`` x the first)."""
    if len(points) < 3:
        return False
    s = np.linalg.svd(points - points.mean(0), compute_uv=False)
    return bool(s[1] > flat * s[0])


def holds_frame(category: str, pinned: np.ndarray) -> bool:
    """Whether pins at the points ``pinned`` (P, 3) clamp a body of ``category``: its frame
    is then held and its deformation measured from the clamp. A pinned beam, or a solid
    pinned over a patch, is clamped; anything else floats, its deformation measured from its
    mean axes: a flag swings about its pole, and a sheet held at an arc or a patch bends at
    it and swings (the engine's discs pinned at x<0.03 do: clamped, their rollout errors grew
    from 0.13-0.31 to 0.25-0.49)."""
    if len(pinned) == 0:
        return False
    return category == "beam" or (category == "soft" and spans_plane(pinned))


class Joint(NamedTuple):
    """What a sheet's pins make (:func:`pin_joint`)."""

    offset: np.ndarray  # (P, 3): each pinned point's offset from its anchor (Body.pin_offset)
    hold: str  # "ball joint", "hinge" or "springs" (a wide patch: each pin at its point)


def pin_joint(pinned: np.ndarray, size: float, narrow: float = PIN_JOINT,
              centre: np.ndarray | None = None) -> Joint:
    """The joint a sheet's pins at the points ``pinned`` (P, 3) make.

    Along each principal axis of the points whose width is under ``narrow`` x ``size``
    (sqrt(12) standard deviations, a uniform spread's width: unlike the extent, it does not
    depend on which of two equal axes the decomposition returns), the points collapse onto
    the part of the pinned region nearest ``centre`` (the centre of mass; default the
    origin, as in the body frame), where the engine's cloth bends. A strip along an edge
    becomes a hinge on its inner edge, a corner a ball joint at its inner corner, a patch
    around the centre a ball joint at the centre; a wide patch stays as it is. Springs at
    the points themselves would make a narrow strip a stiff torsion spring (a 1 m sheet held
    by two rows of vertices 2.6 cm apart swung between 0 and 50 degrees below the horizontal
    where the engine's hung and swung through), and the crease at the strip's edge is a
    shape no decoded state holds. A strip narrow across one axis whose line curves within
    PIN_CURVE x ``size`` across the next, and a third of its length (the edge of a height
    field, a wavy hem; not a patch), is a hinge on that line too: the sheet swings about
    it and bends at the pins, where springs at the points held it level (a mountain read as
    cloth and hung by its edge, 0.18 of its size deep, tilted 4-6 degrees where the
    engine's hung at 81-89)."""
    if len(pinned) == 0:
        return Joint(np.zeros((0, 3)), "springs")
    mean = pinned.mean(axis=0)
    _, _, axes = np.linalg.svd(pinned - mean, full_matrices=True)  # rows: principal axes
    along = (pinned - mean) @ axes.T  # (P, 3)
    c = (np.zeros(3) if centre is None else np.asarray(centre, float)) - mean
    anchor = np.clip(c @ axes.T, along.min(axis=0), along.max(axis=0))  # (3,)
    spread = np.sqrt(12.0) * along.std(axis=0)  # largest first
    short = spread < narrow * size
    if short.sum() == 1 and spread[1] < min(PIN_CURVE * size, spread[0] / 3.0):
        short[1] = True  # an edge along a curve: long, and close to its line
    hold = {3: "ball joint", 2: "hinge"}.get(int(short.sum()), "springs")
    return Joint(((along - anchor) * short) @ axes, hold)


def rigid_part(disp: torch.Tensor, rest: torch.Tensor, mass: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mass-weighted translation (S, 3) and small rotation (S, 3) about the points' centre of
    mass (3,) best explaining disp (S, P, 3) of points rest (P, 3): the mean-axes condition,
    or, for a clamp, the rigid part of the pinned points' motion (rotations the points do
    not determine, e.g. about the line of a pinned edge, are left in the deformation)."""
    m = mass[None, :, None]
    centre = (mass[:, None] * rest).sum(0) / mass.sum()
    r = rest - centre
    inertia = (mass[:, None, None] * (r.pow(2).sum(-1)[:, None, None] * torch.eye(
        3, dtype=r.dtype) - r[:, :, None] * r[:, None, :])).sum(0)
    t = (m * disp).sum(1) / mass.sum()
    moment = (m * torch.cross(r.expand_as(disp), disp - t[:, None], dim=-1)).sum(1)
    return t, moment @ torch.linalg.pinv(inertia, rtol=1e-6).T, centre


def region_points(expr: str, vertices: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Dynamics points (indices into candidates) inside a region of the mesh; the nearest one
    to the region's centre when none falls inside."""
    mask = select_region(expr, vertices)
    if not mask.any():
        raise UsageError(f"region '{expr}' selects no vertex of the mesh")
    inside = np.flatnonzero(mask[candidates])
    if len(inside):
        return inside
    centre = vertices[mask].mean(axis=0)
    return np.array([int(np.argmin(np.linalg.norm(vertices[candidates] - centre, axis=1)))])


def nearest_index(v: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Each of ``v`` (N, 3)'s nearest of ``points`` (Q, 3), the first on a tie -> (N,).

    A k-d tree finds the two nearest; only where they are within rounding of a tie is the
    distance to every point compared, as |v - p| over all of them would for every vertex
    (100k vertices, 140 points: 2.8 s -> 0.2 s)."""
    from scipy.spatial import cKDTree

    if len(points) < 2:
        return np.zeros(len(v), np.int64)
    dist, idx = cKDTree(points).query(v, k=2)
    out = idx[:, 0].astype(np.int64)
    close = np.flatnonzero(dist[:, 1] - dist[:, 0] <= 1e-9 * np.maximum(dist[:, 1], 1e-300))
    for s in range(0, len(close), 4096):
        rows = close[s:s + 4096]
        out[rows] = np.linalg.norm(v[rows, None] - points[None], axis=-1).argmin(axis=1)
    return out
