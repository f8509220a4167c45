"""Strain limiting: keep every mesh edge within a band around its rest length.

A decoder trained on vertex positions blurs what it cannot resolve: a cloth fold comes back
as a chord, which shortens the sheet, and a large latent step stretches a few edges of a soft
body by tens of percent. Neither shows much in the vertex error, both in the shape. The
remedy is the one cloth solvers have used since Provot (1995): after each frame is decoded,
edges outside ``[1 - limit, 1 + limit]`` times their rest length are brought back into the
band. Edge by edge (Jacobi) projection fixes a local spike in a few sweeps but needs
hundreds for a whole surface a percent too large; so each sweep here is a local-global step
(as in projective dynamics): every edge's target is its current vector clamped to the band,
and one linear solve with the graph's fixed Laplacian finds the positions nearest to all
targets at once, held weakly to the decoded ones. Edges inside the band target themselves,
so the motion the decoder gives at plausible strain passes unchanged.
"""

from __future__ import annotations

import numpy as np
import torch

from ..jit import njit
from .threads import one_thread_on

SWEEPS = 30  # local-global steps at most (shapes within TOL of their band stop sooner)
TOL = 1e-3  # relative to the rest length
CHUNK = 128  # shapes projected together; each chunk stops when all of its shapes are in
ANCHOR = 1e-6  # pull towards the decoded positions, relative to an edge's (unit) weight
MAX_POINTS = 4096  # the solve is dense: meant for driving points, not every vertex


def mesh_edges(faces: np.ndarray) -> np.ndarray:
    """Unique undirected edges (E, 2) of triangles (F, 3), each as (low, high)."""
    f = np.asarray(faces, np.int64)
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    return _unique_pairs(e)


