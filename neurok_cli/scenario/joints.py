"""Parts on joints, as every stage names them: a joint (hinge or slider), a rig's body, and
the geometry both the latent linkage (``rig``) and the engine (``sim``) take them by."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHEET = 1e-3  # m: the thickness an open surface (a part bounding no solid) is taken to have


@dataclass
class Joint:
    """How a part hangs from its parent, in the design pose: a hinge turns about the line
    through ``anchor`` along ``axis``, a slider moves along ``axis``; ``limits`` (rad or m)
    bound its position, 0 in the design pose."""

    kind: str  # "hinge" or "slide"
    axis: tuple[float, float, float]
    anchor: tuple[float, float, float]
    limits: tuple[float, float]
    damping: float  # N m s / rad (hinge) or N s / m (slide)


def axis_rotation(axis, angle: float) -> np.ndarray:
    """The rotation (3, 3) by ``angle`` (rad) about the unit ``axis``, right-handed."""
    x, y, z = np.asarray(axis, float)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def closed_surface(faces: np.ndarray) -> bool:
    """Whether a surface bounds a solid: every edge is shared by an even number of faces
    (boxes that touch at welded corners still do)."""
    e = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    return len(e) > 0 and bool((np.unique(e, axis=0, return_counts=True)[1] % 2 == 0).all())


@dataclass
class RigBody:
    """A part of a rig as the engine takes it: its surface (metres, +Y up, as given), its
    parent and the joint it hangs by (position 0 as given; None for the base)."""

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    parent: int
    joint: Joint | None
