"""How physical a clip looks, with no ground truth: pure NumPy measures (docs/design.md,
"Decoded frames, volume, bending and air").

Every measure is taken on the welded surface (vertices merged by position, so UV seams and
double-sided copies do not count as edges of their own), every frame against the first:

- *crumple*: the 95th percentile over interior edges of |dihedral angle - its rest value|
  (radians), averaged over frames: a crumpled-foil look, whatever the overall motion;
- *bend*: the same change's mean over interior edges, averaged over frames; a sheet that
  swings as a rigid card has none, one that bends has some;
- *volume*: the enclosed volume over the rest's (closed surfaces only), its minimum and its
  value at the last frame;
- *strain*: mean |l / l0 - 1| over edges, averaged over frames;
- *tilt*: the angle (degrees) between the up axis (+Y) of the rest and that of the last
  frame after a rigid fit; *height*: the last frame's lowest point above the lowest point
  of the clip (0 for a body that ends resting where it landed); *travel*: the centroid's
  horizontal move by the last frame; both in sizes (the rest's largest extent);
- *deform*: the largest shape change over the clip: the mean vertex distance left once a
  frame is moved rigidly onto the rest (least squares), over the rest's diagonal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..data.geometry import kabsch
from ..data.metrics import rigid_residual
from ..io.asset import weld

CLOSED_SHARE = 1e-3  # a surface encloses volume when its boundary edges are under this share


@dataclass
class Surface:
    """The welded surface a clip's measures are taken on."""

    index: np.ndarray  # (N,) welded vertex of each input vertex
    faces: np.ndarray  # (F, 3) welded faces, degenerate and duplicate ones dropped
    edges: np.ndarray  # (E, 2) unique edges
    hinges: np.ndarray  # (H, 4) interior edges (a, b) with the opposite corners (c, d)
    closed: bool  # no (or a negligible share of) boundary edges


def welded_surface(vertices: np.ndarray, faces: np.ndarray, tolerance: float = 1e-6) -> Surface:
    """The welded surface of a mesh (vertices (N, 3), faces (F, 3)): vertices closer than
    ``tolerance`` x the bounding-box diagonal are one (:func:`io.asset.weld`), and its
    edges and hinges."""
    w = weld(np.asarray(vertices, np.float64), np.asarray(faces, np.int64),
             tolerance=tolerance)
    index, f = w.index, w.faces
    half = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    opposite = np.concatenate([f[:, 2], f[:, 0], f[:, 1]])
    key = np.sort(half, axis=1)
    edges, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    two = np.flatnonzero(counts[inverse] == 2)
    two = two[np.argsort(inverse[two], kind="stable")]
    first_side, second_side = two[0::2], two[1::2]
    hinges = np.stack([half[first_side, 0], half[first_side, 1], opposite[first_side],
                       opposite[second_side]], axis=1)
    boundary = int((counts == 1).sum())
    return Surface(index=index, faces=f, edges=edges, hinges=hinges,
                   closed=boundary <= CLOSED_SHARE * max(len(edges), 1))


def dihedral(x: np.ndarray, hinges: np.ndarray) -> np.ndarray:
    """Signed dihedral angles (..., H), radians, of positions x (..., M, 3) at ``hinges``
    (H, 4): 0 where the two faces are coplanar."""
    a, b, c, d = (x[..., hinges[:, i], :] for i in range(4))
    e = b - a
    n1 = np.cross(e, c - a)
    n2 = np.cross(d - a, e)
    e_hat = e / np.maximum(np.linalg.norm(e, axis=-1, keepdims=True), 1e-300)
    sin = (np.cross(n1, n2) * e_hat).sum(-1)
    cos = (n1 * n2).sum(-1)
    return np.arctan2(sin, cos)


