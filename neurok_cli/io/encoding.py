"""Morph-target encoding of a clip: per-frame displacements factored into a few bases.

  - ``exact``: one basis per frame, each frame's weights one-hot.
  - ``compact``: K bases from the frames' principal directions, K the smallest that keeps every
    vertex within the tolerance (capped at ``max_targets``).
Weights are then rescaled to [0, 1] per basis (Blender clamps shape-key values to their slider
range), and the normals' deltas are fitted to the same weights.
"""

from __future__ import annotations

import numpy as np

ENCODINGS = ("compact", "exact")
_COLUMNS = 8192  # columns of the normals' least-squares fit at a time


def encode(disp: np.ndarray, *, encoding: str, tolerance: float, max_targets: int
           ) -> tuple[np.ndarray, np.ndarray, float]:
    """Factor displacements (T, N, 3) into bases (K, N, 3) and weights (T, K).

    Returns the bases, the weights and the largest vertex error (in the units of ``disp``).
    ``tolerance`` is absolute here.
    """
    t, n, _ = disp.shape
    if encoding == "exact":
        return disp.copy(), np.eye(t), 0.0
    a = disp.reshape(t, 3 * n)  # a copy where disp is strided: once, not per use
    disp = a.reshape(t, n, 3)
    if t <= 3 * n:  # the usual clip: far fewer frames than coordinates
        # the frames' principal directions from the small (t, t) Gram matrix, not an SVD of
        # the wide one (a 121-frame, 9,602-vertex clip: 3.3 s -> 0.9 s); bases = uᵀa needs
        # no division by singular values, so tiny ones cost no accuracy: uuᵀa is an exact
        # projection. Only the rows the search reaches are formed (_Residual).
        lam, u = np.linalg.eigh(a @ a.T)
        u = u[:, ::-1]
        residual = _Residual(disp, u)
        count = int((lam > 0).sum())
    else:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        residual = _Residual(disp, u, s[:, None] * vt)
        count = len(s)
    k = max(_smallest_within(residual, min(max_targets, count), tolerance), 1)
    return residual.rows_to(k).reshape(k, n, 3), u[:, :k], residual.largest(k)


def _smallest_within(residual: _Residual, most: int, limit: float) -> int:
    """The smallest k <= ``most`` whose reconstruction is within ``limit`` (``most`` if none
    is): k grows a step of rows at a time, so that rows beyond the answer are seldom formed,
    then a bisection inside the last step."""
    lo = 0  # the reconstructions below lo are not within
    while True:
        hi = min(lo + _Residual.STEP, most)
        if residual.within(hi, limit):
            break
        if hi == most:
            return most
        lo = hi + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if residual.within(mid, limit):
            hi = mid
        else:
            lo = mid + 1
    return lo


