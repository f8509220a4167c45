"""The material's elements in handle coordinates (docs/design.md, "The object's own shape
space"): a solid's cubature points with the smooth handle field's own deformation gradient,
a sheet's triangles, tetrahedra, and the cubature that picks a few of them to stand for all.

Elements are linear, so each deformation gradient is linear in the handle coordinates ``Z``
(4H, 3) (``deform/own/handles.py``): ``F_e = F0_e + (D @ Z)`` read per element. The laws that
read them are in ``deform/own/laws.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...scenario.conditions import SimMaterial


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
    # what D is built from, for the reduced model's description (deform/own/reduced_model.py):
    faces: np.ndarray | None = None  # (E, 3) a sheet's triangles (vertex indices)
    at: np.ndarray | None = None  # (E, 3) a smooth solid's points ...
    near: np.ndarray | None = None  # (E, k) ... and the basis points its fit reads

    def __post_init__(self):
        self.D = self.D.tocsr()  # (CSR: the compiled pass reads an element's rows in turn)

    def gradients(self, Z: np.ndarray) -> np.ndarray:
        """(E, 3, d) deformation gradients at ``Z`` (4H, 3): with ``pull`` and a law's
        ``energy_stress``, the NumPy definition the compiled pass (``energy_grad``,
        deform/own/kernels.py) is held to (tests/deform/test_step_terms.py)."""
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
