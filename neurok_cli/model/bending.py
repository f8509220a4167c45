"""A sheet's softest bends, as extra reduced coordinates beside the decoder's.

The learned decoder cannot draw a fold: a sheet hung by an edge swung on it as a rigid card
(mean dihedral change 0.004 rad where the engine's sheet, bending in the wind, had 0.041).
Cloth is nearly free to bend (its bending stiffness is its stretch stiffness x (thickness /
length)², ~1e-4 for a 2 mm sheet a few cm across), so its motion is mostly in its smoothest
out-of-plane fields. They are the low eigenvectors of the points' graph Laplacian (smooth
scalar fields w on the sheet, lowest first), moved along the surface normal: x_i + w_i n_i.
The constant and the linear fields are rigid moves (a shift and two small turns), which the
floating frame carries already; they are removed, so every mode bends.
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