class _Residual:
    """The largest vertex error of a clip's rank-k reconstruction, found without forming the
    whole residual: by Cauchy-Schwarz a vertex's error in frame t is at most
    sqrt(sum_{i>=k} u_ti^2) sqrt(sum_{i>=k} |rows_iv|^2), so the vertices are visited in
    the order of that bound, a block at a time, and the search stops where the bound falls
    below the answer (a 121-frame, 100k-vertex clip: 5.5 s -> 0.4 s).

    The rows uᵀa are formed STEP at a time as k reaches them, and a vertex's tail
    sum_{i>=k} |rows_iv|^2 is its whole energy |a_v|^2 less the rows formed so far (a
    121-frame clip keeps ~47: the other rows cost as much again as the Gram matrix)."""

    BLOCK = 2048  # vertices per exact evaluation
    STEP = 16  # rows formed at a time

    def __init__(self, disp: np.ndarray, u: np.ndarray, rows: np.ndarray | None = None
                 ) -> None:
        t, n, _ = disp.shape  # disp (T, N, 3) = u (T, r) @ rows (r, 3N), u orthonormal
        r = u.shape[1]
        self.disp, self.u = disp, u
        self.rows = np.empty((r, n, 3))  # filled up to self.formed; untouched pages cost nothing
        self.formed = 0
        if rows is not None:
            self.rows[:] = rows.reshape(r, n, 3)
            self.formed = r
        energy = np.einsum("tvc,tvc->v", disp, disp)  # (N,) |a_v|^2
        # the tail's rounding (sums of positive terms: relative error ~1e-13 at most);
        # no entry of disp exceeds its largest singular value, sqrt of the largest energy
        self.energy, self.rounding = energy, 1e-12 * energy
        self.slack = 1e-12 * float(np.sqrt(energy.sum()))
        self.kept = np.zeros((r + 1, n))  # (r + 1, N) energy of the first k rows, per vertex
        self.kept_to = 0
        frames = np.cumsum((u**2)[:, ::-1], axis=1)[:, ::-1].max(axis=0, initial=0.0)
        self.frame_tail = np.append(frames, 0.0)  # (r + 1,) max over frames

    def rows_to(self, k: int) -> np.ndarray:
        """The first k rows (k, N, 3), formed STEP at a time as needed."""
        if k > self.formed:
            stop = min(max(k, self.formed + self.STEP), len(self.rows))
            t = len(self.u)
            a = self.disp.reshape(t, -1)
            # a contiguous copy of u's columns: a strided operand keeps NumPy off BLAS (7x)
            part = np.ascontiguousarray(self.u[:, self.formed:stop].T)
            self.rows[self.formed:stop] = (part @ a).reshape(stop - self.formed, -1, 3)
            self.formed = stop
        return self.rows[:k]

    def _tail(self, k: int) -> np.ndarray:
        """(N,) an upper bound of sum_{i>=k} |rows_iv|^2 per vertex."""
        rows = self.rows_to(k)
        if k > self.kept_to:
            part = np.einsum("rvc,rvc->rv", rows[self.kept_to:], rows[self.kept_to:])
            self.kept[self.kept_to + 1:k + 1] = self.kept[self.kept_to] + np.cumsum(part, 0)
            self.kept_to = k
        return np.maximum(self.energy - self.kept[k], 0.0) + self.rounding

    def _blocks(self, k: int):
        """(bound, exact errors) per block of vertices, largest bound first."""
        bound = np.sqrt(self.frame_tail[k] * self._tail(k)) * (1.0 + 1e-9) + self.slack
        order = np.argsort(-bound, kind="stable")
        t = len(self.u)
        for s in range(0, len(order), self.BLOCK):
            idx = np.sort(order[s:s + self.BLOCK])
            r = self.disp[:, idx] - (self.u[:, :k] @ self.rows[:k, idx].reshape(k, 3 * len(idx))
                                     ).reshape(t, len(idx), 3)
            yield bound[order[s]], float(np.sqrt((r * r).sum(-1)).max(initial=0.0))

    def within(self, k: int, limit: float) -> bool:
        """Whether every vertex of the rank-k reconstruction is within ``limit``."""
        for bound, err in self._blocks(k):
            if bound <= limit:
                return True
            if err > limit:
                return False
        return True

    def largest(self, k: int) -> float:
        """The largest vertex error of the rank-k reconstruction."""
        top = 0.0
        for bound, err in self._blocks(k):
            if bound <= top:
                break
            top = max(top, err)
        return top


def unit_weights(bases: np.ndarray, weights: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rescale each weight track to [0, 1]; return (bases', weights', base offset (N, 3))."""
    lo, hi = weights.min(axis=0), weights.max(axis=0)
    span = np.where(hi - lo > 1e-12, hi - lo, 1.0)
    offset = np.tensordot(lo, bases, axes=1)
    return bases * span[:, None, None], (weights - lo) / span, offset


def fit_normals(dn: np.ndarray, weights: np.ndarray, *, exact: bool) -> np.ndarray:
    """Normal deltas per target, (K + 1, N, 3): a constant c first, then nb with
    dn ~ c + weights @ nb (least squares). Exact encoding's weights are one-hot: c = 0."""
    t, n, _ = dn.shape
    if exact:
        return np.concatenate([np.zeros((1, n, 3)), dn.astype(np.float64)])
    x = np.concatenate([np.ones((t, 1)), weights], axis=1)
    # the minimum-norm least-squares solution through the small pseudo-inverse of x: the
    # same as lstsq's, without its per-column cost over the 3N right-hand sides
    pinv = np.linalg.pinv(x, rcond=np.finfo(np.float64).eps * max(x.shape))
    flat = dn.reshape(t, 3 * n)
    out = np.empty((len(pinv), 3 * n))
    for c in range(0, 3 * n, _COLUMNS):  # in float64 a block of columns at a time, not
        # a float64 copy of all of dn
        out[:, c:c + _COLUMNS] = pinv @ flat[:, c:c + _COLUMNS].astype(np.float64)
    return out.reshape(-1, n, 3)
