"""Lagrangian mechanics in an object's reduced latent coordinates (DESIGN.md §2).

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
that kinetic + potential + dissipated − work stays constant. Only :func:`integrate` calls
``torchdiffeq.odeint``; :func:`rollout` runs the same equations compiled (model/dynamics/kernel.py)
unless asked for that reference.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from ...errors import UsageError
from ..reduced import ReducedShape
from ..threads import one_thread_on
from ..volume import VolumeTerm

METHODS = ("rk4", "dopri5")
GUST_HZ = 0.7  # frequency of the wind's gust modulation (as the engine's)
ACCURACY = 0.3  # RK4 step x fastest elastic frequency: ~1e-5 of its energy lost per step
LATENT_INERTIA = 0.02  # see LatentDynamics.__init__
BOUND_RATE = 3.0  # frequency of the latent bound, in multiples of the fastest elastic mode
MAX_STRIDE = 0.1  # the most one step may move q, in units of the latent bound's radius
BURST = 2  # rk4 steps between two re-sizings of the step
MIN_STEP = 2e-3  # s: below this the accuracy bound gives way to the stability bound:
# modes up to ACCURACY / MIN_STEP = 150 rad/s (24 Hz, past the 15 Hz a 30 fps clip can
# show) are followed; faster ones, a small stiff body's squash, are kept stable
CONTACT_SHARE = 16.0  # see LatentDynamics.contact_mass
ENERGY_GAIN = 5.0  # a run whose energy balance grows by this x its energy scale is unstable
STABILITY = 1.5  # RK4 step x fastest contact/pin/damping rate (stable below ~2.8)
FASTEST_MODE = STABILITY / MIN_STEP  # rad/s: elastic modes past this are given inertia
SLEEP_ENERGY = 1e-8  # a body at rest: kinetic energy below this x m g (half size) ...
SLEEP_TIME = 0.5  # ... at every frame for this long (s); see _rollout
MAX_STEPS = 100_000  # integration steps of one rollout: more is an error, never a hang
# what the compiled steps (model/dynamics/kernel.py) read of the above
KERNEL_CONSTANTS = dict(ACCURACY=ACCURACY, STABILITY=STABILITY, MIN_STEP=MIN_STEP,
                        MAX_STRIDE=MAX_STRIDE, BURST=BURST, MAX_STEPS=MAX_STEPS,
                        GUST_HZ=GUST_HZ)


@dataclass
class Body:
    """One object's dynamics points, float64, metres, body frame = centre of mass at rest."""

    shape: ReducedShape  # p(q) at the Q dynamics points
    mass: Tensor  # (Q,) lumped masses, kg
    normals: Tensor  # (Q, 3) outward unit normals at rest (wind)
    areas: Tensor  # (Q,) surface area each point stands for, m^2 (wind)
    edges: Tensor  # (E, 2) long: the elastic graph
    stiffness: Tensor  # (E,) spring constants, N/m
    pinned: Tensor  # (Q,) bool
    centre: Tensor  # (3,) world position of the body origin at rest, m
    closed: bool = True  # a solid (wind pushes its windward side only) or a sheet
    clamped: bool = False  # the frame is held (pins hold a clamp): only q moves
    q_radius: float = 3.0  # the latent bound: |q| beyond it is pushed back (see _bound)
    centreline: Centreline | None = None  # a slender body's beam terms
    # (P, 3), one row per pinned point in order: the pin holds the anchor p_i(q) - offset_i
    # (it deforms with its point and turns with the frame) rather than the point itself. A
    # sheet's pins collapsed onto their line or their centre (``body.pin_joint``) then make
    # a hinge or a ball joint: the sheet swings about them as it would by bending at their
    # edge, a crease the decoder cannot draw. None: every pin at its point.
    pin_offset: Tensor | None = None
    volume: VolumeTerm | None = None  # a solid's bulk resistance (see model/volume.py)


