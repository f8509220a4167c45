"""The material's own energy in handle coordinates (docs/design.md, "The object's own shape
space"): stable Neo-Hookean over a solid's tetrahedra, and a sheet's membrane (St. Venant-
Kirchhoff, plane stress, times its thickness) with quadratic bending (Bergou et al. 2006)
over its triangles; Young's modulus, Poisson ratio and thickness are ``simulate``'s.

Elements are linear, so each deformation gradient is linear in the handle coordinates ``Z``
(4H, 3) (``deform/handles.py``): ``F_e = F0_e + (D @ Z)`` read per element. The energy and its
gradient cost two sparse products and a few array operations; the rest Hessian ``K0``
(12H, 12H), which the integrator factors, comes once from the elements' rest stiffness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..scenario.conditions import SimMaterial


def lame(material: SimMaterial, plane_stress: bool = False) -> tuple[float, float]:
    """Lamé's (mu, lambda) of a material, Pa; plane stress for a sheet's membrane."""
    e, nu = material.young, material.poisson
    mu = e / (2 * (1 + nu))
    lam = e * nu / ((1 + nu) * (1 - 2 * nu))
    if plane_stress:
        lam = 2 * lam * mu / (lam + 2 * mu)
    return mu, lam


@dataclass
class Elements:
    """Linear elements over the handle basis: tetrahedra (d = 3) or triangles (d = 2)."""

    D: sp.csr_matrix  # (E d, 4H): (D @ Z)[e d + j, c] = dF_e[c, j]
    F0: np.ndarray  # (E, 3, d) rest deformation gradient (the identity, or a sheet's frame)
    measure: np.ndarray  # (E,) volume, m^3 (a sheet's: area x thickness)
    # what D is built from, for the reduced model's description (deform/reduced_model.py):
    faces: np.ndarray | None = None  # (E, 3) a sheet's triangles (vertex indices)
    at: np.ndarray | None = None  # (E, 3) a smooth solid's points ...
    near: np.ndarray | None = None  # (E, k) ... and the basis points its fit reads

    def __post_init__(self):
        self.D = self.D.tocsr()  # (CSR: the compiled pass reads an element's rows in turn)

    def gradients(self, Z: np.ndarray) -> np.ndarray:
        """(E, 3, d) deformation gradients at ``Z`` (4H, 3): with ``pull`` and a law's
        ``energy_stress``, the NumPy definition the compiled pass (``energy_grad``,
        deform/kernels.py) is held to (tests/deform/test_step_terms.py)."""
        e, _, d = self.F0.shape
        return self.F0 + (self.D @ Z).reshape(e, d, 3).transpose(0, 2, 1)

    def pull(self, P: np.ndarray) -> np.ndarray:
        """(4H, 3) gradient in Z of sum_e measure_e Psi(F_e) from the stresses P (E, 3, d)."""
        return self.D.T @ (self.measure[:, None, None] * P).transpose(0, 2, 1).reshape(-1, 3)

    def stiffness(self, tangent) -> np.ndarray:
        """(12H, 12H) Hessian at rest, in ``Z.reshape(-1)``'s order, from ``tangent(F0)``
        (E, 3d, 3d): the second derivative of Psi in vec(F) (c-major, then j)."""
        e, _, d = self.F0.shape
        C = tangent(self.F0) * self.measure[:, None, None]  # (E, 3d, 3d)
        DF = self.gradient_operator()
        blocks = sp.block_diag(list(C), format="csr") if e < 64 else _block_diag(C)
        return np.asarray((DF.T @ (blocks @ DF)).todense())

    def gradient_operator(self) -> sp.csr_matrix:
        """(E 3d, 12H): vec(dF_e) (c-major, then j) from ``Z.reshape(-1)``."""
        e, _, d = self.F0.shape
        Dc = self.D.tocoo()
        el, j = np.divmod(Dc.row, d)
        rows = np.concatenate([el * 3 * d + c * d + j for c in range(3)])
        cols = np.concatenate([Dc.col * 3 + c for c in range(3)])
        vals = np.tile(Dc.data, 3)
        return sp.csr_matrix((vals, (rows, cols)), shape=(e * 3 * d, self.D.shape[1] * 3))


def _block_diag(C: np.ndarray) -> sp.csr_matrix:
    e, n, _ = C.shape
    base = (np.arange(e) * n)[:, None, None]
    rows = np.broadcast_to(base + np.arange(n)[None, :, None], C.shape)
    cols = np.broadcast_to(base + np.arange(n)[None, None, :], C.shape)
    return sp.csr_matrix((C.reshape(-1), (rows.reshape(-1), cols.reshape(-1))),
                         shape=(e * n, e * n))


def element_operator(rows_to_z: sp.csr_matrix, elems: np.ndarray, grads: np.ndarray
                     ) -> sp.csr_matrix:
    """D (E d, 4H): node gradients ``grads`` (E, n, d) of elements ``elems`` (E, n) composed
    with the nodes' basis rows (P, 4H)."""
    e, n, d = grads.shape
    rows = (np.arange(e)[:, None, None] * d + np.arange(d)[None, None, :])
    rows = np.broadcast_to(rows, grads.shape).reshape(-1)
    cols = np.broadcast_to(elems[:, :, None], grads.shape).reshape(-1)
    S = sp.csr_matrix((grads.reshape(-1), (rows, cols)), shape=(e * d, rows_to_z.shape[0]))
    return (S @ rows_to_z).tocsr()


