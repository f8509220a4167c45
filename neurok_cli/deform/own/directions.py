"""The directions the handle coordinates may move in (docs/design.md, "The object's own shape
space"): those that carry mass and leave the pinned points where they are."""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

from ...errors import UsageError
from .mechanics import Mechanics

SPANNED = 1e-4  # a handle's direction carries mass if this share of its most massive one


def free_directions(mech: Mechanics) -> np.ndarray:
    """The handle coordinates' directions that move the object and leave its pinned points
    where they are: (4H, r) orthonormal columns, each within one handle (the identity
    where nothing is pinned and every direction moves mass). A handle's four coordinates
    move its mass only along the directions its mass points span (a sheet's handles: not
    along their normal; a solid's: not where only surface vertices lie; those carry no
    mass, and a push or a contact on them would fly off, so they are left out); a pinned
    region moves with its own handle alone, so its directions are also the null space of
    its points' rows (a pinned line keeps the turn about itself)."""
    basis = mech.basis
    H = basis.handles
    blocks = []
    for h in range(H):
        B = mech.M[4 * h:4 * h + 4, 4 * h:4 * h + 4]  # the mass of its own directions
        spread = math.sqrt(max(np.trace(B[:3, :3]) / max(B[3, 3], 1e-300), 1e-300))
        unit = np.array([1 / spread] * 3 + [1.0])  # its affine part in units of its size
        val, vec = np.linalg.eigh(B * unit[:, None] * unit[None, :])
        keep = vec[:, val > SPANNED * max(float(val[-1]), 1e-300)]
        block = np.eye(4)
        if keep.shape[1] < 4:  # directions that move no mass: left out
            block = np.linalg.qr(unit[:, None] * keep)[0]
        if h < len(mech.held):
            rows = basis.rows(mech.held[h]).toarray()[:, 4 * h:4 * h + 4] @ block
            if len(rows):
                _, sv, vt = np.linalg.svd(rows, full_matrices=True)
                block = block @ vt[int((sv > 1e-6 * sv[0]).sum()):].T
        blocks.append(block)
    r = sum(b.shape[1] for b in blocks)
    if not r:
        raise UsageError("the pins hold every part of the object: nothing is left to move")
    N = np.zeros((4 * H, r))
    col = 0
    for h, block in enumerate(blocks):
        N[4 * h:4 * h + 4, col:col + block.shape[1]] = block
        col += block.shape[1]
    return _without_massless(mech, N)


def _without_massless(mech: Mechanics, N: np.ndarray) -> np.ndarray:
    """N's span less the combinations of handles that move no mass: with handles
    overlapping on few points, some cancel there (their mass, against how far they could
    move a point). The object's own affine motions (every handle carrying one map, so its
    translations and turns) stay in the span: a combination dropped with a share of them
    took that share from every vertex the mass does not hold (a teapot's spout and handle,
    where the lattice has no nodes, fell slower than its body and its energy diverged on
    landing)."""
    H = mech.basis.handles
    reach = np.ones((H, 4))
    reach[:, :3] = np.asarray([np.trace(mech.M[4 * h:4 * h + 3, 4 * h:4 * h + 3]) /
                               max(mech.M[4 * h + 3, 4 * h + 3], 1e-300) / 3
                               for h in range(H)])[:, None]
    G = N.T @ (reach.reshape(-1)[:, None] * N)
    Mn = N.T @ mech.M @ N
    P = _massive(Mn, N.T @ _affine_rows(mech.basis.centres))  # (r, a) in N's coordinates
    # the rest of the span, G-orthogonal to the affine motions; its massless part dropped
    C = sla.null_space(P.T @ G) if P.shape[1] else np.eye(len(Mn))
    val, vec = sla.eigh(C.T @ Mn @ C, C.T @ G @ C)
    keep = val > SPANNED * max(float(val[-1]) if len(val) else 0.0, 1e-300)
    if keep.all():
        return N
    S = np.concatenate([P, C @ vec[:, keep]], axis=1)
    if not S.shape[1]:
        raise UsageError("the pins hold every part of the object: nothing is left to move")
    return N @ np.linalg.qr(S)[0]


def _affine_rows(centres: np.ndarray) -> np.ndarray:
    """(4H, 4) the handle coordinates' rows of the object's affine motions: Z = P [a^T; t^T]
    is the displacement u(x) = a x + t (see handles.affine_coords)."""
    H = len(centres)
    P = np.zeros((H, 4, 4))
    P[:, :3, :3] = np.eye(3)
    P[:, 3, :3] = centres
    P[:, 3, 3] = 1.0
    return P.reshape(4 * H, 4)


def _massive(Mn: np.ndarray, P: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the directions of P's span (r, a) that move mass (a sheet's
    affine motions move it along three of their four)."""
    if not P.size:
        return P
    Q, _ = np.linalg.qr(P)
    val, vec = np.linalg.eigh(Q.T @ Mn @ Q)
    top = max(float(val[-1]), 1e-300)
    return Q @ vec[:, val > SPANNED * top]