@dataclass
class Centreline:
    """Euler–Bernoulli terms of a slender body, on a centreline through slices of its points.

    A decoded bend of a beam moves each cross-section sideways but need not turn it: the
    points' spring graph then reads the bend as shear, far stiffer than bending (a slender
    rod would hardly move). With a centreline, the graph's springs act only on what is left
    once every slice's mean displacement is taken out (the cross-sections' own shape, twist
    and turn, and the shear inside a slice), weighted by ``graph``; the slices' centres
    carry the rest: springs between neighbouring centres (stretch) and, at every inner
    centre, a zero-length spring on the change of the turn between its two segments
    (bending). ``body.beam_centreline`` sizes them."""

    slice_of: Tensor  # (Q,) long: the slice of each point, 0..n-1 along the axis
    stretch: Tensor  # (n - 1,) N/m: each segment's axial stiffness
    bending: Tensor  # (n - 2,) N m: E I / ds at each inner centre
    graph: float = 1.0  # weight of the graph's springs


@dataclass
class Environment:
    """Forces and contact parameters (SI units; +Y up; the ground is the plane y = 0)."""

    gravity: tuple[float, float, float] = (0.0, -9.81, 0.0)
    ground: bool = True
    friction: float = 0.8
    wind: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gust: float = 0.0
    air_density: float = 1.2
    drag: float = 1.0
    still_air: bool = True  # air drag without wind too (a body moving through still air)
    contact_rate: float = 100.0  # sqrt(contact stiffness per unit mass), 1/s
    # damping ratio of contact: critical, as the engine's contacts (solref "0.005 1" in
    # sim/scene.py); at 0.4 a capsule dropped on its side bounced and lost 7.7 % of its
    # volume at the lowest where the engine's lost 2.6 %. The damper takes the point's
    # vertical speed within contact_rate x its depth: in full at first touch it was a step
    # in the force that the RK4 steps straddle (a dropped teapot's energy balance missed by
    # 6.8 % of its largest kinetic energy; 0.02 % within), while a point resting in contact,
    # moving slower than that, is damped in full
    contact_damping: float = 1.0
    pin_rate: float = 100.0  # sqrt(pin stiffness per unit mass), 1/s
    alpha: float = 0.0  # mass-proportional damping of q, 1/s
    beta: float = 0.0  # stiffness-proportional damping of q, s


@dataclass
class Event:
    """An instantaneous velocity change ``dv`` (m/s, world) of the points in ``mask``."""

    time: float
    mask: Tensor  # (Q,) bool
    dv: Tensor  # (3,)


@dataclass
class Rollout:
    """States at the frame times: rotations, translations and reduced coordinates."""

    times: Tensor  # (T,)
    rotation: Tensor  # (T, S, 3, 3)
    translation: Tensor  # (T, S, 3) r, world
    q: Tensor  # (T, S, k)
    energy: dict[str, Tensor] = field(default_factory=dict)  # name -> (T, S)
    steps: int = 0  # right-hand-side steps taken (rk4) or evaluations (dopri5)


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


