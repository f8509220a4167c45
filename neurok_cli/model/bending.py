"""A sheet's softest bends, as extra reduced coordinates beside the decoder's.

The learned decoder cannot draw a fold: a sheet hung by an edge swung on it as a rigid card
(mean dihedral change 0.004 rad where the engine's sheet, bending in the wind, had 0.041).
Cloth is nearly free to bend (its bending stiffness is its stretch stiffness x (thickness /
length)², ~1e-4 for a 2 mm sheet a few cm across), so its motion is mostly in its smoothest
out-of-plane fields. They are the low eigenvectors of the points' graph Laplacian (smooth
scalar fields w on the sheet, lowest first), moved along the surface normal: x_i + w_i n_i.
The constant and the linear fields are rigid moves (a shift and two small turns), which the
floating frame carries already; they are removed, so every mode bends.

Moved along the normal alone, a bent sheet grows: a strip of length L lifted at one end by h
becomes sqrt(L² + h²) long, and the springs resist the bend as if it were a stretch. Each pair
of modes therefore also gets a second-order term, the in-plane pull that keeps every edge's
length to second order (the modal derivatives of Barbič and James, 2005, for a spring
graph): the shape is x(q) = p + Σ q_a B_a + ½ Σ q_a q_b U_ab (see :func:`bending_derivatives`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

AMPLITUDE = 0.1  # a mode's largest displacement per unit coordinate, x the sheet's size
GRAPH_NEIGHBOURS = 8  # the Laplacian's graph: each point to its nearest ones


def bending_modes(points: np.ndarray, normals: np.ndarray, mass: np.ndarray, m: int
                  ) -> Tensor:
    """m bending modes (Q, 3, m) of a sheet sampled at points (Q, 3) with unit normals
    (Q, 3) and lumped masses (Q,): smooth out-of-plane fields without their rigid part,
    each scaled so its largest displacement is AMPLITUDE x the sheet's size."""
    Q = len(points)
    size = float(np.ptp(points, axis=0).max()) or 1.0
    d = np.linalg.norm(points[:, None] - points[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1)[:, :min(GRAPH_NEIGHBOURS, Q - 1)]
    W = np.zeros((Q, Q))
    rows = np.repeat(np.arange(Q), near.shape[1])
    h = np.median(d[rows, near.reshape(-1)])
    W[rows, near.reshape(-1)] = np.exp(-(d[rows, near.reshape(-1)] / h) ** 2)
    W = np.maximum(W, W.T)
    L = np.diag(W.sum(1)) - W
    # mass-weighted: L v = lambda M v, symmetric form M^-1/2 L M^-1/2
    s = 1.0 / np.sqrt(mass)
    _, vecs = np.linalg.eigh(s[:, None] * L * s[None, :])
    fields = s[:, None] * vecs  # (Q, Q), smoothest first
    centred = points - (mass[:, None] * points).sum(0) / mass.sum()
    rigid = np.concatenate([np.ones((Q, 1)), centred], axis=1)  # constant and linear
    sw = np.sqrt(mass)[:, None]
    proj = rigid * sw
    basis, _ = np.linalg.qr(proj)
    modes = []
    for j in range(Q):
        w = fields[:, j] * sw[:, 0]
        w = w - basis @ (basis.T @ w)
        if np.linalg.norm(w) < 1e-6 * np.linalg.norm(fields[:, j] * sw[:, 0]):
            continue  # a rigid field
        w = w / sw[:, 0]
        modes.append(w / np.abs(w).max() * AMPLITUDE * size)
        if len(modes) == m:
            break
    w = np.stack(modes, axis=1) if modes else np.zeros((Q, 0))
    return torch.as_tensor(normals[:, :, None] * w[:, None, :], dtype=torch.float64)


def bending_derivatives(points: np.ndarray, modes: Tensor, edges: np.ndarray,
                        ridge: float = 1e-6) -> Tensor:
    """The second-order terms U (Q, 3, m, m) that keep the lengths of ``edges`` (E, 2) between
    ``points`` (Q, 3) when the sheet bends along ``modes`` (Q, 3, m): with x = p + B q +
    ½ U[q, q], an edge d = p_i - p_j changes its squared length by Σ q_a q_b (ΔB_a·ΔB_b +
    d·ΔU_ab) to second order, so d·ΔU_ab = -ΔB_a·ΔB_b on every edge, in least squares (the
    system is underdetermined: a rigid move of U changes no length, and a small ``ridge`` x
    the mean squared edge length picks the least move). Symmetric in the last two axes (a
    sheet is never clamped, see body.holds_frame: no point is held fixed here)."""
    Q, _, m = modes.shape
    if m == 0 or len(edges) == 0:
        return torch.zeros(Q, 3, m, m, dtype=torch.float64)
    d = points[edges[:, 0]] - points[edges[:, 1]]  # (E, 3)
    E = len(edges)
    A = np.zeros((E, Q, 3))  # row e: d·(U_i - U_j)
    A[np.arange(E), edges[:, 0]] = d
    A[np.arange(E), edges[:, 1]] -= d
    A = A.reshape(E, 3 * Q)
    B = modes.numpy()
    dB = B[edges[:, 0]] - B[edges[:, 1]]  # (E, 3, m)
    rhs = -np.einsum("eia,eib->eab", dB, dB).reshape(E, m * m)
    normal = A.T @ A + ridge * float((d**2).sum(1).mean()) * np.eye(3 * Q)
    right = A.T @ rhs
    U = np.linalg.solve(normal, right).reshape(Q, 3, m, m)
    return torch.as_tensor(0.5 * (U + U.transpose(0, 1, 3, 2)), dtype=torch.float64)
