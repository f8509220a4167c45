"""Lagrangian mechanics in an object's reduced latent coordinates (docs/design.md, "Dynamics").

Generalized coordinates: a floating frame (translation r, rotation R = R_ref Exp(θ)) that the
deformation rides on, and the reduced latent coordinates q of the object's active subspace.
The Q dynamics points sit at

    x_i = c + r + R p_i(q),      p_i(q) = body-frame position from the decoder (ReducedShape),

and the generalized velocities are (v = ṙ, ω body angular velocity, q̇). With W_i = ∂ẋ_i/∂(v, ω, q̇)
the equations of motion (Lagrange's, in Kane's form, exact for these quasi-velocities) read

    Σ m_i W_iᵀ W_i · a = Σ W_iᵀ (f_i − m_i R b_i) − D q̇,
    b_i = ω×(ω×p_i) + 2 ω×(J_i q̇) + (d²p_i/dq²)[q̇, q̇]   (centripetal, Coriolis, Christoffel),

i.e. G a + C(q, q̇) = Q with G = JᵀMJ the pull-back metric of the lumped masses. Forces f_i:
gravity; elastic springs over a k-nearest-neighbour graph of the dynamics points (internal,
so they act on q alone), and for a slender body a centreline that carries its stretch and
bending (see :class:`Centreline`); ground contact as a penalty with damping and capped
viscous friction; pins as stiff world-space springs (each at its point, or at an anchor the
frame carries at a fixed offset from it: a joint); wind as pressure on each point's
area, all mapped to generalized forces by virtual work. Rayleigh damping D = α M_qq + β K_qq
(at rest).

The state also carries the dissipated energy and the external work, so every run can check
that kinetic + potential + dissipated − work stays constant. The step control lives in
model/dynamics/steps.py; model/dynamics/rollout.py integrates these equations in time.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor, nn

from ...errors import UsageError
from .bodies import Body, Environment, _Springs
from .steps import MIN_STEP, STABILITY, _lifted_inertia, _StepControl

GUST_HZ = 0.7  # frequency of the wind's gust modulation (as the engine's)
LATENT_INERTIA = 0.02  # see LatentDynamics.__init__
BOUND_RATE = 3.0  # frequency of the latent bound, in multiples of the fastest elastic mode
CONTACT_SHARE = 16.0  # see LatentDynamics.contact_mass
FASTEST_MODE = STABILITY / MIN_STEP  # rad/s: elastic modes past this are given inertia


_LEVI_CIVITA = torch.zeros(3, 3, 3, dtype=torch.float64)
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI_CIVITA[_i, _j, _k], _LEVI_CIVITA[_i, _k, _j] = 1.0, -1.0
_SKEW = -_LEVI_CIVITA.permute(2, 0, 1).reshape(3, 9)  # skew(v) = v @ _SKEW, as (3, 3)


def skew(v: Tensor) -> Tensor:
    """(..., 3) -> (..., 3, 3) with skew(a) @ b = a x b (one matrix product: it runs several
    times per ODE evaluation)."""
    return (v @ _SKEW.to(dtype=v.dtype, device=v.device)).view(*v.shape[:-1], 3, 3)


class _Skew(NamedTuple):
    """What the maps of a rotation vector θ share: [θ]x, [θ]x² and |θ|² (..., 1, 1)."""

    K: Tensor
    K2: Tensor
    a2: Tensor

    @classmethod
    def of(cls, theta: Tensor) -> _Skew:
        K = skew(theta)
        return cls(K, K @ K, (theta * theta).sum(-1)[..., None, None])


_EYE3 = torch.eye(3, dtype=torch.float64)
_UP = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
_HORIZONTAL = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)


def exp_so3(theta: Tensor, sk: _Skew | None = None) -> Tensor:
    """Rotation vectors (..., 3) -> rotation matrices (..., 3, 3) (Rodrigues; exact at 0)."""
    # sin(a)/a = sinc(a/pi) and (1 - cos a)/a^2 = sinc(a/2pi)^2 / 2: no branch at a = 0
    sk = sk or _Skew.of(theta)
    a = theta.norm(dim=-1)[..., None, None] / math.pi
    return _EYE3.to(theta) + torch.sinc(a) * sk.K + (0.5 * torch.sinc(0.5 * a) ** 2) * sk.K2


def inv_right_jacobian(theta: Tensor, sk: _Skew | None = None) -> Tensor:
    """J_r(θ)⁻¹ (..., 3, 3): θ̇ = J_r⁻¹ ω for body angular velocity ω (series, |θ| < 1)."""
    sk = sk or _Skew.of(theta)
    a2 = sk.a2
    return _EYE3.to(theta) + 0.5 * sk.K + (1.0 / 12.0 + a2 / 720.0 + a2 * a2 / 30240.0) * sk.K2


class LatentDynamics(_StepControl, nn.Module):
    """dy/dt = f(t, y) for S motions of one body; y (S, 2n + 2), n = 6 + k:
    [r (3), θ (3), q (k), v (3), ω (3), q̇ (k), dissipated energy, external work]."""

    def __init__(self, body: Body, env: Environment, samples: int = 1) -> None:
        super().__init__()
        f64 = dict(dtype=torch.float64)
        self.body, self.env = body, env
        self.k = body.shape.dims
        self.n = 6 + self.k
        self.register_buffer("R_ref", torch.eye(3, **f64).expand(samples, 3, 3).clone())
        self.g = torch.tensor(env.gravity, **f64)
        self.wind = torch.tensor(env.wind, **f64)
        self.springs = _Springs(body)
        n_pins = int(body.pinned.sum())
        self.pin_offset = torch.zeros(n_pins, 3, **f64) if body.pin_offset is None \
            else body.pin_offset.to(**f64)
        if tuple(self.pin_offset.shape) != (n_pins, 3):
            raise UsageError(f"pin_offset must be ({n_pins}, 3), one row per pinned point, "
                             f"got {tuple(self.pin_offset.shape)}")
        self._joint = bool(self.pin_offset.any())  # else the anchors are the points
        # (P, 3) world: where each pin holds its anchor
        self.pin_target = body.centre + body.shape.rest[body.pinned] - self.pin_offset
        # each pin holds an equal share of the whole body's weight (a pinned region can be a
        # sliver of the mass: the engine's clamped nodes are infinitely stiff)
        self.pin_mass = torch.full((n_pins,), float(body.mass.sum()) / max(n_pins, 1),
                                   **f64)
        # every point touching the ground is a spring sized for CONTACT_SHARE of the weight,
        # whatever its own lumped mass, so that resting on a few points does not sink
        self.contact_mass = float(body.mass.sum()) / CONTACT_SHARE
        self.free = torch.ones(6 + self.k, dtype=torch.bool)
        if body.clamped:
            self.free[:6] = False
        # fixed for the run: asked once here rather than on every evaluation
        self._free_index = torch.nonzero(self.free)[:, 0]
        self._all_free, self._pins = bool(self.free.all()), bool(body.pinned.any())
        self._windy = bool(self.wind.any())
        # air resists every motion through it, wind or not: a sheet swinging in still air
        # is damped and settles (undamped, it swung through 180 degrees like a rigid card)
        self._air = self._windy or (env.still_air and env.air_density * env.drag > 0)
        self._mass1 = body.mass[None, :, None]  # (1, Q, 1)
        self._mass3 = body.mass.repeat_interleave(3)[None, :, None]  # (1, Q 3, 1)
        self._weight = body.mass[:, None] * self.g  # (Q, 3) gravity on each point
        self._pin_index = torch.nonzero(body.pinned)[:, 0]
        self.mass_total = float(body.mass.sum())
        # Rayleigh damping from the metric and the elastic Hessian at rest
        A = body.shape.linear  # (Q, 3, k)
        Q = A.shape[0]
        GA = self.springs.diff(A.reshape(1, Q, 3 * self.k)).view(1, -1, 3, self.k)
        self.K0 = self.springs.stiffness_matrix(self.springs.vectors(body.shape.rest[None]),
                                                GA)[0]  # (k, k)
        if body.volume is not None:
            self.K0 = self.K0 + body.volume.stiffness(body.shape.rest[None], A[None])[0]
        self.M0 = torch.einsum("pik,p,pil->kl", A, body.mass, A)  # (k, k)
        # latent inertia: every reduced coordinate weighs at least LATENT_INERTIA of the
        # heaviest, so directions that barely move the surface cannot be flung by point loads
        self.latent_inertia = LATENT_INERTIA * torch.linalg.eigvalsh(self.M0)[-1] * torch.eye(
            self.k, dtype=torch.float64)
        self.M0 = self.M0 + self.latent_inertia
        heavier = _lifted_inertia(self.M0, self.K0, FASTEST_MODE)
        self.latent_inertia, self.M0 = self.latent_inertia + heavier, self.M0 + heavier
        self.D = env.alpha * self.M0 + env.beta * self.K0
        self.q_radius = body.q_radius
        # as stiff as the stiffest spring in the scene, so that no contact or pin load can
        # push a coordinate far outside the fitted region
        self.bound_stiffness = torch.zeros(self.k, dtype=torch.float64)
        # pin damping: critical per unit of pin mass, but no faster than the pins' own
        # fastest generalized oscillation; a pin far from the centre (a flag's edge, a
        # chair's feet) levers light coordinates, and a damper sized for the whole body's
        # weight would then be a rate far beyond any affordable explicit step
        self.pin_omega = self.pin_rate() if self._pins else 0.0
        self.pin_damping = 2.0 * env.pin_rate * min(1.0, env.pin_rate / max(self.pin_omega,
                                                                            1e-12))
        rate = max(BOUND_RATE * self.elastic_rate(), env.contact_rate if env.ground else 0.0,
                   self.pin_omega, 1.0)
        self.bound_stiffness = rate**2 * self.M0.diagonal()  # (k,): per-axis frequency ~ rate
        self.evaluations = 0
        self._memo: tuple[float, Tensor, Tensor] | None = None  # (t, y, dy/dt) last evaluated

    # --- pieces ------------------------------------------------------------------------

    def split(self, y: Tensor) -> tuple[Tensor, ...]:
        k = self.k
        sizes = (3, 3, k, 3, 3, k, 1, 1)
        return torch.split(y, sizes, dim=-1)

    def rotation(self, theta: Tensor, sk: _Skew | None = None) -> Tensor:
        return self.R_ref @ exp_so3(theta, sk)

    def _frame(self, y: Tensor) -> dict[str, Tensor]:
        """Positions, velocities and the body-frame W = [Rᵀ, -[p]x, J] of every point."""
        r, th, q, v, w, qd, _, _ = self.split(y)
        sk = _Skew.of(th)
        R = self.rotation(th, sk)  # (S, 3, 3)
        shape = self.body.shape
        p = shape.positions(q)  # (S, Q, 3)
        J = shape.jacobian(q)  # (S, Q, 3, k)
        Jqd = (J @ qd[:, None, :, None])[..., 0]
        wq = w[:, None, :].expand_as(p)
        u = torch.cross(wq, p, dim=-1) + Jqd  # body-frame velocity relative to the frame
        x = self.body.centre + r[:, None] + p @ R.transpose(1, 2)
        xdot = v[:, None] + u @ R.transpose(1, 2)
        S, Qn = p.shape[:2]
        Rt = R.transpose(1, 2)[:, None].expand(S, Qn, 3, 3)
        W = torch.cat([Rt, -skew(p), J], dim=-1)  # (S, Q, 3, n)
        return {"R": R, "p": p, "J": J, "Jqd": Jqd, "u": u, "x": x, "xdot": xdot, "W": W,
                "q": q, "qd": qd, "v": v, "w": w, "th": th, "skew": sk}

    def _mass_matrix(self, W: Tensor) -> Tensor:
        S, n = W.shape[0], W.shape[-1]
        Wf = W.reshape(S, -1, n)  # (S, Q 3, n)
        M = (Wf * self._mass3).transpose(1, 2) @ Wf
        M[:, 6:, 6:] += self.latent_inertia
        return M

    def _solve(self, M: Tensor, rhs: Tensor) -> Tensor:
        """M^-1 rhs over the free coordinates (the others stay still)."""
        if self._all_free:
            return torch.linalg.solve(M, rhs)
        f = self.free
        out = torch.zeros_like(rhs)
        out[:, f] = torch.linalg.solve(M[:, f][:, :, f], rhs[:, f])
        return out

    def _bound(self, q: Tensor, energy: bool = False) -> tuple[Tensor, Tensor | None]:
        """The latent bound: each reduced coordinate beyond ±q_radius (the region the decoder
        fit covers; the prior is N(0, I) there) meets a spring of frequency BOUND_RATE x the
        fastest elastic mode. Returns the generalized force (S, k) and, if asked, its
        energy (S,)."""
        outside = (q.abs() - self.q_radius).clamp_min(0.0)
        force = -self.bound_stiffness * outside * torch.sign(q)
        return force, 0.5 * (self.bound_stiffness * outside**2).sum(-1) if energy else None

    def _elastic(self, p: Tensor, energy: bool = False) -> tuple[Tensor, Tensor | None]:
        """Body-frame spring forces on the points (S, Q, 3) and, if asked, the elastic
        energy (S,)."""
        sp = self.springs
        d = sp.vectors(p)  # (S, E, 3)
        length = d.norm(dim=-1).clamp_min(1e-12)
        stretch = length - sp.rest_length
        fe = (sp.stiffness * stretch / length)[..., None] * d  # dE/dd
        e = 0.5 * (sp.stiffness * stretch**2).sum(-1) if energy else None
        f = -sp.adjoint(fe)
        vol = self.body.volume
        if vol is not None:
            f = f + vol.forces(p)
            e = e + vol.energy(p) if energy else None
        return f, e

    def wind_at(self, t: float | Tensor) -> Tensor:
        gust = 1.0 + self.env.gust * math.sin(2 * math.pi * GUST_HZ * float(t))
        return self.wind * gust

    def _external(self, t: float | Tensor, fr: dict[str, Tensor], energy: bool = False
                  ) -> tuple[Tensor, Tensor, Tensor, dict[str, Tensor]]:
        """World forces (S, Q, 3) but the pins' (see :meth:`_pins_at`): all of them, the
        dissipative part, wind; and, if asked, the contact energy."""
        env = self.env
        x, xdot = fr["x"], fr["xdot"]
        force = self._weight.expand_as(x)
        dissipative = torch.zeros_like(x)
        wind = torch.zeros_like(x)
        energies = {}
        if env.ground:
            kc = env.contact_rate**2
            cc = 2.0 * env.contact_damping * env.contact_rate
            pen = (-x[..., 1]).clamp_min(0.0)  # (S, Q)
            mc = self.contact_mass
            spring = kc * mc * pen
            reach = env.contact_rate * pen  # the damper's speed limit (contact_damping)
            damper = cc * mc * torch.minimum(torch.maximum(xdot[..., 1], -reach), reach)
            fn = (spring - damper).clamp_min(0.0)
            up = _UP.to(xdot)
            vt = xdot * _HORIZONTAL.to(xdot)
            speed = vt.norm(dim=-1).clamp_min(1e-12)
            # Coulomb friction, capped by a viscous law so that it cannot reverse the sliding
            # within a step: |f_t| = min(mu f_n, c m |v_t|) with c the contact rate
            ft = torch.minimum(env.friction * fn, env.contact_rate * mc * speed)
            friction = (-ft / speed)[..., None] * vt
            force = force + friction + fn[..., None] * up
            dissipative = friction + (fn - spring)[..., None] * up
            if energy:
                energies["contact"] = 0.5 * kc * mc * (pen**2).sum(-1)
        if self._air:
            normal = self.body.normals @ fr["R"].transpose(1, 2)  # (S, Q, 3) world
            rel = self.wind_at(t) - xdot
            vn = (rel * normal).sum(-1)
            press = -vn.clamp_max(0.0) ** 2 if self.body.closed else vn * vn.abs()
            wind = (0.5 * env.air_density * env.drag * press * self.body.areas)[..., None] * normal
            force = force + wind
        return force, dissipative, wind, energies

    def _anchors(self, fr: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """The pins' anchors (see ``Body.pin_offset``): world positions and velocities
        (S, P, 3) and their body-frame W = [Rᵀ, -[p - offset]x, J] (S, P, 3, n)."""
        idx, off = self._pin_index, self.pin_offset
        if not self._joint:  # every pin at its point
            return fr["x"][:, idx], fr["xdot"][:, idx], fr["W"][:, idx]
        R, p = fr["R"], fr["p"][:, idx] - off  # (S, P, 3) body frame
        u = fr["u"][:, idx] - torch.cross(fr["w"][:, None, :].expand_as(p), off.expand_as(p),
                                          dim=-1)
        x = fr["x"][:, idx] - off @ R.transpose(1, 2)
        xdot = fr["v"][:, None] + u @ R.transpose(1, 2)
        W = fr["W"][:, idx].clone()
        W[..., 3:6] = -skew(p)
        return x, xdot, W

    def _pins_at(self, fr: dict[str, Tensor], energy: bool = False
                 ) -> tuple[Tensor, Tensor, Tensor | None]:
        """The pins, stiff springs with critical-ish damping at their anchors: generalized
        force (S, n), power they dissipate (S,) and, if asked, their energy (S,)."""
        kp, cp = self.env.pin_rate**2, self.pin_damping
        pm = self.pin_mass[None, :, None]
        x, xdot, W = self._anchors(fr)
        err = x - self.pin_target
        damp = -cp * pm * xdot
        force = (-kp * pm * err + damp) @ fr["R"]  # (S, P, 3) body frame
        gen = torch.einsum("spia,spi->sa", W, force)
        power = -(damp * xdot).sum((-1, -2))
        return gen, power, 0.5 * kp * (pm * err**2).sum((-1, -2)) if energy else None

    # --- the ODE -------------------------------------------------------------------------

    def forward(self, t: Tensor, y: Tensor) -> Tensor:
        # step_now evaluates the state the next RK4 step starts from, at the same time: its
        # first stage reuses that evaluation instead of repeating it
        memo = self._memo
        if memo is not None and float(t) == memo[0] and torch.equal(y, memo[1]):
            return memo[2].clone()
        return self._evaluate(t, y)

    def _evaluate(self, t: Tensor, y: Tensor, fr: dict[str, Tensor] | None = None) -> Tensor:
        """dy/dt at (t, y), remembered for the next call at the same point; ``fr``: the
        frame of y when the caller has it already."""
        out = self._rhs(t, y, self._frame(y) if fr is None else fr)
        self._memo = (float(t), y.detach().clone(), out)
        return out

    def _rhs(self, t: Tensor, y: Tensor, fr: dict[str, Tensor]) -> Tensor:
        self.evaluations += 1
        R, p, qd, w = fr["R"], fr["p"], fr["qd"], fr["w"]
        # ω×(ω×p) + 2 ω×(J q̇) = ω×(u + J q̇) with u = ω×p + J q̇: one cross product
        wq = w[:, None, :].expand_as(p)
        bias = torch.cross(wq, fr["u"] + fr["Jqd"], dim=-1) + self.body.shape.curvature(qd)
        force, dissipative, wind, _ = self._external(t, fr)
        internal, _ = self._elastic(p)
        g_body = force @ R - self._mass1 * bias  # (S, Q, 3)
        W = fr["W"]
        S, Qn = p.shape[:2]
        rhs = (W.reshape(S, -1, W.shape[-1]).transpose(1, 2) @ g_body.reshape(S, -1, 1))[..., 0]
        # the elastic energy is a function of q alone, so its forces act on q alone: Jᵀ f.
        # A graph's springs exert no net torque anyway; a centreline's terms (and the graph
        # acting on what the slices leave) are not invariant to turning the points, and their
        # torque on the frame would be work that no energy pays for.
        elastic = (fr["J"].reshape(S, Qn * 3, self.k).transpose(1, 2)
                   @ internal.reshape(S, -1, 1))[..., 0]
        damping = qd @ self.D  # (S, k)
        rhs[:, 6:] += elastic + self._bound(fr["q"])[0] - damping
        xdot = fr["xdot"]
        p_diss = (damping * qd).sum(-1) - (dissipative * xdot).sum((-1, -2))
        if self._pins:
            pins, p_pins, _ = self._pins_at(fr)
            rhs = rhs + pins
            p_diss = p_diss + p_pins
        acc = self._solve(self._mass_matrix(W), rhs)  # (S, n)
        theta_dot = (inv_right_jacobian(fr["th"], fr["skew"]) @ w[..., None])[..., 0]
        p_work = (wind * xdot).sum((-1, -2))
        return torch.cat([fr["v"], theta_dot, qd, acc, p_diss[:, None], p_work[:, None]], -1)

    # --- bookkeeping ---------------------------------------------------------------------

    def energy(self, y: Tensor, t: float = 0.0) -> dict[str, Tensor]:
        """Kinetic, gravity, elastic, contact and pin energies, dissipated energy and external
        work so far, and ``total`` = kinetic + potentials + dissipated − work: (S,) each, J."""
        fr = self._frame(y)
        vel = torch.cat([fr["v"], fr["w"], fr["qd"]], -1)
        M = self._mass_matrix(fr["W"])
        out = {"kinetic": 0.5 * torch.einsum("sa,sab,sb->s", vel, M, vel),
               "gravity": -(self._weight * fr["x"]).sum((-1, -2)),
               "elastic": self._elastic(fr["p"], True)[1] + self._bound(fr["q"], True)[1]}
        _, _, _, extra = self._external(t, fr, energy=True)
        zero = torch.zeros_like(out["kinetic"])
        out["contact"] = extra.get("contact", zero)
        out["pin"] = self._pins_at(fr, energy=True)[2] if self._pins else zero
        *_, diss, work = self.split(y)
        out["dissipated"], out["work"] = diss[:, 0], work[:, 0]
        return with_total(out)

    def rebase(self, y: Tensor) -> Tensor:
        """Fold the rotation θ into R_ref and zero it (ω is in the body frame: unchanged)."""
        r, th, *rest = self.split(y)
        self.R_ref = self.rotation(th)
        self._memo = None  # the same y means another state now
        return torch.cat([r, torch.zeros_like(th), *rest], -1)

    def halt(self, y: Tensor) -> Tensor:
        """y with every velocity zeroed, the kinetic energy that held booked as dissipated."""
        kinetic = self.energy(y)["kinetic"]
        r, th, q, v, w, qd, diss, work = self.split(y)
        return torch.cat([r, th, q, torch.zeros_like(v), torch.zeros_like(w),
                          torch.zeros_like(qd), diss + kinetic[:, None], work], -1)

    def kick(self, y: Tensor, mask: Tensor, dv: Tensor) -> Tensor:
        """Add the generalized impulse of giving the points in ``mask`` the velocity change
        ``dv`` (world); the kinetic energy it adds is booked as external work."""
        fr = self._frame(y)
        impulse = torch.zeros_like(fr["x"])
        impulse[:, mask] = self.body.mass[mask][None, :, None] * dv
        W = fr["W"]
        rhs = torch.einsum("spia,spi->sa", W, impulse @ fr["R"])
        M = self._mass_matrix(W)
        dvel = self._solve(M, rhs)
        vel = torch.cat([fr["v"], fr["w"], fr["qd"]], -1)
        added = 0.5 * torch.einsum("sa,sab,sb->s", vel + dvel, M, vel + dvel) \
            - 0.5 * torch.einsum("sa,sab,sb->s", vel, M, vel)
        r, th, q, v, w, qd, diss, work = self.split(y)
        k = self.k
        return torch.cat([r, th, q, v + dvel[:, :3], w + dvel[:, 3:6], qd + dvel[:, 6:6 + k],
                          diss, work + added[:, None]], -1)

    def initial_state(self, q: Tensor, qdot: Tensor, velocity: Tensor, spin: Tensor) -> Tensor:
        """y0 (S, 2n + 2) at rest orientation: q, q̇ (S, k); velocity, spin (3,) world. A held
        frame does not move: a clamped body's start velocity field v + spin x (x - centre)
        is given to its deformation as a kick at the start (booked as work)."""
        S, held = q.shape[0], self.body.clamped
        zeros3 = torch.zeros(S, 3, dtype=torch.float64)
        v = zeros3 if held else velocity.expand(S, 3).to(torch.float64)
        w = zeros3 if held else (spin.to(torch.float64) @ self.R_ref[0]).expand(S, 3)  # body
        y = torch.cat([zeros3, zeros3, q, v, w, qdot, torch.zeros(S, 2, dtype=torch.float64)], -1)
        if not held or not (bool(velocity.any()) or bool(spin.any())):
            return y
        arm = self._frame(y)["x"] - self.body.centre  # (S, Q, 3) world, at the start shapes
        field = velocity.to(arm) + torch.cross(spin.to(arm).expand_as(arm), arm, dim=-1)
        return self.kick(y, torch.ones(arm.shape[1], dtype=torch.bool), field)


def with_total(energies: dict[str, Tensor]) -> dict[str, Tensor]:
    """``energies`` with ``total`` = kinetic + potentials + dissipated − work added (constant
    along an exact motion)."""
    e = energies
    e["total"] = (e["kinetic"] + e["gravity"] + e["elastic"] + e["contact"] + e["pin"]
                  + e["dissipated"] - e["work"])
    return e