class _Springs:
    """Every elastic term as a spring on a linear map of the points: the spring vectors are
    d = G p + g (E rows), with energy ½ k (|d| - L)² each. A graph's edge is the row
    p_a - p_b; a centreline's segment the difference of two slice means; a bending term a
    zero-length spring (L = 0) on the change of the turn at a centre. G is kept as sparse
    matrices, so that G x and Gᵀ f are one product each (an index gather, or a scatter with
    index_add_, costs several times more on the few hundred edges the dynamics use)."""

    def __init__(self, body: Body) -> None:
        rest, edges = body.shape.rest, body.edges
        Q, E = rest.shape[0], edges.shape[0]
        f64 = dict(dtype=torch.float64, device=rest.device)
        rows = torch.arange(E, device=rest.device)
        D = torch.zeros(E, Q, **f64)
        D[rows, edges[:, 0]] = 1.0
        D[rows, edges[:, 1]] -= 1.0
        G, offset, stiffness = D, torch.zeros(E, 3, **f64), body.stiffness
        line = body.centreline
        if line is not None:
            n = int(line.slice_of.max()) + 1
            member = torch.zeros(n, Q, **f64)
            member[line.slice_of, torch.arange(Q)] = body.mass.to(**f64)
            average = member / member.sum(1, keepdim=True)  # (n, Q): the slices' centres
            P = average[line.slice_of]  # (Q, Q): each point's slice mean
            graph = D - D @ P  # the edges of p - P (p - rest)
            seg = average[1:] - average[:-1]  # (n - 1, Q)
            h = (seg @ rest).norm(dim=-1, keepdim=True)
            turn = seg[1:] / h[1:] - seg[:-1] / h[:-1]  # (n - 2, Q)
            G = torch.cat([graph, seg, turn])
            offset = torch.cat([D @ P @ rest, torch.zeros(n - 1, 3, **f64), -(turn @ rest)])
            stiffness = torch.cat([body.stiffness * line.graph, line.stretch.to(**f64),
                                   line.bending.to(**f64)])
        self.offset, self.stiffness = offset, stiffness
        length = (G @ rest + offset).norm(dim=-1)
        self.zero = torch.zeros(len(length), dtype=torch.bool, device=rest.device)
        if line is not None:  # the bending rows come last
            self.zero[len(length) - line.bending.shape[0]:] = True
        self.rest_length = torch.where(self.zero, 0.0, length)  # (E,)
        with warnings.catch_warnings():  # CSR is marked beta; products with it are stable
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
            self.G = G.to_sparse_csr()
            self.Gt = G.t().contiguous().to_sparse_csr()

    @staticmethod
    def _apply(A: Tensor, x: Tensor) -> Tensor:
        S, n, m = x.shape  # (S, n, m) -> (S, rows of A, m)
        y = A @ x.transpose(0, 1).reshape(n, S * m)
        return y.view(-1, S, m).transpose(0, 1)

    def diff(self, x: Tensor) -> Tensor:
        """(S, Q, m) -> (S, E, m): G x, the linear part of the spring vectors (for the graph's
        edges without a centreline, x_a - x_b)."""
        return self._apply(self.G, x)

    def vectors(self, p: Tensor) -> Tensor:
        """Positions (S, Q, 3) -> spring vectors d = G p + g (S, E, 3)."""
        return self._apply(self.G, p) + self.offset

    def adjoint(self, f: Tensor) -> Tensor:
        """(S, E, m) -> (S, Q, m): Gᵀ f, each spring's value carried back to its points."""
        return self._apply(self.Gt, f)

    def stiffness_matrix(self, d: Tensor, GJ: Tensor) -> Tensor:
        """The springs' stiffness in the coordinates whose Jacobian maps to GJ (S, E, 3, k),
        at spring vectors d (S, E, 3) -> (S, k, k): k (n·GJ)ᵀ(n·GJ) along each stretched
        spring (the stretch alone: a compressed one's sideways term would be negative) and
        k GJᵀGJ for the zero-length ones, which pull the same in every direction."""
        n_e = d / d.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        dl = (n_e[..., None, :] @ GJ)[..., 0, :]  # (S, E, k)
        k = torch.where(self.zero, 0.0, self.stiffness)[None, :, None]
        K = (dl * k).transpose(1, 2) @ dl
        if bool(self.zero.any()):
            Z = GJ[:, self.zero]  # (S, Z, 3, k)
            kz = self.stiffness[self.zero][None, :, None, None]
            K = K + torch.einsum("szia,szib->sab", Z * kz, Z)
        return K


class LatentDynamics(nn.Module):
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


def integrate(func: nn.Module, y: Tensor, t0: float, t1: float, *, method: str = "rk4",
              step: float = 1e-3, rtol: float = 1e-6, atol: float = 1e-8) -> Tensor:
    """The one call of ``torchdiffeq.odeint``: y at t1 from y at t0 (fixed ``step`` for rk4,
    made to divide t1 - t0 exactly; adaptive with rtol/atol for dopri5)."""
    if method not in METHODS:
        raise UsageError(f"unknown integrator {method!r}; choose one of {', '.join(METHODS)}")
    from torchdiffeq import odeint  # imported here: it pulls in scipy.integrate (~0.6 s)

    t = torch.tensor([t0, t1], dtype=y.dtype)
    if method == "rk4":
        n = max(1, math.ceil((t1 - t0) / step - 1e-9))
        grid = torch.linspace(t0, t1, n + 1, dtype=y.dtype)
        sol = odeint(func, y, t, method="rk4", options={"grid_constructor":
                                                        lambda f, y0, tt: grid})
    else:
        sol = odeint(func, y, t, method="dopri5", rtol=rtol, atol=atol)
    return sol[-1]