def crumple(rest: np.ndarray, frames: np.ndarray, faces: np.ndarray,
            above: float | None = None) -> np.ndarray:
    """Per frame (T,), the 95th percentile over interior edges of |dihedral angle - its rest
    value| (radians) of frames (T, N, 3) of the mesh rest (N, 3), faces (F, 3), on its
    welded surface (as :func:`plausibility` measures a clip). With ``above``, only over the
    edges whose both ends are higher than the frame's lowest vertex by that share of the
    rest's largest extent (+Y up): the surface away from where a ground would touch it."""
    s = welded_surface(rest, faces)
    if not len(s.hinges):
        return np.zeros(len(frames))
    m = int(s.index.max()) + 1
    x = np.zeros((len(frames) + 1, m, 3))
    x[0, s.index] = rest
    x[1:, s.index] = frames
    change = np.abs(_wrap(dihedral(x[1:], s.hinges) - dihedral(x[0], s.hinges)))
    if above is None:
        return np.percentile(change, 95, axis=1)
    height = x[1:, :, 1] - np.asarray(frames)[..., 1].min(axis=1, keepdims=True)
    edge = height[:, s.hinges[:, :2]].min(axis=2)  # (T, H)
    away = edge > above * float(np.ptp(rest, axis=0).max())
    return np.array([np.percentile(c[a], 95) if a.any() else 0.0
                     for c, a in zip(change, away)])


def enclosed_volume(x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Signed volume (...,) enclosed by faces (F, 3) at positions x (..., M, 3)."""
    a, b, c = (x[..., faces[:, i], :] for i in range(3))
    return (a * np.cross(b, c)).sum(axis=(-1, -2)) / 6.0


def _wrap(angle: np.ndarray) -> np.ndarray:
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


@dataclass
class Plausibility:
    """The measures of one clip (see the module's docstring); volume is None when open."""

    crumple: float
    bend: float
    strain: float
    volume_min: float | None
    volume_end: float | None
    tilt_deg: float
    height_end: float
    travel_end: float
    deform: float

    def as_dict(self) -> dict:
        return asdict(self)


def plausibility(frames: np.ndarray, faces: np.ndarray, surface: Surface | None = None
                 ) -> Plausibility:
    """Measures of a clip: frames (T, N, 3) of one mesh with faces (F, 3), the first frame
    the rest (any units, +Y up)."""
    frames = np.asarray(frames, np.float64)
    s = surface or welded_surface(frames[0], faces)
    m = int(s.index.max()) + 1
    x = np.zeros((len(frames), m, 3))
    x[:, s.index] = frames
    rest = x[0]
    size = float(np.ptp(rest, axis=0).max()) or 1.0
    if len(s.hinges):
        change = np.abs(_wrap(dihedral(x, s.hinges) - dihedral(rest, s.hinges)))
        crumple = float(np.percentile(change, 95, axis=1).mean())
        bend = float(change.mean())
    else:
        crumple = bend = 0.0
    length = np.linalg.norm(x[:, s.edges[:, 0]] - x[:, s.edges[:, 1]], axis=-1)
    rest_length = np.maximum(length[0], 1e-300)
    strain = float(np.abs(length / rest_length - 1.0).mean())
    volume_min = volume_end = None
    if s.closed:
        vol = enclosed_volume(x, s.faces)
        if abs(vol[0]) > 1e-9 * size**3:
            ratio = vol / vol[0]
            volume_min, volume_end = float(ratio.min()), float(ratio[-1])
    rotation, _ = kabsch(rest, x[-1])
    up = rotation @ np.array([0.0, 1.0, 0.0])
    tilt = float(np.degrees(np.arccos(np.clip(up[1] / np.linalg.norm(up), -1.0, 1.0))))
    move = x[-1].mean(axis=0) - rest.mean(axis=0)
    return Plausibility(crumple=crumple, bend=bend, strain=strain, volume_min=volume_min,
                        volume_end=volume_end, tilt_deg=tilt,
                        height_end=float(x[-1][:, 1].min() - x[..., 1].min()) / size,
                        travel_end=float(np.hypot(move[0], move[2])) / size,
                        deform=float(rigid_residual(x, np.broadcast_to(rest, x.shape)).max())
                        / (float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0))
