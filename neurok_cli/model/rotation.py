"""The rotation nearest to each of many 3 x 3 matrices, compiled (numba).

Skinning turns every driving point's neighbourhood by the rotation R maximising tr(Rᵀ H)
of its cross-covariance H, frame by frame: 121 frames of 530 points are 64k matrices.
LAPACK's SVD, called once per 3 x 3 matrix, took 0.15-0.19 s for them; a one-sided Jacobi
SVD per matrix in machine code takes ~0.035 s and agrees with it to rounding
(tests/model/test_rotation.py).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..jit import njit

SWEEPS = 12  # Jacobi sweeps at most; a 3 x 3 matrix converges to rounding in ~5
DEGENERATE = 1e-12  # second singular value below this x the first: R is not unique


@njit(cache=True)
def _nearest(H, R):
    """R[i] = U diag(1, 1, det(U Vᵀ)) Vᵀ of H[i] (n, 3, 3) from a one-sided Jacobi SVD
    (Hestenes: rotate H's columns pairwise until orthogonal; the rotations make V). The two
    largest singular pairs fix R = u1 v1ᵀ + u2 v2ᵀ + (u1 x u2)(v1 x v2)ᵀ, so a rank-2 H
    (a flat neighbourhood) needs no third left vector. Returns, per matrix, whether its
    second singular value vanishes (R is then not unique and left to the caller)."""
    eps = np.finfo(np.float64).eps
    a = np.empty((3, 3))  # a[j] = column j of H, rotated
    v = np.empty((3, 3))  # v[j] = right singular vector j
    sig = np.empty(3)
    u = np.empty((3, 3))  # rows u1, u2, u1 x u2
    w = np.empty((3, 3))  # rows v1, v2, v1 x v2
    bad = np.zeros(H.shape[0], np.bool_)
    for i in range(H.shape[0]):
        for j in range(3):
            for c in range(3):
                a[j, c] = H[i, c, j]
                v[j, c] = 1.0 if j == c else 0.0
        for _ in range(SWEEPS):
            worst = 0.0
            for p, q in ((0, 1), (0, 2), (1, 2)):
                alpha = a[p, 0] ** 2 + a[p, 1] ** 2 + a[p, 2] ** 2
                beta = a[q, 0] ** 2 + a[q, 1] ** 2 + a[q, 2] ** 2
                gamma = a[p, 0] * a[q, 0] + a[p, 1] * a[q, 1] + a[p, 2] * a[q, 2]
                if gamma == 0.0:
                    continue
                worst = max(worst, abs(gamma) / np.sqrt(alpha * beta))
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.hypot(1.0, zeta))
                cs = 1.0 / np.sqrt(1.0 + t * t)
                sn = cs * t
                for c in range(3):
                    ap, aq = a[p, c], a[q, c]
                    a[p, c], a[q, c] = cs * ap - sn * aq, sn * ap + cs * aq
                    vp, vq = v[p, c], v[q, c]
                    v[p, c], v[q, c] = cs * vp - sn * vq, sn * vp + cs * vq
            if worst <= eps:
                break
        for j in range(3):
            sig[j] = np.sqrt(a[j, 0] ** 2 + a[j, 1] ** 2 + a[j, 2] ** 2)
        lo = 0  # the smallest singular value's column; the other two in order
        for j in range(1, 3):
            if sig[j] < sig[lo]:
                lo = j
        j1, j2 = (1, 2) if lo == 0 else ((0, 2) if lo == 1 else (0, 1))
        if sig[j1] < sig[j2]:
            j1, j2 = j2, j1
        if not sig[j2] > DEGENERATE * sig[j1]:
            bad[i] = True
            continue
        for c in range(3):
            u[0, c] = a[j1, c] / sig[j1]
            u[1, c] = a[j2, c] / sig[j2]
            w[0, c], w[1, c] = v[j1, c], v[j2, c]
        for c in range(3):  # third columns: the cross products of the first two
            c1, c2 = (c + 1) % 3, (c + 2) % 3
            u[2, c] = u[0, c1] * u[1, c2] - u[0, c2] * u[1, c1]
            w[2, c] = w[0, c1] * w[1, c2] - w[0, c2] * w[1, c1]
        for r in range(3):
            for c in range(3):
                R[i, r, c] = u[0, r] * w[0, c] + u[1, r] * w[1, c] + u[2, r] * w[2, c]
    return bad


def nearest_rotation(H: Tensor) -> Tensor:
    """The rotation R maximising tr(Rᵀ H) for each H (..., 3, 3), float64 on the CPU (the
    Kabsch solution U diag(1, 1, det(U Vᵀ)) Vᵀ); where it is not unique (H's second
    singular value vanishes), the one LAPACK's SVD gives."""
    if H.device.type != "cpu" or H.dtype != torch.float64:
        return _svd_rotation(H)
    flat = np.ascontiguousarray(H.detach().numpy().reshape(-1, 3, 3))
    out = np.empty_like(flat)
    bad = _nearest(flat, out)
    R = torch.from_numpy(out).reshape(H.shape)
    if bad.any():
        where = torch.from_numpy(bad).reshape(H.shape[:-2])
        R[where] = _svd_rotation(H.detach()[where])
    return R


def _svd_rotation(H: Tensor) -> Tensor:
    """The same rotation from LAPACK's SVD, (..., 3, 3)."""
    U, _, Vh = torch.linalg.svd(H)
    flip = torch.ones_like(H[..., 0])
    flip[..., 2] = torch.sign(torch.det(U @ Vh))
    return (U * flip[..., None, :]) @ Vh


def warm() -> None:
    """Load (or, the first time, compile) the compiled function."""
    _nearest(np.eye(3)[None].copy(), np.empty((1, 3, 3)))
