"""Inverse kinematics in the object's own shape space (docs/design.md, "The object's own
shape space"): the handle coordinates whose motion of the mesh's vertices is an observed
one. Every vertex moves linearly in the coordinates, so the fit is one weighted
least-squares solve, factored once per object and reused for every shape of a sequence;
a little of the rest elastic energy holds the handles that few observed points see.
``neurok fit`` (deform/fit.py), ``neurok eval --space handles`` and a fitted start in
``animate`` use it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla

from .handle_motion import Mechanics

FIT_ELASTIC = 1e-4  # the rest elastic energy's weight, per the fit's own scale (the test
# split's inverse kinematics: Chamfer-L1 0.07x the rest pose's, docs/design.md)


def coordinates_fit(mech: Mechanics, index: np.ndarray | None = None,
                    weights: np.ndarray | None = None
                    ) -> Callable[[np.ndarray], np.ndarray]:
    """A solve from observed displacements (n, 3) of the vertices ``index`` (default:
    all) to the coordinates Z (4H, 3) that move them so in the least-squares sense, each
    vertex weighed by ``weights`` (n,) (default: equally)."""
    Q = mech.vertex_rows if index is None else mech.vertex_rows[index]
    w = np.ones(Q.shape[0]) if weights is None else np.asarray(weights, np.float64)
    G = (Q.T @ Q.multiply(w[:, None])).toarray()
    A = np.kron(G, np.eye(3))  # in Z.reshape(-1)'s order
    scale = float(np.trace(A)) / len(A)
    A += FIT_ELASTIC * scale * len(A) / max(float(np.trace(mech.K0)), 1e-300) * mech.K0
    A += 1e-9 * scale * np.eye(len(A))
    factor = sla.cho_factor(A, check_finite=False)

    def solve(displacement: np.ndarray) -> np.ndarray:
        b = (Q.T @ (w[:, None] * np.asarray(displacement, np.float64))).reshape(-1)
        return sla.cho_solve(factor, b, check_finite=False).reshape(-1, 3)

    return solve
