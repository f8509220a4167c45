"""Each handle's rotation at the coordinates ``Z`` (docs/design.md, "The object's own shape
space"): the best fit of how its material's points have turned, weighed by its weights
(shape matching), read from sums over the points taken once, at a cost in the handles
alone; the lagged terms and the preconditioner turn with them."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .mechanics import Mechanics


class HandleRotations:
    """The shape-matching fit of the handles' rotations over the material's points (a
    solid's lattice nodes, a sheet's vertices)."""

    def __init__(self, mech: Mechanics, n_vertices: int):
        self.mech = mech
        material = slice(n_vertices, None) if mech.solid else slice(0, n_vertices)
        self.material_rest = mech.basis.points[material]
        self.material_weights = mech.basis.weights[material].T.tocsr()
        mass = np.maximum(np.asarray(self.material_weights.sum(axis=1)).ravel(), 1e-30)
        self.material_centres = (self.material_weights @ self.material_rest) / mass[:, None]
        spread = self.material_weights @ np.sum(self.material_rest ** 2, axis=1) - mass * np.sum(
            self.material_centres ** 2, axis=1)  # the trace of each handle's rest covariance
        self.material_spread = 1e-2 * np.maximum(spread, 1e-30)
        self._covariance_terms()

    def _covariance_terms(self) -> None:
        """The sums over the material's points (P) that each handle's covariance
        sum_p w_hp x_p X_p^T - (sum_p w_hp x_p) c_h^T is made of: x = X + Phi Z is linear
        in Z, so a step reads it at a cost in H alone (the mountain's 25,600 points took
        2.4 ms a step)."""
        W, X, Phi = self.material_weights, self.material_rest, self.mech.mass_rows
        H = W.shape[0]
        self.cov_rest = np.asarray(W @ (X[:, :, None] * X[:, None, :]).reshape(-1, 9)
                                   ).reshape(H, 3, 3)
        self.cov_lin = np.stack([(W @ sp.diags(X[:, j]) @ Phi).toarray() for j in range(3)],
                                axis=2)  # (H, 4H, 3): sum_p w_hp Phi_pk X_pj
        self.mean_rest = np.asarray(W @ X)  # (H, 3)
        self.mean_lin = (W @ Phi).toarray()  # (H, 4H)

    def at(self, Z: np.ndarray) -> np.ndarray:
        """(H, 3, 3) each handle's rotation at ``Z`` (for the lagged terms and the
        preconditioner): the best fit of how its points have turned, weighed by its weights
        (shape matching; unlike its own affine map, it is defined for a handle on a few
        points, or on a flat sheet)."""
        mech = self.mech
        cov = self.cov_rest + np.einsum("hkj,ki->hij", self.cov_lin, Z) - \
            (self.mean_rest + self.mean_lin @ Z)[:, :, None] * self.material_centres[:, None, :]
        H = mech.basis.handles  # and a little of the handle's own map, for the turns its
        # points cannot tell (a handle on a line of points: the pinned edge of a sheet)
        own = polar(np.eye(3) + Z.reshape(H, 4, 3)[:, :3, :].transpose(0, 2, 1))
        return polar(cov + self.material_spread[:, None, None] * own)


def turned_matrix(A: np.ndarray, Rr: np.ndarray) -> np.ndarray:
    """T A T^T for the block-diagonal T of the (n, 3, 3) rotations Rr, A (3n, 3n)."""
    n = len(Rr)
    out = np.matmul(Rr, A.reshape(n, 3, 3 * n))
    out = np.matmul(out.reshape(3 * n, n, 3).transpose(1, 0, 2), Rr.transpose(0, 2, 1))
    return out.transpose(1, 0, 2).reshape(3 * n, 3 * n)


def skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def polar(F: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations nearest the (n, 3, 3) matrices F."""
    U, _, Vt = np.linalg.svd(F)
    R = U @ Vt
    flip = np.linalg.det(R) < 0
    if flip.any():
        U[flip, :, 2] *= -1
        R[flip] = U[flip] @ Vt[flip]
    return R
