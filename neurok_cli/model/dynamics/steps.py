"""How long an RK4 step of the latent dynamics may be: the fastest elastic mode (and the
inertia that slows the modes too fast to show), the pins', the contact's and the latent
bound's rates, and how far one step may carry a reduced coordinate."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch
from torch import Tensor

ACCURACY = 0.3  # RK4 step x fastest elastic frequency: ~1e-5 of its energy lost per step
MAX_STRIDE = 0.1  # the most one step may move q, in units of the latent bound's radius
BURST = 2  # rk4 steps between two re-sizings of the step
MIN_STEP = 2e-3  # s: below this the accuracy bound gives way to the stability bound:
# modes up to ACCURACY / MIN_STEP = 150 rad/s (24 Hz, past the 15 Hz a 30 fps clip can
# show) are followed; faster ones, a small stiff body's squash, are kept stable
STABILITY = 1.5  # RK4 step x fastest contact/pin/damping rate (stable below ~2.8)


class _StepControl:
    """The rates and the step of :class:`~neurok_cli.model.dynamics.equations.LatentDynamics`
    (its methods, kept here): they read its metric, springs, pins and contact."""

    def elastic_rate(self) -> float:
        """The highest angular frequency (rad/s) of the reduced elastic modes at rest."""
        lam, _ = _modes(self.M0, self.K0)
        return float(lam.max().sqrt())

    def pin_rate(self) -> float:
        """The fastest pin oscillation (1/s) at rest: sqrt of the largest eigenvalue of
        M^-1 K_pin over the free coordinates, K_pin = sum_i k_i W_i^T W_i (the pins weigh
        the whole body, so this is far above the per-unit-mass pin rate)."""
        S = self.R_ref.shape[0]  # one row per motion: the frame is built for all of them
        y = self.initial_state(torch.zeros(S, self.k, dtype=torch.float64),
                               torch.zeros(S, self.k, dtype=torch.float64),
                               torch.zeros(3, dtype=torch.float64),
                               torch.zeros(3, dtype=torch.float64))
        fr = self._frame(y)
        W_all = fr["W"]
        idx = self._free_index
        W = self._anchors(fr)[2][0][:, :, idx]  # (P, 3, f)
        M = self._mass_matrix(W_all)[0][idx][:, idx]
        K = torch.einsum("pia,p,pib->ab", W, self.env.pin_rate**2 * self.pin_mass, W)
        L = torch.linalg.cholesky(M)
        Linv = torch.linalg.inv(L)
        lam = torch.linalg.eigvalsh(Linv @ K @ Linv.T)
        return float(lam.max().clamp_min(0).sqrt())

    def step_size(self, accuracy: float = ACCURACY, stability: float = STABILITY) -> float:
        """A fixed RK4 step (s): ``accuracy`` / the fastest elastic mode, so that it keeps
        its energy (RK4 loses ~(h w)^6 / 72 of it per step), and ``stability`` / the fastest
        dissipative rate (contact, pins, damping), which only has to stay stable."""
        omega = self.elastic_rate()
        fast = [self.env.beta * omega**2 + self.env.alpha]
        if self._pins:
            # the pins' damping is critical for their fastest mode (rate 2 omega, but both
            # eigenvalues at -omega) and lighter for the slower ones: omega bounds them all
            fast += [self.pin_omega]
        # accuracy for the slow modes; a mode too fast to follow at MIN_STEP is only kept
        # stable (RK4 then damps it numerically, as a real material's damping would)
        follow = max(accuracy / max(omega, 1e-9), min(MIN_STEP, STABILITY / max(omega, 1e-9)))
        return min(follow, stability / max(max(fast), 1e-9))

    def step_now(self, y: Tensor, base: float, t: float = 0.0) -> float:
        """``base``, shortened where the state asks for it: the fastest elastic mode at the
        current q (the metric and the springs change with q), and no step may carry a latent
        coordinate more than MAX_STRIDE of the latent bound's radius. ``t``: the time of y
        (so that the step that follows reuses this evaluation)."""
        fr = self._frame(y)
        J = fr["J"]  # (S, Q, 3, k)
        S, Qn, _, k = J.shape
        GJ = self.springs.diff(J.reshape(S, Qn, 3 * k)).view(S, -1, 3, k)
        K = self.springs.stiffness_matrix(self.springs.vectors(fr["p"]), GJ)
        if self.body.volume is not None:
            K = K + self.body.volume.stiffness(fr["p"], J)
        M_all = self._mass_matrix(fr["W"])
        M = M_all[:, 6:, 6:]
        L = torch.linalg.cholesky(M)
        Linv = torch.linalg.inv(L)
        lam = torch.linalg.eigvalsh(Linv @ K @ Linv.transpose(1, 2))
        omega = float(lam.max().clamp_min(0.0).sqrt())
        # |q̇| h + ½ |q̈| h² <= stride for every coordinate
        stride = MAX_STRIDE * self.q_radius
        qdd = self._evaluate(torch.tensor(t, dtype=y.dtype), y, fr)[:, 12 + self.k: 12 + 2 * self.k]
        speed, acc = fr["qd"].abs(), qdd.abs()
        h = 2 * stride / (speed + (speed**2 + 2 * acc * stride).sqrt()).clamp_min(1e-300)
        follow = max(ACCURACY / max(omega, 1e-9), min(MIN_STEP, STABILITY / max(omega, 1e-9)))
        # the free coordinates' metric, factored once for whichever of the two asks for it
        whiten = functools.cache(lambda: self._whitening(M_all))
        return min(base, follow, float(h.min()), self._contact_step(fr, whiten, base),
                   self._bound_step(fr["q"], whiten))

    def _whitening(self, M: Tensor) -> Tensor:
        """L⁻¹ (S, f, f) with L Lᵀ the metric over the free coordinates (the frame free to
        react), so that a stiffness K's frequencies² are the eigenvalues of L⁻¹ K L⁻ᵀ."""
        idx = self._free_index
        return torch.linalg.inv(torch.linalg.cholesky(M[:, idx][:, :, idx]))

    def _fastest(self, K: Tensor, whiten: Callable[[], Tensor]) -> float:
        """The largest frequency (rad/s) of stiffnesses K (S, f, f) over the metric."""
        Linv = whiten()
        lam = torch.linalg.eigvalsh(Linv @ K @ Linv.transpose(1, 2))[:, -1]
        return math.sqrt(max(float(lam.max()), 0.0))

    def _bound_step(self, q: Tensor, whiten: Callable[[], Tensor]) -> float:
        """STABILITY / the fastest frequency of the latent bound's springs on the coordinates
        at it or close enough to reach it within a burst (it is as stiff as the stiffest
        spring in the scene, and a soft body leans on it), over the metric of every free
        coordinate: the frame's reaction makes a coordinate lighter than its own block of M
        says."""
        near = q.abs() > (1.0 - BURST * MAX_STRIDE) * self.q_radius  # (S, k)
        if not bool(near.any()):
            return math.inf
        k = torch.zeros(q.shape[0], self.n, dtype=q.dtype)
        k[:, 6:] = torch.where(near, self.bound_stiffness, 0.0)
        omega = self._fastest(torch.diag_embed(k[:, self._free_index]), whiten)
        return STABILITY / max(omega, 1e-9)

    def _contact_step(self, fr: dict[str, Tensor], whiten: Callable[[], Tensor],
                      base: float) -> float:
        """STABILITY / the fastest contact rate among the points on or near the ground
        (within what they can fall in two base steps): stiffness sum_i k W_i^T y y^T W_i and
        damping over the metric."""
        if not self.env.ground:
            return math.inf
        x, xdot = fr["x"], fr["xdot"]
        near = x[..., 1] < 2 * base * xdot[..., 1].clamp_max(0).abs() + 1e-3 * (
            self.body.shape.rest.abs().max())  # (S, Q)
        if not bool(near.any()):
            return math.inf
        wy = (fr["R"][:, None, None, 1, :] @ fr["W"])[:, :, 0, self._free_index]  # (S, Q, f)
        wy = wy * near[..., None]  # the points off the ground add nothing
        kc = self.env.contact_rate**2 * self.contact_mass
        omega = self._fastest(kc * wy.transpose(1, 2) @ wy, whiten)
        rate = self.env.contact_rate
        damping = (2 * self.env.contact_damping + 1.0) * omega**2 / rate  # normal + friction
        return STABILITY / max(omega, damping, 1e-9)


