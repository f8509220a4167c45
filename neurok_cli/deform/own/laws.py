"""The material's own energy over the elements (docs/design.md, "The object's own shape
space"): stable Neo-Hookean for a solid, and a sheet's membrane (St. Venant-Kirchhoff, plane
stress, times its thickness; cloth's compression cheaper, its stretch measured partly on the
handles' patches); Young's modulus, Poisson ratio and thickness are ``simulate``'s. The energy
and its gradient cost two sparse products and a few array operations (or one compiled pass,
``deform/own/kernels.py``); the rest Hessian ``K0`` (12H, 12H), which the integrator factors,
comes once from the elements' rest stiffness.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...scenario.conditions import SimMaterial
from .elements import Elements, lame


class NeoHookean:
    """Stable Neo-Hookean (Smith et al. 2018, as Simplicits): Psi = mu/2 (|F|^2 - 3)
    - mu (J - 1) + lam'/2 (J - 1)^2, lam' = lam + mu so that small strains read as the
    material's own Lamé constants."""

    def __init__(self, material: SimMaterial):
        self.mu, lam = lame(material)
        self.lam = lam + self.mu

    def energy_stress(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(E,) energy density and (E, 3, 3) first Piola stress."""
        cof = _cofactor(F)  # dJ/dF
        J = np.einsum("ei,ei->e", F[:, :, 0], cof[:, :, 0])
        psi = (0.5 * self.mu * (np.einsum("eij,eij->e", F, F) - 3) - self.mu * (J - 1)
               + 0.5 * self.lam * (J - 1) ** 2)
        P = self.mu * F + (self.lam * (J - 1) - self.mu)[:, None, None] * cof
        return psi, P

    def energy_grad(self, elements: Elements, Z: np.ndarray) -> tuple[float, np.ndarray]:
        """sum_e measure_e Psi(F_e) at ``Z`` (4H, 3) and its gradient (4H, 3), in one
        compiled pass (``deform/own/kernels.py``; a solid's elements start at F0 = I)."""
        from .kernels import neo_hookean

        D, grad = elements.D, np.empty(Z.shape)
        val = neo_hookean(D.indptr, D.indices, D.data, elements.measure, self.mu, self.lam,
                          np.ascontiguousarray(Z, np.float64), grad)
        return float(val), grad

    def tangent(self, F0: np.ndarray) -> np.ndarray:
        return _tangent(self.energy_stress, F0)

    def rest_hessian(self, elements: Elements) -> np.ndarray:
        """(12H, 12H) the energy's Hessian at rest (``Elements.stiffness``)."""
        return elements.stiffness(self.tangent)


def _cofactor(F: np.ndarray) -> np.ndarray:
    """(E, 3, 3) cofactor matrices of F (E, 3, 3): column j is the cross product of F's
    other two columns, so that det F = F[:, :, 0] . cof[:, :, 0]."""
    a, b, c = F[:, :, 0], F[:, :, 1], F[:, :, 2]
    out = np.empty_like(F)
    for j, (u, w) in enumerate(((b, c), (c, a), (a, b))):
        out[:, 0, j] = u[:, 1] * w[:, 2] - u[:, 2] * w[:, 1]
        out[:, 1, j] = u[:, 2] * w[:, 0] - u[:, 0] * w[:, 2]
        out[:, 2, j] = u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0]
    return out


class Membrane:
    """A sheet's stretch: St. Venant-Kirchhoff in plane stress, Psi = mu |E|^2 +
    lam/2 tr(E)^2 with E = (F^T F - I) / 2, F (3, 2). With ``compression`` c below 1
    (cloth), the strain's compressed part costs c times as much: Psi = mu (|E+|^2 + c
    |E-|^2) + lam/2 (max(tr E, 0)^2 + c min(tr E, 0)^2), E+ keeping E's positive
    eigenvalues and E- its negative ones. Fabric buckles into wrinkles finer than any
    smooth basis holds rather than carry a compression, so a curved cloth must not stand
    as a shell (at c = 1 the mountain did); at c = 0 it shrank instead of folding."""

    def __init__(self, material: SimMaterial, compression: float = 1.0):
        self.mu, self.lam = lame(material, plane_stress=True)
        self.compression = float(compression)
        self.share = 0.0  # of the energy measured on patches' mean strain (``over_patches``)
        self.patches: sp.csr_matrix | None = None  # (E, H) each triangle's share of each
        self.mean: sp.csr_matrix | None = None  # (H, E) a patch's mean over its triangles
        self.patch_measure: np.ndarray | None = None  # (H,)

    def over_patches(self, elements: Elements, patches: sp.spmatrix, share: float
                     ) -> Membrane:
        """Measure ``share`` of the stretch on the mean strain of patches (assumed strain,
        as finite elements treat locking): ``patches`` (E, H), each triangle's part in each
        (rows summing to 1; a sheet's handles' weights). In a smooth basis a fold bends
        triangles between two handles' maps into stretch the fold itself does not have;
        over a patch it averages out where a real stretch does not (the mountain hung as
        cloth bent 0.050 with 0.9 of it on patches, 0.037 with none; docs/design.md). The
        rest, 1 - share, is each triangle's own: without it, stretch and compression side
        by side in a patch cost nothing, and a flat sheet dimpled."""
        W = sp.csr_matrix(patches, dtype=np.float64)
        weighed = (sp.diags(elements.measure) @ W).tocsc()
        self.patch_measure = np.asarray(weighed.sum(axis=0)).ravel()
        self.mean = (weighed @ sp.diags(1.0 / np.maximum(self.patch_measure, 1e-300))
                     ).T.tocsr()
        self.patches = W
        self.share = float(share)
        return self

    def patch_stress(self, E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G,) energy density and (G, 3, 3) second Piola stress of patches' mean strains
        E (G, 3, 3) (each triangle's, in 3D: its frame's 2D strain turned into space), the
        law of ``energy_stress`` with its compressed part weighed as there."""
        c = self.compression
        lam_e, V = np.linalg.eigh(E)
        tr = np.trace(E, axis1=1, axis2=2)
        pos = np.maximum(lam_e, 0.0)
        neg = lam_e - pos
        trp = np.maximum(tr, 0.0)
        trn = tr - trp
        psi = self.mu * ((pos ** 2).sum(axis=1) + c * (neg ** 2).sum(axis=1)) + \
            0.5 * self.lam * (trp ** 2 + c * trn ** 2)
        S = np.einsum("gij,gj,gkj->gik", V, 2 * self.mu * (pos + c * neg), V) + \
            (self.lam * (trp + c * trn))[:, None, None] * np.eye(3)
        return psi, S

    def _patch_energy_grad(self, elements: Elements, Z: np.ndarray
                           ) -> tuple[float, np.ndarray]:
        F = elements.gradients(Z)
        frame = elements.F0  # (E, 3, 2)
        E2 = 0.5 * (np.einsum("eci,ecj->eij", F, F) - np.eye(2))
        E3 = np.einsum("eai,eij,ebj->eab", frame, E2, frame)
        mean = (self.mean @ E3.reshape(len(E3), 9)).reshape(-1, 3, 3)
        psi, S = self.patch_stress(mean)
        S_e = (self.patches @ S.reshape(-1, 9)).reshape(-1, 3, 3)  # sum_h w_eh S_h
        S2 = np.einsum("eai,eab,ebj->eij", frame, S_e, frame)
        return float(self.patch_measure @ psi), elements.pull(F @ S2)

    def energy_stress(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        E = 0.5 * (np.einsum("eci,ecj->eij", F, F) - np.eye(2))
        tr = E[:, 0, 0] + E[:, 1, 1]
        c = self.compression
        if c < 1.0:  # the compressed part weighed by c
            Ep = _positive_part(E)
            En = E - Ep
            trp = np.maximum(tr, 0.0)
            trn = tr - trp
            square = np.einsum("eij,eij->e", Ep, Ep) + c * np.einsum("eij,eij->e", En, En)
            psi = self.mu * square + 0.5 * self.lam * (trp ** 2 + c * trn ** 2)
            S = 2 * self.mu * (Ep + c * En) + (self.lam * (trp + c * trn))[:, None, None] * \
                np.eye(2)
            return psi, F @ S
        psi = self.mu * np.einsum("eij,eij->e", E, E) + 0.5 * self.lam * tr ** 2
        S = 2 * self.mu * E + (self.lam * tr)[:, None, None] * np.eye(2)
        return psi, F @ S

    def energy_grad(self, elements: Elements, Z: np.ndarray) -> tuple[float, np.ndarray]:
        """The sheet's stretch energy at ``Z`` (4H, 3) and its gradient, in one compiled
        pass (``deform/own/kernels.py``)."""
        from .kernels import membrane

        D, grad = elements.D, np.empty(Z.shape)
        val = membrane(D.indptr, D.indices, D.data, np.ascontiguousarray(elements.F0),
                       elements.measure, self.mu, self.lam, self.compression,
                       np.ascontiguousarray(Z, np.float64), grad)
        if not self.share:
            return float(val), grad
        patch, patch_grad = self._patch_energy_grad(elements, Z)
        s = self.share
        return (1 - s) * float(val) + s * patch, (1 - s) * grad + s * patch_grad

    def tangent(self, F0: np.ndarray) -> np.ndarray:
        return _tangent(self.energy_stress, F0)

    def rest_hessian(self, elements: Elements) -> np.ndarray:
        """(12H, 12H) the stretch's Hessian at rest (``Elements.stiffness``), the patches'
        share included: their mean strain is linear in the triangles' dF at rest, and the
        law's tangent there is the split's mean, (1 + c) / 2 (2 mu I + lam I (x) I), as
        central differences read it."""
        K = elements.stiffness(self.tangent)
        if not self.share:
            return K
        e = len(elements.measure)
        frame = elements.F0
        B = np.empty((e, 9, 6))  # vec(dE3_e) from vec(dF_e) at rest
        for k in range(6):
            dF = np.zeros((3, 2))
            dF[k // 2, k % 2] = 1.0
            dE = 0.5 * (np.einsum("eci,cj->eij", frame, dF) + np.einsum("ci,ecj->eij", dF, frame))
            B[:, :, k] = np.einsum("eai,eij,ebj->eab", frame, dE, frame).reshape(e, 9)
        m = self.mean.tocoo()
        shape = (m.nnz, 9, 6)
        rows = np.broadcast_to(m.row[:, None, None] * 9 + np.arange(9)[:, None], shape)
        cols = np.broadcast_to(m.col[:, None, None] * 6 + np.arange(6), shape)
        G = sp.csr_matrix(((m.data[:, None, None] * B[m.col]).reshape(-1),
                           (rows.reshape(-1), cols.reshape(-1))),
                          shape=(9 * len(self.patch_measure), 6 * e))
        GD = np.asarray((G @ elements.gradient_operator()).todense())  # (9G, 12H)
        C = 2 * self.mu * np.eye(9) + self.lam * np.outer(np.eye(3).ravel(), np.eye(3).ravel())
        C *= 0.5 * (1 + self.compression)
        blocks = GD.reshape(-1, 9, GD.shape[1])
        patch = np.einsum("g,gik,ij,gjl->kl", self.patch_measure, blocks, C, blocks,
                          optimize=True)
        return (1 - self.share) * K + self.share * patch


def _positive_part(E: np.ndarray) -> np.ndarray:
    """(n, 2, 2) symmetric matrices with their negative eigenvalues set to zero."""
    a, b, d = E[:, 0, 0], E[:, 0, 1], E[:, 1, 1]
    m = 0.5 * (a + d)
    r = np.sqrt((0.5 * (a - d)) ** 2 + b * b)
    hi, lo = m + r, m - r
    # one positive eigenvalue: hi times the projector onto its eigenvector, (E - lo I) / 2r
    scale = np.where(lo >= 0, 1.0, np.where(hi <= 0, 0.0, hi / np.maximum(2 * r, 1e-300)))
    shift = np.where((lo < 0) & (hi > 0), lo, 0.0)
    out = E * scale[:, None, None]
    out[:, 0, 0] -= scale * shift
    out[:, 1, 1] -= scale * shift
    return out


def _tangent(energy_stress, F0: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """(E, 3d, 3d) d vec(P) / d vec(F) at F0 by central differences (exact for the
    quadratic part that matters at rest)."""
    e, _, d = F0.shape
    out = np.empty((e, 3 * d, 3 * d))
    for k in range(3 * d):
        dF = np.zeros((3, d))
        dF[k // d, k % d] = eps
        _, Pp = energy_stress(F0 + dF)
        _, Pm = energy_stress(F0 - dF)
        out[:, :, k] = ((Pp - Pm) / (2 * eps)).reshape(e, 3 * d)
    return 0.5 * (out + out.transpose(0, 2, 1))

