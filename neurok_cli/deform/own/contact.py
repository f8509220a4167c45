"""The ground's contact on the surface's points (docs/design.md, "The object's own shape
space"): a penalty on their depth below y = 0, with lagged, smoothed Coulomb friction as IPC
writes it, and the material's weights of the points the ground touches."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from .mechanics import Mechanics

PENETRATION = 0.003  # contact and pin springs: sag of a point carrying 16x its share, x size
FEWEST = 24  # the ground holds the whole weight on this many points at PENETRATION (at 16x
# their share alone, a penguin on its feet sank 3.7 % of its size)
REACH = 0.02  # the ground's candidates: points this x size above it (and their fall)
TOUCH = 1 / 16  # the ground touches the surface's points this x size apart at most (a
# coarse mesh's long triangles get a grid: on its corners alone a box sank and blew up)
SLIP = 1e-3  # m/s: friction's smoothing speed (below it, static friction creeps)


@dataclass
class Contact:
    """One step's ground contact: a penalty on the candidate vertices' depth below y = 0 and
    lagged, smoothed Coulomb friction (IPC's) on those that carried a normal force."""

    index: np.ndarray  # (n,) the candidate vertices
    rows: sp.csr_matrix  # (n, 4H) their basis rows
    k: np.ndarray  # (n,) penalty stiffness, N/m
    close: np.ndarray  # (n,) bool: touching, or nearly (the preconditioner's share)
    friction: np.ndarray | None  # (n,) mu x the lagged normal force, N (None: frictionless)
    slide: np.ndarray  # (n,) m: how far each slid along the ground in the step before

    def __post_init__(self):
        if self.friction is not None:
            self.touching = self.friction > 0
            self.rows_f = self.rows[self.touching]
            self.friction = self.friction[self.touching]
            self.slide = self.slide[self.touching]

    def energy_grad(self, Z, Zn, y_rest, eps) -> tuple[float, np.ndarray]:
        pen = np.minimum(y_rest + self.rows @ Z[:, 1], 0.0)
        val = 0.5 * float(np.sum(self.k * pen * pen))
        grad = np.zeros_like(Z)
        grad[:, 1] = self.rows.T @ (self.k * pen)
        if self.friction is not None and len(self.friction):
            ut = (self.rows_f @ (Z - Zn))[:, [0, 2]]
            s_t = np.linalg.norm(ut, axis=1)
            lo = s_t < eps
            f0 = np.where(lo, -s_t ** 3 / (3 * eps ** 2) + s_t ** 2 / eps + eps / 3, s_t)
            f1 = np.where(lo, -s_t ** 2 / eps ** 2 + 2 * s_t / eps, 1.0)
            val += float(np.sum(self.friction * f0))
            coef = self.friction * f1 / np.maximum(s_t, 1e-30)
            ft = np.zeros((len(s_t), 3))
            ft[:, 0], ft[:, 2] = coef * ut[:, 0], coef * ut[:, 1]
            grad += self.rows_f.T @ ft
        return val, grad

    def stiffness(self, eps) -> tuple[np.ndarray, np.ndarray | None]:
        """(4H, 4H) Hessians of the penalty (vertical) and of friction (each horizontal
        axis) over the close vertices, for the preconditioner."""
        rows = self.rows[self.close]
        Ky = _weighted_gram(rows, self.k[self.close])
        if self.friction is None or not len(self.friction):
            return Ky, None
        s = np.maximum(self.slide, 1e-3 * eps)  # friction's curvature where it slid last
        kf = self.friction * np.where(s < eps, 2 / eps - s / eps ** 2, 1 / s)
        return Ky, _weighted_gram(self.rows_f, kf)


def material_weights(mech: Mechanics, points: np.ndarray, n: int) -> sp.csr_matrix:
    """Basis weights (C, H) of the surface's points (C, 3): the first ``n`` the vertices'
    own, the rest the material's: blended (inverse distance) from the 4 nearest points the
    basis knows, the lattice's inside a solid. Weights blended from the triangle's corners
    instead tie a coarse mesh's contact to its few vertices (a box of 8 blew up)."""
    own = mech.basis.weights[:n]
    if len(points) == n:
        return own.tocsr()
    k = min(4, len(mech.basis.points))  # (a sheet of 3 vertices has 3)
    d, near = cKDTree(mech.basis.points).query(points[n:], k=k)
    d, near = d.reshape(len(d), k), near.reshape(len(near), k)
    w = 1.0 / np.maximum(d, 1e-12) ** 2
    w /= w.sum(axis=1, keepdims=True)
    blend = sp.csr_matrix((w.ravel(), (np.repeat(np.arange(len(w)), k), near.ravel())),
                          shape=(len(w), len(mech.basis.points)))
    return sp.vstack([own, blend @ mech.basis.weights]).tocsr()


def _weighted_gram(rows: sp.csr_matrix, k: np.ndarray) -> np.ndarray:
    """rows^T diag(k) rows (a few hundred rows of a few hundred columns: dense is faster)."""
    dense = rows.toarray()
    return dense.T @ (k[:, None] * dense)