def _modes(M: Tensor, K: Tensor) -> tuple[Tensor, Tensor]:
    """The elastic modes of stiffness K and mass M (k, k): squared frequencies (k,), not
    below 0, and the modes as columns (k, k), M-orthonormal (Vᵀ M V = I, Vᵀ K V = diag)."""
    L = torch.linalg.cholesky(M + 1e-12 * M.diagonal().mean() * torch.eye(len(M), dtype=M.dtype))
    Linv = torch.linalg.inv(L)
    lam, U = torch.linalg.eigh(Linv @ K @ Linv.T)
    return lam.clamp_min(0.0), Linv.T @ U


def _lifted_inertia(M: Tensor, K: Tensor, fastest: float) -> Tensor:
    """Inertia (k, k) that brings every elastic mode of (K, M) faster than ``fastest`` rad/s
    down to it and leaves the slower ones as they are (selective mass scaling, as explicit
    finite-element codes do). A wooden or plastic body's modes run at thousands of rad/s,
    nothing a clip can show, yet the explicit step had to follow the fastest: a wooden
    penguin's 4 s drop took 29,678 RK4 steps.
    With the inertia they vibrate at ``fastest``, where the step is MIN_STEP and RK4 damps
    them; the stiffness, so every static sag, is unchanged. The added inertia is constant,
    so the Lagrangian keeps its form (no Christoffel terms) and the energy books stay exact."""
    lam, V = _modes(M, K)
    extra = (lam / fastest**2 - 1.0).clamp_min(0.0)  # (k,): M v -> (1 + extra) M v
    MV = M @ V
    return (MV * extra) @ MV.T