def rollout(dyn: LatentDynamics, y0: Tensor, times: Tensor, *, events: list[Event] = (),
            method: str = "rk4", step: float | None = None, compiled: bool = True,
            progress: Callable[[int, int], None] | None = None) -> Rollout:
    """Integrate from y0 at times[0] through every time in ``times`` (T,), applying the
    ``events`` (velocity kicks) at their times; the rotation is re-based after every frame so
    that θ stays small. ``step`` defaults to dyn.step_size(); ``progress(done, T)`` is called
    after each frame.

    A body that has come to rest sleeps, as in rigid-body engines: once every motion's kinetic
    energy has stayed below SLEEP_ENERGY x m g (half its size) at every frame for SLEEP_TIME,
    with no wind acting, its velocities are zeroed (that energy booked as dissipated) and the
    state is held without integrating until the next event wakes it. Resting contact is
    the stiffest part of most runs, so a clip that ends at rest costs what its motion costs.

    Runs in inference mode (no gradients flow through a rollout): each of the ~100 small
    tensor operations of an evaluation then skips autograd's bookkeeping, ~20 % of an
    evaluation's time on CPU. What it returns, and ``dyn``, hold ordinary tensors again.

    ``compiled`` (rk4 on CPU): the stretch between two frames runs in model/dynamics/kernel.py, the
    same equations compiled (~6x faster on a 10k-vertex sphere's clip); False: every
    evaluation through torch and torchdiffeq, the reference it is tested against.

    On CPU it runs on one thread: an evaluation's tensors hold a few hundred numbers, too few
    for intra-op threads to gain anything, and the threads' hand-offs cost far more than
    the arithmetic once another process shares the cores (a 10k-vertex sphere's 1 s clip
    while two processes ran: integration 2.0-2.4 s on one thread, 6.9-9.5 s on two)."""
    with one_thread_on(y0.device), torch.inference_mode():
        out = _rollout(dyn, y0, times, events=events, method=method, step=step,
                       compiled=compiled, progress=progress)
    dyn.R_ref, dyn._memo = dyn.R_ref.clone(), None
    return Rollout(times=out.times.clone(), rotation=out.rotation.clone(),
                   translation=out.translation.clone(), q=out.q.clone(),
                   energy={k: v.clone() for k, v in out.energy.items()}, steps=out.steps)


def with_total(energies: dict[str, Tensor]) -> dict[str, Tensor]:
    """``energies`` with ``total`` = kinetic + potentials + dissipated − work added (constant
    along an exact motion)."""
    e = energies
    e["total"] = (e["kinetic"] + e["gravity"] + e["elastic"] + e["contact"] + e["pin"]
                  + e["dissipated"] - e["work"])
    return e


class _Integrator(NamedTuple):
    """How a rollout moves between frames: ``advance(y, t, stop, steps)`` integrates y from
    t to stop in bursts of at most BURST steps, the step re-sized before each (rk4:
    :meth:`LatentDynamics.step_now`), and returns it with the time reached and the steps
    taken so far; ``energy(y, t)`` is :meth:`LatentDynamics.energy`."""

    advance: Callable[[Tensor, float, float, int], tuple[Tensor, float, int]]
    energy: Callable[[Tensor, float], dict[str, Tensor]]


def _integrator(dyn: LatentDynamics, step: float, end: float, method: str, compiled: bool
                ) -> _Integrator:
    """Compiled (model/dynamics/kernel.py) for rk4 on CPU; else through :func:`integrate`
    (torchdiffeq), the reference."""
    if not (compiled and method == "rk4" and dyn.R_ref.device.type == "cpu"):
        return _Integrator(functools.partial(_advance_reference, dyn, step, end, method),
                           dyn.energy)
    from . import kernel

    P = kernel.params(dyn, KERNEL_CONSTANTS)

    def advance(y: Tensor, t: float, stop: float, steps: int) -> tuple[Tensor, float, int]:
        out, t, steps, h, status = kernel.advance(P, _array(dyn.R_ref), _array(y), t, stop,
                                                  step, steps)
        if status == kernel.TOO_MANY_STEPS:
            _step_budget(steps + (end - t) / h, h)
        if status == kernel.NOT_FINITE:
            raise FloatingPointError(f"the latent motion became non-finite at {t:.3f} s")
        return torch.from_numpy(out), t, steps

    def energy(y: Tensor, t: float) -> dict[str, Tensor]:
        values = torch.from_numpy(kernel.energy(P, _array(dyn.R_ref), _array(y)))
        return with_total(dict(zip(kernel.ENERGIES, values.T)))
    return _Integrator(advance, energy)


def _array(x: Tensor) -> np.ndarray:
    """A float64, C-ordered view for the compiled steps (whose one signature takes those)."""
    return np.ascontiguousarray(x.numpy(), dtype=np.float64)


