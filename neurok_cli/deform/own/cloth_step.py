"""One cloth's implicit steps on its simulation mesh (docs/design.md, "Cloth on its own
simulation mesh"): projective dynamics (Bouaziz et al. 2014) over the vertices' positions.

Each step minimizes the incremental potential of BDF2 (implicit Euler's on the first step
and after a push), |x - y|^2_M / 2h'^2 plus
fabric's energy (``deform/own/fabric.py``), with y the inertial prediction under gravity and
the air (lagged a step). It alternates the fabric's projections (compiled) with one sparse
solve whose matrix, M / h^2 plus the terms' weights, is factored once a run: the fabric may
be as stiff as woven cloth is and the step stays stable at a frame's length. Pinned vertices
are held where they are. Contact (``deform/own/cloth_contact.py``) adds its barrier's push
near a pair, and a step whose move would meet something is taken again with each
iteration's move cut short of its first impact; Coulomb friction with the ground takes back
sliding the ground's push can hold.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .air import AIR, GUST_HZ
from .banded import BandedCholesky
from .cloth_contact import ClothContact
from .fabric import Fabric

ITERATIONS = 12  # local-global iterations a step
CG_ITERATIONS = 20  # conjugate gradients a global step near contact, at most
CUT = 0.9  # a move that meets contact stops at this x its time of impact
CAREFUL = 1  # such a step takes this x the iterations: each is cut short, fewer converge
ROOM = 2.0  # contact's pairs are found once a step for moves up to this x the prediction's
SKIN = 0.1  # air's drag along a sheet: this x the pressure across it at the same speed


class ClothStep:
    """Steps of length ``h`` of a cloth: ``mass`` (N,) kg per vertex, ``pinned`` (N,) bool
    held where they start; forces in metres, +Y up. Without ``contact``, ``floor`` makes
    y = 0 a floor the vertices are lifted onto (the page's step)."""

    def __init__(self, fabric: Fabric, mass: np.ndarray, pinned: np.ndarray, h: float, *,
                 gravity, wind=(0.0, 0.0, 0.0), gust: float = 0.0, air: float = AIR,
                 friction: float = 0.0, contact: ClothContact | None = None,
                 floor: bool = True, iterations: int = ITERATIONS):
        self.fabric, self.mass, self.h = fabric, np.asarray(mass, np.float64), float(h)
        self.pinned = np.asarray(pinned, bool)
        self.free = np.flatnonzero(~self.pinned)
        self.held = np.flatnonzero(self.pinned)
        self.g = np.asarray(gravity, np.float64)
        self.wind, self.gust, self.air = np.asarray(wind, np.float64), float(gust), float(air)
        self.friction, self.contact, self.iterations = float(friction), contact, int(iterations)
        self.floor = floor  # (without a contact object: whether y = 0 is a floor)
        self.K = fabric.system()
        self.free3 = (3 * self.free[:, None] + np.arange(3)).reshape(-1)
        self.systems: dict[float, _System] = {}
        self.restart()

    def restart(self) -> None:
        """Forget the last step: the next is implicit Euler's (a start, or a push's jump)."""
        self.previous = None
        self.use(self.h)

    def use(self, hh: float) -> None:
        """Take the global step's matrix M / hh^2 + K, factored once for each step length
        (implicit Euler's h, then BDF2's 2h/3)."""
        if hh not in self.systems:
            self.systems[hh] = _System(self.mass, self.K, hh, self.free, self.held)
        sys_ = self.systems[hh]
        self.hh, self.A_free, self.coupling = hh, sys_.A_free, sys_.coupling
        self.factor, self.preconditioner = sys_.factor, sys_.preconditioner

    def air_force(self, x: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """(N, 3) the air's pressure on each triangle from the wind relative to it (across
        it, and SKIN of that along it), a third to each corner."""
        f = self.fabric.faces
        if self.air == 0.0:
            return np.zeros_like(x)
        area_vec = 0.5 * np.cross(x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]])
        area = np.linalg.norm(area_vec, axis=1)
        n = area_vec / np.maximum(area, 1e-30)[:, None]
        wind = self.wind * (1.0 + self.gust * math.sin(2 * math.pi * GUST_HZ * t))
        rel = wind[None, :] - v[f].mean(axis=1)
        vn = np.einsum("ij,ij->i", rel, n)
        along = rel - vn[:, None] * n
        push = self.air * area[:, None] * (
            (vn * np.abs(vn))[:, None] * n
            + SKIN * np.linalg.norm(along, axis=1)[:, None] * along)
        out = np.zeros_like(x)
        for k in range(3):
            np.add.at(out, f[:, k], push / 3)
        return out

    def step(self, x: np.ndarray, v: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray,
                                                                     dict]:
        """x, v (N, 3) one step on from time t -> (x, v, figures: the air's work, J, and
        whether contact was near)."""
        m = self.mass[:, None]
        f_air = self.air_force(x, v, t)
        if self.previous is None:  # implicit Euler
            xb, vb = x, v
            self.use(self.h)
        else:  # BDF2: x' = xb + hh v', v' = vb + hh a' with hh = 2h/3
            xp, vp = self.previous
            xb, vb = (4 * x - xp) / 3, (4 * v - vp) / 3
            self.use(2 * self.h / 3)
        hh = self.hh
        y = xb + hh * vb + hh * hh * (self.g[None, :] + f_air / m)
        y[self.held] = x[self.held]
        inertia = m / hh ** 2 * y
        near = careful = False
        if self.contact is not None:  # the pairs within reach of the step's moves
            self.contact.begin(x, ROOM * float(np.sqrt(np.max(np.sum((y - x) ** 2, axis=1)))))
            near = self.contact.active(x)
        z = y.copy()
        for _ in range(self.iterations):
            z = self._with_barrier(z, inertia) if near else self._global(z, inertia)
        if self.contact is None:  # (no collision mesh: the ground alone, as a floor)
            if self.floor:
                np.maximum(z[:, 1], 0.0, out=z[:, 1])
        elif self.contact.stepsize(x, z) < 1.0:  # something new meets on the way: again,
            z, careful = self._careful(x, inertia), True  # each move cut short of impact
        self.previous = (x, v)
        return z, self._friction(z, (z - xb) / hh), {
            "air_work": float(np.sum(f_air * (z - x))), "near": near, "careful": careful}

    def _careful(self, x: np.ndarray, inertia: np.ndarray) -> np.ndarray:
        """The step again from ``x``, as IPC takes it: each iteration finds the pairs within
        reach where it stands and moves at most CUT x the way to the first impact, so the
        barrier meets every pair before it could pass."""
        z = x.copy()
        for _ in range(CAREFUL * self.iterations):
            new = self._with_barrier(z, inertia) if self.contact.active(z) else \
                self._global(z, inertia)
            z = self._cut(z, new)
        return z

    def _global(self, z: np.ndarray, inertia: np.ndarray) -> np.ndarray:
        """One local-global iteration from ``z``: the positions minimizing the step's
        quadratic with every projection taken at ``z``."""
        P, B = self.fabric.projections(z)
        rhs = inertia + self.fabric.pull(P, B)
        out = z.copy()
        out[self.free] = self.factor.solve(rhs[self.free] - self.coupling @ z[self.held])
        return out

    def _cut(self, z: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The move from ``z`` to ``new`` (N, 3), cut to CUT x its time of impact where it
        meets contact."""
        alpha = self.contact.stepsize(z, new)
        return new if alpha >= 1.0 else z + CUT * alpha * (new - z)

    def _with_barrier(self, z: np.ndarray, inertia: np.ndarray) -> np.ndarray:
        """One iteration near contact: the global step with the barrier's gradient and
        Hessian at ``z`` (over the pairs found at the step's start) beside the fabric's
        matrix, by conjugate gradients that the fabric's factor preconditions."""
        A, n = self.A_free, len(self.free)
        P, B = self.fabric.projections(z)
        rhs = inertia + self.fabric.pull(P, B)
        g, H = self.contact.barrier_terms(z)
        r = (rhs[self.free] - self.coupling @ z[self.held] - A @ z[self.free]
             - g[self.free]).reshape(-1)
        Hf = H[self.free3][:, self.free3]
        op = spla.LinearOperator((3 * n, 3 * n), dtype=np.float64,
                                 matvec=lambda d: (A @ d.reshape(n, 3)).reshape(-1) + Hf @ d)
        d, _ = spla.cg(op, r, M=self.preconditioner, rtol=1e-4, maxiter=CG_ITERATIONS)
        out = z.copy()
        out[self.free] += d.reshape(n, 3)
        return out

    def _friction(self, z: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The velocities ``v`` (N, 3) of the vertices on the ground (within contact's reach
        of it, at ``z``) with no rise (the barrier's stored energy would bounce the cloth
        back up: 5 cm a second after a sheet's 0.5 m fall) and Coulomb friction's share
        taken: its sliding speed less mu g h, or all of it. On the velocities, not the
        positions: the fabric's own forces, far above friction's on a vertex, have already
        placed it (positions held by friction kept a landed strip stretched 10 %)."""
        if self.contact is None:
            ground, reach = self.floor, 1e-9
        else:
            ground, reach = self.contact.ground, self.contact.dhat
        low = np.flatnonzero((z[:, 1] < reach) & ~self.pinned)
        if not ground or not len(low):
            return v
        out = v.copy()  # cloth does not bounce: the ground's barrier gives back no rise
        out[low, 1] = np.minimum(out[low, 1], 0.0)
        if self.friction <= 0:
            return out
        speed = np.hypot(out[low, 0], out[low, 2])
        keep = np.clip(1.0 - self.friction * max(-self.g[1], 0.0) * self.hh
                       / np.maximum(speed, 1e-30), 0.0, 1.0)
        out[low, 0] *= keep
        out[low, 2] *= keep
        return out


class _System:
    """The global step's matrix for one step length ``hh``, its factor (over the free
    vertices) and what couples them to the held ones."""

    def __init__(self, mass: np.ndarray, K: sp.csr_matrix, hh: float, free: np.ndarray,
                 held: np.ndarray):
        A = (sp.diags(mass / hh ** 2) + K).tocsr()
        self.coupling = A[free][:, held].tocsr()
        self.A_free = A[free][:, free].tocsr()
        self.factor = BandedCholesky(self.A_free)
        n = len(free)
        self.preconditioner = spla.LinearOperator(
            (3 * n, 3 * n), dtype=np.float64,
            matvec=lambda d: self.factor.solve(d.reshape(n, 3)).reshape(-1))
