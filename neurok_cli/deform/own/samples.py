"""``--samples`` in the object's own space (docs/design.md, "The object's own shape space"):
further starts drawn over the object's lowest elastic modes, each holding a share of its
weight's work in the material's own energy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla

from .bending import Bending
from .mechanics import Mechanics

if TYPE_CHECKING:
    from .step import Step

SAMPLE_MODES = 8  # --samples: each further sample starts over this many lowest modes ...
SAMPLE_ENERGY = 0.02  # ... with this x its weight's work over its size (half deformation)
SAMPLE_STREAM = 7  # (the random stream of the samples' draws, beside the seed)


def sample_starts(stepper: Step, count: int, seed: int, diversity: float | None = None
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` starts (Z, a velocity added to the conditions') for ``--samples``, each
    over the object's SAMPLE_MODES lowest elastic modes (its rest stiffness against its
    mass, in the free directions): a deformation holding half of SAMPLE_ENERGY x
    ``diversity`` (default 1) of its weight's work over its size, and a velocity holding
    the other half, in random proportions of the modes (``seed``: the same draws). The
    deformation's energy is the material's own, not the modes' quadratic one: a sheet's
    soft bending modes, taken far along their straight line, stretch it (the flag's held
    17 kJ where the modes said 0.24 J), so the draw is scaled back along its line until it
    holds its share."""
    if count <= 0:
        return []
    mech, N = stepper.mech, stepper.N
    P = np.kron(N, np.eye(3))  # (r, 3) coordinates -> Z.reshape(-1)
    w2, phi = sla.eigh(P.T @ mech.K0 @ P, np.kron(N.T @ mech.M @ N, np.eye(3)))
    keep = np.flatnonzero(w2 > 1e-6 * w2.max())[:SAMPLE_MODES]  # (not the rigid ones)
    gmag = max(float(np.linalg.norm(stepper.g)), 9.81)
    budget = (1.0 if diversity is None else float(diversity)) * SAMPLE_ENERGY * \
        mech.mass_total * gmag * stepper.size  # J
    out = []
    for s in range(1, count + 1):
        rng = np.random.default_rng([seed, SAMPLE_STREAM, s])
        a, b = rng.standard_normal((2, len(keep)))
        q = phi[:, keep] @ (a / np.sqrt(w2[keep])) * np.sqrt(budget) / np.linalg.norm(a)
        qd = phi[:, keep] @ b * np.sqrt(budget) / np.linalg.norm(b)
        Z = _within(mech, (P @ q).reshape(-1, 3), 0.5 * budget)
        out.append((Z, (P @ qd).reshape(-1, 3)))
    return out


def _within(mech: Mechanics, Z: np.ndarray, energy: float) -> np.ndarray:
    """``Z`` scaled back along its line (bisection) until the material's own energy there
    (elastic, and bending from the rest) is at most ``energy`` (J)."""
    rest = (np.zeros_like(Z), 0.0)  # bending from the rest shape
    if stored(mech, Z, rest) <= energy * (1 + 1e-9):
        return Z
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if stored(mech, mid * Z, rest) <= energy else (lo, mid)
    return lo * Z


def stored(mech: Mechanics, Z: np.ndarray, bend: tuple[np.ndarray, float]) -> float:
    """The material's energy at ``Z`` (J): elastic, and bending with its linear part
    ``bend`` (see Bending.turned)."""
    out = mech.law.energy_grad(mech.elements, Z)[0]
    if mech.bending is not None:
        out += Bending.energy_grad(Z, mech.bending.Q, *bend)[0]
    return out
