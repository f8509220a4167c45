"""The decoder as a map from reduced coordinates to the dynamics points, in closed form.

Integrating the Euler–Lagrange equations needs, at every right-hand-side evaluation, the
points' positions x(q), the Jacobian J = dx/dq and the curvature term (d²x/dq²)[q̇, q̇]. Taking
them from the transformer decoder costs one batched decoder pass of 2 k_q + 3 latents per
evaluation (measured: 12–50 ms on this CPU for the small model), thousands of times per clip.
Instead we fit, once per object, the decoder's values over the region of latent space the
motion visits by a quadratic polynomial in q,

    x(q) = x0 + A q + ½ B[q, q],     J(q) = A + B[q, ·],     (d²x/dq²)[q̇, q̇] = B[q̇, q̇],

by least squares on decoded samples (the quadratic terms are the "modal derivatives" of
reduced-order elasticity, here of a learned map). Frames are still decoded by the network;
the fit's residual is measured on held-out samples and along every run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from ..errors import UsageError


def _pairs(k: int) -> tuple[Tensor, Tensor]:
    idx = torch.triu_indices(k, k)
    return idx[0], idx[1]


def quadratic_features(q: Tensor) -> Tensor:
    """q (S, k) -> (S, k + k(k+1)/2): q, then q_a q_b for a <= b."""
    a, b = _pairs(q.shape[-1])
    return torch.cat([q, q[:, a] * q[:, b]], dim=-1)


class ReducedShape(NamedTuple):
    """x(q) = rest + linear q + ½ quadratic[q, q] at Q points (any units, any frame)."""

    rest: Tensor  # (Q, 3)
    linear: Tensor  # (Q, 3, k)
    quadratic: Tensor  # (Q, 3, k, k), symmetric in the last two axes

    @property
    def dims(self) -> int:
        return self.linear.shape[-1]

    # plain matrix products rather than einsum: these run several times per ODE evaluation
    # on small tensors, where einsum's own overhead outweighs the arithmetic

    def positions(self, q: Tensor) -> Tensor:
        """q (S, k) -> (S, Q, 3)."""
        Q, k = self.rest.shape[0], self.dims
        lin = (q @ self.linear.reshape(Q * 3, k).T).view(-1, Q, 3)
        return self.rest + lin + 0.5 * self.curvature(q)

    def jacobian(self, q: Tensor) -> Tensor:
        """dx/dq at q (S, k) -> (S, Q, 3, k)."""
        Q, k = self.rest.shape[0], self.dims
        bq = (self.quadratic.reshape(Q * 3 * k, k) @ q.T).T  # (S, Q 3 k)
        return self.linear + bq.reshape(-1, Q, 3, k)

    def curvature(self, qdot: Tensor) -> Tensor:
        """(d²x/dq²)[q̇, q̇] for q̇ (S, k) -> (S, Q, 3); independent of q for a quadratic."""
        Q, k = self.rest.shape[0], self.dims
        outer = (qdot[:, :, None] * qdot[:, None, :]).reshape(-1, k * k)  # (S, k k)
        return (outer @ self.quadratic.reshape(Q * 3, k * k).T).view(-1, Q, 3)

    def scaled(self, factor: float, rest: Tensor) -> ReducedShape:
        """The same map with displacements times ``factor`` about a new ``rest`` (Q, 3)."""
        return ReducedShape(rest, self.linear * factor, self.quadratic * factor)


class Fit(NamedTuple):
    shape: ReducedShape
    residual: float  # RMS error on held-out samples / RMS displacement of those samples


def fit_quadratic(displacement: Callable[[Tensor], Tensor], rest: Tensor, k: int, *,
                  radius: float = 1.0, generator: torch.Generator | None = None,
                  oversample: int = 3, held_out: int = 32) -> Fit:
    """Least-squares quadratic fit of ``displacement`` (q (S, k) -> (S, Q, 3), zero at q = 0).

    Samples q ~ N(0, radius² I) (plus ±radius along each axis), ``oversample`` times as many
    as there are coefficients, and measures the residual on ``held_out`` further samples.
    Everything is float64.
    """
    if k < 1 or radius <= 0:
        raise UsageError(f"fit_quadratic: need k >= 1 and radius > 0, got {k}, {radius}")
    n_feat = k + k * (k + 1) // 2
    n_fit = max(oversample * n_feat, 2 * k + 8)
    gen = generator or torch.Generator().manual_seed(0)
    noise = torch.randn(n_fit + held_out - 2 * k, k, generator=gen, dtype=torch.float64)
    axes = torch.cat([torch.eye(k, dtype=torch.float64), -torch.eye(k, dtype=torch.float64)])
    q = torch.cat([axes, noise]) * radius  # (S, k)
    with torch.no_grad():
        y = displacement(q).to(torch.float64)  # (S, Q, 3)
    Q = y.shape[1]
    phi = quadratic_features(q)  # (S, F)
    # QR, not torch.linalg.lstsq: that one gives different last bits from run to run on
    # CPU, and the same seed must give the same file
    qmat, rmat = torch.linalg.qr(phi[:n_fit])
    coef = torch.linalg.solve_triangular(rmat, qmat.T @ y[:n_fit].reshape(n_fit, -1),
                                         upper=True)  # (F, 3Q)
    test = phi[n_fit:] @ coef
    truth = y[n_fit:].reshape(held_out, -1)
    residual = float((test - truth).pow(2).mean().sqrt() / truth.pow(2).mean().sqrt().clamp_min(
        1e-30))
    linear = coef[:k].T.reshape(Q, 3, k)
    a, b = _pairs(k)
    quad = torch.zeros(Q, 3, k, k, dtype=torch.float64)
    c = coef[k:].T.reshape(Q, 3, -1)  # coefficient of q_a q_b
    # ½ B[q, q] = Σ_{a<=b} c_ab q_a q_b  ->  B_aa = 2 c_aa, B_ab = B_ba = c_ab (a < b)
    diag = a == b
    quad[:, :, a[diag], b[diag]] = 2.0 * c[:, :, diag]
    quad[:, :, a[~diag], b[~diag]] = c[:, :, ~diag]
    quad[:, :, b[~diag], a[~diag]] = c[:, :, ~diag]
    return Fit(ReducedShape(rest.to(torch.float64), linear, quad), residual)


def linear_modes(rest: Tensor, mass: Tensor, edges: Tensor, stiffness: Tensor, k: int, *,
                 fixed: Tensor | None = None, amplitude: float = 0.1) -> ReducedShape:
    """The baseline the learned map is measured against: the k lowest vibration modes of the
    spring network's elastic energy linearised at rest (K φ = λ M φ, rigid motions removed),
    as a linear map (no quadratic term).

    Args:
        rest: (P, 3) points; mass: (P,) lumped masses; edges: (E, 2); stiffness: (E,).
        fixed: (P,) bool, points held still (a clamp); else the body floats and the six
            rigid motions are projected out.
        amplitude: each mode is scaled so that q = 1 moves its farthest point this far
            times the points' extent.
    """
    P = rest.shape[0]
    rest, mass, stiffness = (x.to(torch.float64) for x in (rest, mass, stiffness))
    a, b = edges[:, 0], edges[:, 1]
    n = rest[a] - rest[b]
    n = n / n.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    block = stiffness[:, None, None] * n[:, :, None] * n[:, None, :]  # (E, 3, 3)
    K = torch.zeros(P, 3, P, 3, dtype=torch.float64)
    for i, j, s in ((a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)):
        K.index_put_((i[:, None, None], torch.arange(3)[None, :, None], j[:, None, None],
                      torch.arange(3)[None, None, :]), s * block, accumulate=True)
    K = K.reshape(3 * P, 3 * P)
    m = mass.repeat_interleave(3)
    free = torch.ones(3 * P, dtype=torch.bool) if fixed is None else \
        (~fixed.to(torch.bool)).repeat_interleave(3)
    if int(free.sum()) < k + (6 if fixed is None else 0):
        raise UsageError(f"linear_modes: {int(free.sum()) // 3} free points cannot give {k} "
                         "modes")
    # symmetric form: M^-1/2 K M^-1/2 over the free coordinates
    s = m[free].rsqrt()
    A = s[:, None] * K[free][:, free] * s[None, :]
    if fixed is None:  # project out the rigid motions (mass-orthonormal in this metric)
        c = (mass[:, None] * rest).sum(0) / mass.sum()
        r = rest - c
        rigid = torch.cat([torch.eye(3, dtype=torch.float64).repeat(P, 1, 1),
                           -torch.stack([torch.linalg.cross(torch.eye(3, dtype=torch.float64)
                                                            [i].expand(P, 3), r)
                                         for i in range(3)], dim=-1)], dim=-1)  # (P, 3, 6)
        basis = torch.linalg.qr(m.sqrt()[:, None] * rigid.reshape(3 * P, 6))[0]
        proj = torch.eye(3 * P, dtype=torch.float64) - basis @ basis.T
        A = proj @ A @ proj + (A.diagonal().max() * 1e3) * (basis @ basis.T)
    _, vecs = torch.linalg.eigh(A)
    modes = torch.zeros(3 * P, k, dtype=torch.float64)
    modes[free] = s[:, None] * vecs[:, :k]
    modes = modes.reshape(P, 3, k)
    flat = modes.reshape(3 * P, k)  # sign: largest entry positive, so runs repeat exactly
    modes = modes * torch.sign(flat.gather(0, flat.abs().argmax(dim=0, keepdim=True)))[0]
    extent = float((rest.max(0).values - rest.min(0).values).max())
    peak = modes.norm(dim=1).max(dim=0).values.clamp_min(1e-30)  # (k,)
    modes = modes * (amplitude * extent / peak)
    return ReducedShape(rest, modes, torch.zeros(P, 3, k, k, dtype=torch.float64))
