"""What a motion is asked for and what it gives back, shared by the learned latent motion
(``deform/learned/motion.py``) and the object's own shape space (``deform/own/``);
free of torch, so the handle path starts without it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .conditions import Conditions, SimMaterial

if TYPE_CHECKING:
    import torch

    from ..io.reduced import ReducedModel


@dataclass
class MotionConfig:
    """How to move one object: physics, sampling and numerics."""

    category: str = "soft"
    material: SimMaterial = field(default_factory=SimMaterial)
    conditions: Conditions = field(default_factory=Conditions)
    seconds: float = 4.0
    fps: float = 30.0
    samples: int = 1  # motions; beyond the first, each starts elsewhere (a prior sample, or
    # in the object's own space a draw over its low modes)
    diversity: float | None = None  # scale of the prior draws of the start state (None: 1
    # under a fitted prior, 0.5 under the unit prior N(mu, I), which is wider than the data;
    # in the object's own space the scale of its draws' energy, None: 1)
    spread: torch.Tensor | None = None  # (k, k) Cholesky factor of the fitted instance prior
    seed: int = 0
    subspace: int = 8  # k_q reduced coordinates
    dynamics_points: int = 128
    stiffness: float = 1.0  # user scale on top of the calibration
    damping_scale: float = 1.0  # calibration of Rayleigh damping
    method: str = "rk4"
    fit_radius: float = 1.0  # latent radius the decoder fit covers
    start: LatentStart | None = None  # None = at rest, where the vertices are
    begin: tuple[np.ndarray, np.ndarray] | None = None  # the own space's fitted start: the
    # vertices' positions (N, 3) and velocities (N, 3) (physics frame), projected onto the
    # basis (deform/own/fit.py); the conditions' velocity and spin are added to it
    basis: str = "decoder"  # or "linear-modes": the baseline without the learned map
    strain_limit: float | None = None  # largest edge strain |l / l0 - 1| the decoded frames
    # keep (see model/strain.py); None: as decoded
    still_air: bool = True  # air resists motion without wind too (off to match the data)
    bends: int = 12  # a sheet's bending modes beside the decoder's directions (model/bending.py)


@dataclass
class LatentStart:
    """A deformed, moving state to start from (recovered by ``neurok fit``).

    The object starts at ``rotation @ (rest + decode(z)) + translation``, where rest is the
    vertices given to :func:`latent_motion` (physical frame), moving at z_dot in the latent
    space; the rigid velocity and spin come from the conditions.
    """

    z: np.ndarray  # (k,) latent, in the prior of encode_object(..., seed) of the rest
    z_dot: np.ndarray  # (k,) latent per second
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))  # (3, 3)
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) metres


@dataclass
class Motion:
    frames: np.ndarray  # (S, T, N, 3) metres, physical frame
    energy: dict[str, np.ndarray]  # name -> (T, S), J
    stats: dict  # timings, sizes, residuals
    model: ReducedModel | None = None  # the equations it integrated, as data (the object's
    # own shape space only: deform/own/reduced_model.py)
