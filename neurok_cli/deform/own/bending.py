"""A sheet's bending in handle coordinates (docs/design.md, "The object's own shape space"):
quadratic bending (Bergou et al. 2006) over the cotangent Laplacian, its rest curvature kept
by each vertex's rotation, lagged a step, and read from the handles' rotations at a cost in
the handles alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...scenario.conditions import SimMaterial


@dataclass
class Bending:
    """Quadratic bending of a sheet: D/2 sum_v |(L x)_v - R_v (L X)_v|^2 / A_v, with the
    cotangent Laplacian L, the vertices' areas A and the plate's rigidity
    D = E t^3 / (12 (1 - nu^2)); R_v (each vertex's rotation, lagged a step) keeps a curved
    rest shape at rest under any rigid motion."""

    Lr: sp.csr_matrix  # (N, 4H): L composed with the vertices' basis rows
    rest: np.ndarray  # (N, 3) L X
    inv_area: np.ndarray  # (N,)
    rigidity: float  # D, N m
    Q: np.ndarray  # (4H, 4H) D Lr^T A^-1 Lr: the Hessian per coordinate
    L: sp.csr_matrix  # (N, N) the cotangent Laplacian

    @classmethod
    def build(cls, L: sp.spmatrix, area: np.ndarray, vertices: np.ndarray,
              rows_to_z: sp.csr_matrix, material: SimMaterial, thickness: float) -> Bending:
        rigidity = material.young * thickness ** 3 / (12 * (1 - material.poisson ** 2))
        inv_area = 1.0 / np.maximum(area, 1e-30)
        Lr = (L @ rows_to_z).tocsr()
        Q = rigidity * np.asarray((Lr.T @ sp.diags(inv_area) @ Lr).todense())
        return cls(Lr, np.asarray(L @ vertices), inv_area, rigidity, Q, sp.csr_matrix(L))

    def turned(self, R: np.ndarray) -> tuple[np.ndarray, float]:
        """With the vertices' rotations R (N, 3, 3) held (lagged a step), the energy is
        quadratic in Z: 1/2 Z.Q Z + Z.b + c -> (b (4H, 3), c). The definition: a step reads
        the same from the handles' rotations (``by_handles``), held to it by a test."""
        d = self.rest - np.einsum("vij,vj->vi", R, self.rest)
        wd = d * self.inv_area[:, None]
        return self.rigidity * (self.Lr.T @ wd), 0.5 * self.rigidity * float(np.sum(d * wd))

    def by_handles(self, weights: sp.csr_matrix) -> HandleTurns:
        """``turned`` for vertex rotations blended from H handles' (R_v = sum_h w_vh R_h,
        ``weights`` (N, H)): b and c are then linear and quadratic in the handles'
        rotations, so a step reads them from sums over the vertices taken here once, at
        a cost in H alone (the mountain's 25,600 vertices took 1.2 ms a step)."""
        a = self.inv_area
        r = self.rest
        W = sp.csr_matrix(weights)
        H = W.shape[1]
        Y = (W.multiply(a[:, None])).T.tocsr()  # (H, N): a_v w_vh
        lin = np.stack([np.asarray(self.Lr.T @ (Y[h].toarray().ravel()[:, None] * r))
                        for h in range(H)])  # (H, 4H, 3): sum_v Lr_v a_v w_vh r_v^T
        once = np.asarray(Y @ (r[:, :, None] * r[:, None, :]).reshape(-1, 9)).reshape(H, 3, 3)
        pairs = np.empty((H, H, 3, 3))
        for j in range(3):
            for k in range(3):
                pairs[:, :, j, k] = (W.T @ W.multiply((a * r[:, j] * r[:, k])[:, None])
                                     ).toarray()
        return HandleTurns(self.rigidity, np.asarray(self.Lr.T @ (a[:, None] * r)), lin,
                           float(np.sum(a[:, None] * r * r)), once, pairs)

    @staticmethod
    def energy_grad(Z: np.ndarray, Q: np.ndarray, b: np.ndarray, c: float
                    ) -> tuple[float, np.ndarray]:
        """Energy and (4H, 3) gradient at Z of the quadratic form ``turned`` gave."""
        QZ = Q @ Z
        return 0.5 * float(np.sum(Z * QZ)) + float(np.sum(Z * b)) + c, QZ + b


@dataclass
class HandleTurns:
    """Bending's lagged terms (``Bending.turned``) as functions of the handles' rotations
    R (H, 3, 3), from sums over the vertices (``Bending.by_handles``), with d_v = r_v -
    sum_h w_vh R_h r_v, r = L X and a = 1 / area: b = D Lr^T (a d), c = D/2 sum_v a_v |d_v|^2."""

    rigidity: float
    still: np.ndarray  # (4H, 3) Lr^T (a r): b with every rotation zero
    lin: np.ndarray  # (H, 4H, 3) sum_v Lr_v^T a_v w_vh r_v^T
    square: float  # sum_v a_v |r_v|^2
    once: np.ndarray  # (H, 3, 3) sum_v a_v w_vh r_v r_v^T
    pairs: np.ndarray  # (H, H, 3, 3) sum_v a_v w_vh w_vk r_v r_v^T

    def at(self, R: np.ndarray) -> tuple[np.ndarray, float]:
        """(b (4H, 3), c) at the handles' rotations R (H, 3, 3)."""
        b = self.still - np.einsum("hkj,hij->ki", self.lin, R)
        cross = float(np.einsum("hij,hij->", R, self.once))  # sum_v a_v r_v . R_v r_v
        blend = float(np.einsum("hij,kil,hkjl->", R, R, self.pairs, optimize=True))
        return self.rigidity * b, 0.5 * self.rigidity * (self.square - 2 * cross + blend)
