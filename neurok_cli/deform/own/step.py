"""One object's implicit steps in its own shape space (docs/design.md, "The object's own shape
space"): BDF2 over the affine handle coordinates ``Z`` (4H, 3).

Each step minimizes the incremental potential (Simplicits' choice, with BDF2's step in place
of implicit Euler's, which damps a swing several per cent a period at these steps): inertia
``|Z - Z~|^2_M / 2h'^2``, elastic and bending energy, Rayleigh damping, ground contact
(``deform/own/contact.py``) and pins (the handle directions that would move a pinned vertex
are removed: ``deform/own/directions.py``); air drag and wind act on the surface's vertices,
lagged a step (``deform/own/air.py``). The minimizer (``deform/own/minimize.py``) is L-BFGS
preconditioned by the rest Hessian turned by each handle's rotation
(``deform/own/rotations.py``), with the contact's and friction's own, factored afresh when
the contact set changes, while the object slides, or once a handle has turned a few
degrees: the reduced system has a few hundred coordinates, so a factorization costs a
millisecond or a few.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ...data.geometry import surface_grid
from ...scenario.spec import MotionConfig
from .air import AIR, Air
from .bending import Bending
from .contact import FEWEST, PENETRATION, REACH, SLIP, TOUCH, Contact, material_weights
from .directions import free_directions
from .handles import basis_rows
from .mechanics import Mechanics
from .minimize import minimize
from .rotations import HandleRotations, turned_matrix

TURN = math.radians(3)  # refactor once a handle has turned this far: a stale factor's
# stiffness, turned the wrong way, stops the minimizer short (a sheet's membrane)


class Step:
    """One object's implicit steps: the incremental potential, its minimizer and the
    forces and contacts it needs (arrays in Z's layout (4H, 3))."""

    def __init__(self, mech: Mechanics, v: np.ndarray, faces: np.ndarray, cfg: MotionConfig,
                 h: float):
        cond = cfg.conditions
        self.mech, self.v, self.h = mech, v, h
        self.size = float(np.ptp(v, axis=0).max())
        self.g = g = np.asarray(cond.gravity, np.float64)
        gmag = max(float(np.linalg.norm(g)), 9.81)
        self.gravity = mech.mass_rows.T @ (mech.point_mass[:, None] * g[None, :])  # (4H, 3)
        self.weight = mech.mass_total * float(np.linalg.norm(g)) * self.size  # J
        self.k_contact = None  # no ground: no points to touch it
        if cond.ground:
            self.touch, area = surface_grid(v, faces, TOUCH * self.size)  # (C, N), (C,)
            self.touch_rest = self.touch @ v
            self.touch_weights = material_weights(mech, self.touch_rest, len(v))
            self.touch_rows = basis_rows(self.touch_weights.tocoo(), self.touch_rest,
                                         mech.basis.centres).tocsr()
            share = mech.mass_total * area / max(area.sum(), 1e-30)
            carried = np.maximum(16 * share, mech.mass_total / FEWEST)  # kg a point may hold
            self.k_contact = carried * gmag / (PENETRATION * self.size)
        self.friction = float(cond.friction)
        self.beta = cfg.material.damping * cfg.damping_scale
        self.N = free_directions(mech)
        self.N_rows = sp.csr_matrix(self.N.T)  # (r, 4H): sparse, most columns within a handle
        self.mass_factor = sla.cho_factor(self.N.T @ mech.M @ self.N, check_finite=False)
        self.wind = np.asarray(cond.wind, np.float64)
        self.gust = float(cond.gust)
        self.air = Air(v, faces, mech, self.wind, self.gust,
                       AIR if cfg.still_air or self.wind.any() else 0.0)
        self.turns = HandleRotations(mech, len(v))
        self.bend_turns = None if mech.bending is None else \
            mech.bending.by_handles(mech.basis.weights[: len(v)])
        self.restart()

    def restart(self) -> None:
        """Forget the run so far (the rotations, the BDF2 history and the factor): a new
        run starts with these steps, from the rest's rotations."""
        H = self.mech.basis.handles
        self.R_handles = np.broadcast_to(np.eye(3), (H, 3, 3)).copy()
        self.bend = (np.zeros((self.mech.M.shape[0], 3)), 0.0)  # bending's linear part
        self.hh = self.h  # the implicit step: h (Euler's first step), 2h/3 (BDF2's)
        self.previous = None  # (Z, V) a step back, for BDF2
        self.factor = None
        self.factor_key = None
        self.factor_R = self.R_handles.copy()
        self.rest_part = (None, 0.0, None)  # (rotations, step, the Hessian's part without
        # contact) of the last factorization
        self.isotropic = {}  # step -> the mass and bending part, the same on each axis

    # -- forces and energies -------------------------------------------------------------

    def positions(self, Z: np.ndarray) -> np.ndarray:
        return self.v + self.mech.vertex_rows @ Z

    def rotations(self, Z: np.ndarray) -> None:
        """Each handle's rotation at ``Z`` (``HandleRotations``), and bending's lagged terms
        from them: each vertex's rotation a blend of its handles' (near a rotation itself)."""
        self.R_handles = self.turns.at(Z)
        if self.bend_turns is not None:
            self.bend = self.bend_turns.at(self.R_handles)

    def potential(self, Z, Zn, Zt, contact: Contact | None):
        """The incremental potential at Z and its gradient (4H, 3)."""
        mech, h = self.mech, self.hh
        dZ = Z - Zt
        MdZ = mech.M @ dZ
        val = 0.5 * float(np.sum(dZ * MdZ)) / h ** 2
        grad = MdZ / h ** 2
        elastic, g_elastic = mech.law.energy_grad(mech.elements, Z)
        val += elastic
        grad = grad + g_elastic
        if mech.bending is not None:
            eb, gb = Bending.energy_grad(Z, mech.bending.Q, *self.bend)
            val += eb
            grad = grad + gb
        if self.beta > 0:  # Rayleigh damping, the rest stiffness turned by the handles
            s = (Z - Zn).reshape(-1)
            Ks = self._turn(mech.K0 @ self._turn(s, inverse=True))
            val += 0.5 * self.beta / h * float(s @ Ks)
            grad = grad + (self.beta / h) * Ks.reshape(-1, 3)
        if contact is not None:
            v, g = contact.energy_grad(Z, Zn, self.touch_rest[contact.index, 1], SLIP * h)
            val += v
            grad = grad + g
        return val, grad

    def _turn(self, s: np.ndarray, inverse: bool = False) -> np.ndarray:
        """Apply (or undo) each handle's rotation to the rows of Z: T s or T^T s."""
        H = self.mech.basis.handles
        z = s.reshape(H, 4, 3)
        R = self.R_handles if inverse else self.R_handles.transpose(0, 2, 1)
        return np.matmul(z, R).reshape(-1)

    # -- the preconditioner --------------------------------------------------------------

    def _turned(self) -> float:
        """The largest angle (radians) a handle has turned since the last factorization."""
        cos = (np.einsum("hij,hij->h", self.factor_R, self.R_handles) - 1) / 2
        return float(np.arccos(np.clip(cos.min(), -1.0, 1.0)))

    def _factor(self, contact: Contact | None) -> None:
        """Factor the preconditioner: the rest Hessian turned by each handle's rotation,
        the mass, bending, contact and friction terms, within the free directions."""
        mech, h = self.mech, self.hh
        H4 = mech.M.shape[0]
        if self.rest_part[0] is not self.R_handles or self.rest_part[1] != h:
            if h not in self.isotropic:  # (two step lengths: Euler's first, then BDF2's)
                iso = mech.M / h ** 2
                if mech.bending is not None:
                    iso = iso + mech.bending.Q
                self.isotropic[h] = np.kron(iso, np.eye(3))
            turned = turned_matrix(mech.K0, np.repeat(self.R_handles, 4, 0))
            self.rest_part = (self.R_handles, h, (1.0 + self.beta / h) * turned +
                              self.isotropic[h])
        A = self.rest_part[2]  # (a refresh within the step keeps it: only contact changes)
        if contact is not None:
            A = A.copy()
            Ky, Kf = contact.stiffness(SLIP * h)
            A[1::3, 1::3] += Ky
            if Kf is not None:
                A[0::3, 0::3] += Kf
                A[2::3, 2::3] += Kf
        r = self.N.shape[1]
        if r < H4:  # (else N is the identity: nothing pinned, every direction spanned)
            # N^T A N over the handles' index with N sparse (a pinned handle's columns lie
            # within it): a clamped rod of 104 handles spent a fifth of its run here dense
            A = (self.N_rows @ A.reshape(H4, -1)).reshape(r, 3, H4, 3)
            A = (self.N_rows @ A.transpose(2, 0, 1, 3).reshape(H4, -1)).reshape(r, r, 3, 3)
            A = A.transpose(1, 2, 0, 3)  # (r, 3, r, 3)
        self.factor = sla.cho_factor(A.reshape(3 * r, 3 * r), lower=False, check_finite=False)
        self.factor_R = self.R_handles.copy()

    def solve(self, g: np.ndarray) -> np.ndarray:
        """The preconditioner's solve of a gradient in the free directions (r, 3)."""
        return sla.cho_solve(self.factor, g.reshape(-1), check_finite=False).reshape(-1, 3)

    def accelerate(self, force: np.ndarray) -> np.ndarray:
        """The accelerations (4H, 3) a force on the coordinates gives, within the free
        directions."""
        return self.N @ sla.cho_solve(self.mass_factor, self.N.T @ force, check_finite=False)

    def constrain(self, V: np.ndarray) -> np.ndarray:
        """Velocities (4H, 3) with the pins' share removed (the mass-nearest that keeps the
        pinned vertices still)."""
        return self.N @ sla.cho_solve(self.mass_factor, self.N.T @ (self.mech.M @ V),
                                      check_finite=False)

    # -- one step ------------------------------------------------------------------------

    def step(self, Z: np.ndarray, V: np.ndarray, t: float, x: np.ndarray, xdot: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, dict]:
        """Z, V one step on from time t (x, xdot: the vertices now) -> (Z, V, figures;
        ``x`` among them: the vertices then)."""
        f_air = self.air.force(x, xdot, t)
        f_ext = self.gravity + self.air.rows.T @ f_air
        if self.previous is None:  # implicit Euler
            Zb, Vb, self.hh = Z, V, self.h
        else:  # BDF2: Z' = Zb + hh V', V' = Vb + hh A' with hh = 2h/3
            Zp, Vp = self.previous
            Zb, Vb, self.hh = (4 * Z - Zp) / 3, (4 * V - Vp) / 3, 2 * self.h / 3
        Zt = Zb + self.hh * Vb + self.hh ** 2 * self.accelerate(f_ext)
        contact, active = None, np.zeros(0, bool)
        if self.k_contact is not None:
            contact, active = self._contact(self.touch @ x, self.touch @ xdot)
        key = (active.tobytes(), self.hh)
        self.rotations(Z)
        sliding = contact is not None and contact.friction is not None \
            and len(contact.friction) > 0
        if (self.factor is None or key != self.factor_key or sliding
                or self._turned() > TURN):
            self._factor(contact)
            self.factor_key = key
        Znew, iters = self._minimize(Zb, Zt, contact)
        Vnew = (Znew - Zb) / self.hh
        self.previous = (Z, V)
        xnew = self.positions(Znew)
        air_work = float(np.sum(f_air * (xnew - x)[self.air.index]))
        return Znew, Vnew, {"iters": iters, "air_work": air_work, "x": xnew,
                            "dissipated": self._dissipated(Znew, Zb, xnew - x, contact)}

    def _dissipated(self, Z, Zn, dx, contact: Contact | None) -> float:
        """The energy damping and friction took this step (J); ``dx`` (N, 3): how far
        the vertices moved."""
        s = (Z - Zn).reshape(-1)
        out = self.beta * self.h / self.hh ** 2 * float(s @ self._turn(self.mech.K0 @ self._turn(
            s, inverse=True)))
        if contact is not None and contact.friction is not None:
            moved = self.touch[contact.index[contact.touching]] @ dx  # the touching points'
            slide = np.linalg.norm(moved[:, [0, 2]], axis=1)
            out += float(np.sum(contact.friction * slide))
        return out

    def _contact(self, x: np.ndarray, xdot: np.ndarray) -> tuple[Contact | None, np.ndarray]:
        """The ground's candidates this step: the surface's points (``x``, ``xdot`` (C, 3))
        near enough to reach it (their fall over two steps, and a margin), with the normal
        forces they carry now (the lagged friction's bound) -> (contact or None, the points
        touching (C,) bool)."""
        y = x[:, 1]
        fall = 2 * self.h * np.maximum(-xdot[:, 1], 0.0)  # at most this far, two steps on
        index = np.flatnonzero(y < fall + REACH * self.size)
        active = y - fall < PENETRATION * self.size * 0.5  # the ground may stop it this step
        if not len(index):
            return None, active
        lam = self.k_contact[index] * np.maximum(-y[index], 0.0)
        slide = self.hh * np.linalg.norm(xdot[index][:, [0, 2]], axis=1)
        return Contact(index, self.touch_rows[index], self.k_contact[index],
                        active[index],
                        self.friction * lam if self.friction > 0 else None, slide), active

    def _minimize(self, Zn: np.ndarray, Zt: np.ndarray, contact: Contact | None
                  ) -> tuple[np.ndarray, int]:
        return minimize(self, Zn, Zt, contact)