def _advance_reference(dyn: LatentDynamics, step: float, end: float, method: str, y: Tensor,
                       t: float, stop: float, steps: int) -> tuple[Tensor, float, int]:
    while stop > t + 1e-12:  # in bursts, re-sizing the step after each
        h = dyn.step_now(y, step, t) if method == "rk4" else step
        n = max(1, math.ceil((stop - t) / h - 1e-9))
        t_end = stop if n <= BURST else t + BURST * h
        n = min(n, BURST)
        y = integrate(dyn, y, t, t_end, method=method, step=(t_end - t) / n)
        steps += n
        t = t_end
        if steps > MAX_STEPS:
            _step_budget(steps + (end - t) / h, h)
        if not torch.isfinite(y).all():
            raise FloatingPointError(f"the latent motion became non-finite at {t:.3f} s")
    return y, t, steps


def _step_budget(steps: float, step: float) -> None:
    """Refuse a rollout of more than MAX_STEPS steps (an object far too small or stiff for
    its step), which would otherwise run for hours or never end."""
    if steps > MAX_STEPS:
        raise UsageError(f"the motion needs about {steps:,.0f} integration steps of {step:.2g} s, "
                         f"more than the {MAX_STEPS:,} one run may take: the object is too "
                         "small or too stiff for its size; give its real size (--size), a "
                         "smaller --stiffness or --young, or fewer --seconds")


def _rollout(dyn: LatentDynamics, y0: Tensor, times: Tensor, *, events: list[Event],
             method: str, step: float | None, compiled: bool,
             progress: Callable[[int, int], None] | None = None) -> Rollout:
    step = step or dyn.step_size()
    _step_budget((float(times[-1]) - float(times[0])) / step, step)
    advance, energy_of = _integrator(dyn, step, float(times[-1]), method, compiled)
    pending = sorted(events, key=lambda e: e.time)
    y, t_now = y0, float(times[0])
    T, S = len(times), y0.shape[0]
    rot = torch.empty(T, S, 3, 3, dtype=torch.float64)
    trans = torch.empty(T, S, 3, dtype=torch.float64)
    qs = torch.empty(T, S, dyn.k, dtype=torch.float64)
    energy: dict[str, list[Tensor]] = {}
    steps = 0
    weight_scale = dyn.mass_total * 9.81 * float(dyn.body.shape.rest.abs().max())  # m g L/2
    still_since: float | None = None  # time from which every frame has been at rest
    asleep = False
    for i in range(T):
        target = float(times[i])
        while True:
            while pending and pending[0].time <= t_now + 1e-12:
                e = pending.pop(0)
                y = dyn.kick(y, e.mask, e.dv.to(torch.float64))
                asleep, still_since = False, None
            stop = min(target, pending[0].time) if pending else target
            if asleep:
                t_now = stop
            y, t_now, steps = advance(y, t_now, stop, steps)
            if stop >= target - 1e-12:
                break
        if not torch.isfinite(y).all():
            raise FloatingPointError(f"the latent motion became non-finite at {t_now:.3f} s")
        for name, value in energy_of(y, t_now).items():
            energy.setdefault(name, []).append(value)
        gain = energy["total"][-1] - energy["total"][0]
        scale = (energy["kinetic"][0] + energy["gravity"][0].abs() + energy["work"][-1].abs()
                 + weight_scale)
        if bool((gain > ENERGY_GAIN * scale).any()):
            raise FloatingPointError(f"the latent motion gained energy it was not given (an "
                                     f"instability) at {t_now:.3f} s")
        if not asleep and not dyn._windy:
            if not bool((energy["kinetic"][-1] < SLEEP_ENERGY * weight_scale).all()):
                still_since = None
            elif still_since is None:
                still_since = t_now
            if still_since is not None and t_now - still_since >= SLEEP_TIME - 1e-9:
                y, asleep = dyn.halt(y), True
        y = dyn.rebase(y)
        r, _, q, *_ = dyn.split(y)
        rot[i], trans[i], qs[i] = dyn.R_ref, r, q
        if progress is not None:
            progress(i + 1, T)
    if method != "rk4":
        steps = dyn.evaluations
    return Rollout(times=times.to(torch.float64), rotation=rot, translation=trans, q=qs,
                   energy={k: torch.stack(v) for k, v in energy.items()}, steps=steps)