def _unique_pairs(pairs: np.ndarray) -> np.ndarray:
    """np.unique(pairs, axis=0) of non-negative (E, 2) int64 pairs, through one int64 key
    per pair: the same rows in the same order, without sorting a structured view (600k
    edges of a 100k-vertex mesh: 0.4 s -> 0.05 s)."""
    if len(pairs) == 0:
        return pairs.reshape(0, 2)
    base = int(pairs.max()) + 1
    if base > 3_037_000_499:  # base**2 would overflow int64
        return np.unique(pairs, axis=0)
    key = np.unique(pairs[:, 0] * base + pairs[:, 1])
    return np.stack([key // base, key % base], axis=1)


def driving_graph(edges: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Edges between driving points whose regions touch on the mesh: ``owner`` (N,) gives
    each vertex's nearest driving point, and a mesh edge whose ends have different owners
    joins those two (a coarse copy of the mesh, following its surface, not space)."""
    pairs = np.sort(np.asarray(owner, np.int64)[np.asarray(edges, np.int64)], axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return _unique_pairs(pairs).reshape(-1, 2)


def edge_lengths(x: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """x (..., N, 3), edges (E, 2) -> lengths (..., E)."""
    return (x[..., edges[:, 1], :] - x[..., edges[:, 0], :]).norm(dim=-1)


def limit_strain(x: torch.Tensor, rest: torch.Tensor, edges: torch.Tensor | np.ndarray,
                 limit: float, iterations: int = SWEEPS, fixed: torch.Tensor | None = None,
                 tol: float = TOL) -> tuple[torch.Tensor, int]:
    """Project the shapes ``x`` (..., N, 3) towards edge strain ``|l / l0 - 1| <= limit``.

    ``rest`` (N, 3) gives the rest lengths l0 of ``edges`` (E, 2); ``fixed`` (N,) bool marks
    points held where they are (pins). Shapes are projected CHUNK at a time, each chunk
    until ``iterations`` sweeps or until no edge of it is more than ``tol`` (relative to l0)
    outside the band. Returns the projected shapes and the most sweeps a chunk took; ``x``
    is unchanged.

    On CPU it runs on one torch thread: the inverse and the products round differently on
    two, the stopping test turns that into a different sweep, and a penguin's clip moved by
    2.4e-7 m with the threads the decoding was given (which follow the machine's load).
    """
    with one_thread_on(x.device):
        return _limit_strain(x, rest, edges, limit, iterations, fixed, tol)


def _limit_strain(x: torch.Tensor, rest: torch.Tensor, edges: torch.Tensor | np.ndarray,
                  limit: float, iterations: int, fixed: torch.Tensor | None, tol: float
                  ) -> tuple[torch.Tensor, int]:
    if limit < 0:
        raise ValueError(f"strain limit must be >= 0, got {limit}")
    n = rest.shape[0]
    if n > MAX_POINTS:
        raise ValueError(f"limit_strain takes at most {MAX_POINTS} points, got {n}")
    edges = torch.as_tensor(edges, dtype=torch.long, device=x.device).reshape(-1, 2)
    free = torch.ones(n, dtype=torch.bool, device=x.device)
    if fixed is not None:
        free &= ~torch.as_tensor(fixed, dtype=torch.bool, device=x.device)
    if len(edges) == 0 or iterations <= 0 or not free.any():
        return x.clone(), 0
    rest = rest.to(x)
    length0 = edge_lengths(rest, edges).clamp_min(1e-12)[:, None]  # (E, 1)
    # B x = edge vectors x_j - x_i; each edge weighted by 1 / l0^2 (relative strain), scaled
    # to a mean of 1 so that ANCHOR is relative to it
    e_n = len(edges)
    rows = torch.arange(e_n, device=x.device).repeat(2)
    ones = torch.ones(e_n, dtype=x.dtype, device=x.device)
    B = torch.sparse_coo_tensor(torch.stack([rows, torch.cat([edges[:, 1], edges[:, 0]])]),
                                torch.cat([ones, -ones]), (e_n, n),
                                check_invariants=True).coalesce()
    weight = length0[:, 0].pow(-2)
    weight = (weight / weight.mean())[:, None]
    Bd = B.to_dense()
    A = Bd.T @ (weight * Bd) + ANCHOR * torch.eye(n, dtype=x.dtype, device=x.device)
    # the held points are known: solve for the free ones only, with one inverse for all
    system = _Band(B, edges, weight, torch.linalg.inv(A[free][:, free]), A[free][:, ~free],
                   free, length0, limit, tol)
    flat0 = x.reshape(-1, n, 3).permute(1, 0, 2).reshape(n, -1)  # (N, 3K): shapes side by side
    parts = [system.project(chunk, iterations) for chunk in flat0.split(3 * CHUNK, dim=1)]
    flat = torch.cat([p for p, _ in parts], dim=1)
    out = flat.reshape(n, -1, 3).permute(1, 0, 2).reshape(x.shape)
    return out.contiguous(), max(k for _, k in parts)


class _Band:
    """One graph's local-global projection onto its strain band (see limit_strain)."""

    def __init__(self, B, edges, weight, solve, couple, free, length0, limit, tol):
        self.B, self.weight, self.solve, self.couple, self.free = B, weight, solve, couple, free
        self.length0, self.tol = length0, tol
        self.lo, self.hi = length0 * (1.0 - limit), length0 * (1.0 + limit)
        self.compiled = solve.device.type == "cpu" and solve.dtype == torch.float64
        if self.compiled:  # the edge loop in machine code: arrays for it
            as_np = lambda t: np.ascontiguousarray(t.reshape(-1).numpy())  # noqa: E731
            self.arrays = (as_np(edges[:, 0]), as_np(edges[:, 1]), as_np(self.lo),
                           as_np(self.hi), as_np(length0), as_np(weight))

    def project(self, flat0: torch.Tensor, iterations: int) -> tuple[torch.Tensor, int]:
        """Shapes side by side (N, 3K) -> projected (N, 3K), sweeps taken."""
        e_n, free = self.B.shape[0], self.free
        flat = flat0.clone()
        held = self.couple @ flat0[~free]
        anchor = ANCHOR * flat0
        rhs = torch.empty_like(flat0) if self.compiled else None
        sweeps = 0
        for sweeps in range(1, iterations + 1):
            if self.compiled:  # edges clamped to the band and gathered at their ends at once
                flat = flat.contiguous()
                worst = _local(flat.numpy(), *self.arrays, rhs.numpy())
                if worst <= self.tol:
                    return flat, sweeps - 1
                rhs += anchor
            else:
                d = (self.B @ flat).reshape(e_n, -1, 3)
                length = d.norm(dim=-1).clamp_min(1e-12)  # (E, K)
                target = torch.minimum(torch.maximum(length, self.lo), self.hi)
                if float(((length - target).abs() / self.length0).max()) <= self.tol:
                    return flat, sweeps - 1
                p = d * (target / length)[..., None]  # each edge's vector, clamped to the band
                rhs = self.B.t() @ (self.weight * p.reshape(e_n, -1)) + anchor
            flat[free] = self.solve @ (rhs[free] - held)
        return flat, sweeps


@njit(cache=True)
def _local(flat, e0, e1, lo, hi, length0, weight, rhs):
    """The local step of :meth:`_Band.project` for shapes side by side ``flat`` (N, 3K):
    each edge's vector clamped to its band, weighted, summed into ``rhs`` (N, 3K) at its
    ends (Bᵀ W p); returns the largest distance of an edge from its band, relative to its
    rest length (the stopping test, on the shapes before the step)."""
    rhs[:] = 0.0
    worst = 0.0
    for e in range(e0.shape[0]):
        i, j = e0[e], e1[e]
        for c in range(0, flat.shape[1], 3):
            dx, dy = flat[j, c] - flat[i, c], flat[j, c + 1] - flat[i, c + 1]
            dz = flat[j, c + 2] - flat[i, c + 2]
            length = max(np.sqrt(dx * dx + dy * dy + dz * dz), 1e-12)
            target = min(max(length, lo[e]), hi[e])
            worst = max(worst, abs(length - target) / length0[e])
            r = target / length
            px, py, pz = weight[e] * (dx * r), weight[e] * (dy * r), weight[e] * (dz * r)
            rhs[j, c] += px
            rhs[j, c + 1] += py
            rhs[j, c + 2] += pz
            rhs[i, c] -= px
            rhs[i, c + 1] -= py
            rhs[i, c + 2] -= pz
    return worst


def warm() -> None:
    """Load (or, the first time, compile) the compiled local step."""
    one = np.ones(1)
    _local(np.zeros((2, 3)), np.zeros(1, np.int64), np.ones(1, np.int64), one, one, one, one,
           np.zeros((2, 3)))