def tetrahedra(nodes: np.ndarray, tets: np.ndarray, rows_to_z: sp.csr_matrix) -> Elements:
    """Elements of a solid's tetrahedra; ``rows_to_z`` (K, 4H): the nodes' basis rows."""
    x = nodes[tets]  # (E, 4, 3)
    Dm = (x[:, 1:] - x[:, :1]).transpose(0, 2, 1)  # columns: edges from node 0
    inv = np.linalg.inv(Dm)  # (E, 3, 3): row i -> gradient of node i + 1's coordinate
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)  # (E, 4, 3)
    vol = np.abs(np.linalg.det(Dm)) / 6.0
    F0 = np.broadcast_to(np.eye(3), (len(tets), 3, 3)).copy()
    return Elements(element_operator(rows_to_z, tets, grads), F0, vol)


def cubature(centroids: np.ndarray, measure: np.ndarray, most: int, dim: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``most`` of a body's elements (their ``centroids`` (E, 3) and areas or
    volumes ``measure`` (E,), ``dim`` 2 or 3) that stand for all of them: the largest in
    each cell of a grid over the centroids, weighed by its cell's measure over its own ->
    (the elements' indices, their weights). A smooth basis needs no more: its strain
    varies over a handle's width, not an element's."""
    if len(measure) <= most:
        return np.arange(len(measure)), np.ones(len(measure))
    lo = centroids.min(axis=0)
    step = (measure.sum() / most) ** (1.0 / dim)
    for _ in range(16):  # the cells a body occupies: about its measure over a cell's
        label = _cells(centroids, lo, step)
        if label.max() + 1 <= 1.25 * most:
            break
        step *= 1.15
    order = np.lexsort((-measure, label))  # by cell, the largest first
    first = order[np.r_[0, np.flatnonzero(np.diff(label[order])) + 1]]
    total = np.bincount(label, weights=measure)
    keep = first[measure[first] > 0]
    return keep, total[label[keep]] / measure[keep]


def centred_cubature(centroids: np.ndarray, measure: np.ndarray, most: int,
                     origin: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray] | None:
    """One point for each cell of a grid ``step`` wide from ``origin`` over a body's elements
    (their ``centroids`` (E, 3) and volumes ``measure`` (E,)): the centre of volume of the
    elements in it, standing for their volume -> (points (C, 3), measures (C,)), or None
    where there would be more than ``most``. A cell's centre of volume measures a strain
    linear across it exactly; its largest element (``cubature``) sits off that centre, and
    the same way in every cell of a lattice."""
    label = _cells(centroids, origin, step)
    if label.max(initial=-1) + 1 > most:
        return None
    total = np.bincount(label, weights=measure)
    at = np.stack([np.bincount(label, weights=measure * centroids[:, c]) for c in range(3)],
                  axis=1)
    keep = total > 0
    return at[keep] / total[keep, None], total[keep]


def _cells(points: np.ndarray, origin: np.ndarray, step: float) -> np.ndarray:
    """(P,) each point's cell of a grid ``step`` wide from ``origin``, numbered from 0 over
    the cells the points occupy."""
    cell = np.floor((points - origin) / step).astype(np.int64)
    return np.unique(cell, axis=0, return_inverse=True)[1].reshape(-1)


def triangles(vertices: np.ndarray, faces: np.ndarray, thickness: float,
              rows_to_z: sp.csr_matrix, weight: np.ndarray | None = None) -> Elements:
    """Elements of a sheet's triangles (degenerate ones dropped), each standing for
    ``weight`` x its own area (default 1); F0 is each triangle's orthonormal in-plane
    frame (3, 2)."""
    weight = np.ones(len(faces)) if weight is None else np.asarray(weight, np.float64)
    x = vertices[faces]
    e1, e2 = x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]
    n = np.cross(e1, e2)
    area2 = np.linalg.norm(n, axis=1)
    ok = area2 > 1e-12 * max(float(np.max(area2, initial=0.0)), 1e-30)
    e1, e2, n, area2, faces, weight = e1[ok], e2[ok], n[ok], area2[ok], faces[ok], weight[ok]
    t1 = e1 / np.linalg.norm(e1, axis=1, keepdims=True)
    t2 = np.cross(n / area2[:, None], t1)
    frame = np.stack([t1, t2], axis=2)  # (E, 3, 2)
    Dm = np.stack([np.einsum("eci,ec->ei", frame, e1), np.einsum("eci,ec->ei", frame, e2)],
                  axis=2)  # (E, 2, 2): columns are the edges in the frame
    inv = np.linalg.inv(Dm)
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)  # (E, 3, 2)
    return Elements(element_operator(rows_to_z, faces, grads), frame,
                    0.5 * area2 * thickness * weight, faces=faces)


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
        compiled pass (``deform/kernels.py``; a solid's elements start at F0 = I)."""
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
        pass (``deform/kernels.py``)."""
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


def smooth_solid(basis_points: np.ndarray, weights: sp.csr_matrix, centres: np.ndarray,
                 at: np.ndarray, volume: np.ndarray, k: int = 11,
                 index: np.ndarray | None = None) -> Elements:
    """Cubature points ``at`` (E, 3) of a solid, each standing for ``volume`` (E,), with the
    deformation gradient of the smooth handle field itself: dF = sum_h w_h A_h +
    (A_h (X - c_h) + t_h) grad w_h^T, the weights' gradients fitted by moving least squares
    (linear, Gaussian) over the ``k`` nearest basis points (a solid's lattice nodes: a
    3D grid, where a surface's vertices would be a sheet). Unlike linear tetrahedra, two
    or three across a beam, this does not lock in bending; a wider fit smooths the weights
    and softens it (benchmarks/bench_beam.py: clamped boxes of aspect 5-40 bend within
    12 % of Euler-Bernoulli at k = 11, 16-18 % too far at k = 16). ``index``: the basis
    points' own numbers (the Elements keep each point's k nearest by them)."""
    from scipy.spatial import cKDTree

    dist, near = cKDTree(basis_points).query(at, k=k)
    h = np.maximum(dist[:, -1:], 1e-12)
    g = np.exp(-2.0 * (dist / h) ** 2)  # (E, k)
    rel = basis_points[near] - at[:, None, :]  # (E, k, 3)
    X = np.concatenate([np.ones((*near.shape, 1)), rel], axis=2)  # (E, k, 4)
    XtW = X.transpose(0, 2, 1) * g[:, None, :]
    coef = np.linalg.solve(XtW @ X + 1e-12 * np.eye(4), XtW)  # (E, 4, k): value, gradient
    e = len(at)
    rows = np.repeat(np.arange(e), k)
    val_op = sp.csr_matrix((coef[:, 0].reshape(-1), (rows, near.reshape(-1))),
                           shape=(e, len(basis_points)))
    w = (val_op @ weights).tocoo()  # (E, H) weights at the points (MLS values)
    grads = [(sp.csr_matrix((coef[:, 1 + j].reshape(-1), (rows, near.reshape(-1))),
                            shape=(e, len(basis_points))) @ weights) for j in range(3)]
    data, r_idx, c_idx = [], [], []
    for j in range(3):  # row (p, j) of D
        gj = grads[j].tocoo()
        rel_c = at[gj.row] - centres[gj.col]  # (nnz, 3)
        for i in range(3):  # (X - c_h)_i d_j w_h -> column 4h + i
            data.append(rel_c[:, i] * gj.data)
            r_idx.append(gj.row * 3 + j)
            c_idx.append(4 * gj.col + i)
        data.append(gj.data)  # t_h d_j w_h -> column 4h + 3
        r_idx.append(gj.row * 3 + j)
        c_idx.append(4 * gj.col + 3)
        data.append(w.data)  # w_h A_h[c, j] -> column 4h + j
        r_idx.append(w.row * 3 + j)
        c_idx.append(4 * w.col + j)
    D = sp.csr_matrix((np.concatenate(data), (np.concatenate(r_idx), np.concatenate(c_idx))),
                      shape=(3 * e, 4 * len(centres)))
    D.sum_duplicates()
    F0 = np.broadcast_to(np.eye(3), (e, 3, 3)).copy()
    near = near if index is None else np.asarray(index)[near]
    return Elements(D, F0, np.asarray(volume, np.float64), at=np.asarray(at, np.float64),
                    near=near)
