"""The step's minimizer (docs/design.md, "The object's own shape space"): L-BFGS over the
free directions, preconditioned by the step's factored Hessian, with an Armijo backtracking
line search; a hard step (a landing) refactors the preconditioner from where it stands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .contact import Contact
    from .step import Step

ITERATIONS = 64  # L-BFGS iterations per step, at most (a stiff rod just pushed needs 61)
REFRESH_AT = (3, 6, 9, 12)  # a step not done after these iterations refactors (see _refresh)
HISTORY = 6  # L-BFGS pairs kept within a step
HALVINGS = 40  # a line search's halvings, at most (friction's curvature, 1 / its smoothing
# length of 1e-3 m/s x h, can ask for steps 1e-6 of the preconditioner's: 12 stopped a sword)
TOLERANCE = 1e-6  # a step stops when its decrease is below this x its energy scale


def minimize(step: Step, Zn: np.ndarray, Zt: np.ndarray, contact) -> tuple[np.ndarray, int]:
    """The potential's minimum over the free directions Z = N Y, from the inertial
    guess (projected onto them) -> (Z, iterations)."""
    N = step.N
    Y = N.T @ Zt  # N's columns are orthonormal
    val, gz = step.potential(N @ Y, Zn, Zt, contact)
    g = N.T @ gz
    s_hist, y_hist = [], []
    dz = Zt - Zn  # the step's own energy scale: its weight's work over the object's
    moving = 0.5 * float(np.sum(dz * (step.mech.M @ dz))) / step.hh ** 2  # size, its
    scale = TOLERANCE * max(step.weight + moving, abs(val), 1e-300)  # motion, its energy
    for it in range(1, ITERATIONS + 1):
        d = -_two_loop(step, g, s_hist, y_hist)
        slope = float(np.sum(g * d))
        if -slope < scale:
            return N @ Y, it - 1
        Yc, vc, gz = _line_search(step, N, Y, d, val, slope, Zn, Zt, contact)
        if Yc is None:  # no decrease along it: once more along the preconditioned
            if not s_hist:  # gradient alone, from a preconditioner refactored here
                return N @ Y, it
            if contact is not None:
                _refresh(step, contact, N @ Y, Zn)
            s_hist, y_hist = [], []
            continue
        gc = N.T @ gz
        s_hist.append(Yc - Y)
        y_hist.append(gc - g)
        if len(s_hist) > HISTORY:
            s_hist.pop(0)
            y_hist.pop(0)
        Y, val, g = Yc, vc, gc
        if contact is not None and it in REFRESH_AT:  # a hard step (a landing): the
            _refresh(step, contact, N @ Y, Zn)  # preconditioner from where it is now
            s_hist, y_hist = [], []
    return N @ Y, ITERATIONS

def _line_search(step: Step, N, Y, d, val: float, slope: float, Zn, Zt, contact):
    """Armijo's backtracking from Y along d -> (Y, value, gradient) there, or Nones where
    HALVINGS find no decrease. A trial the energy cannot be evaluated at (overflowing:
    a step far too long) counts as no decrease."""
    alpha = 1.0
    for _ in range(HALVINGS):
        Yc = Y + alpha * d
        with np.errstate(over="ignore", invalid="ignore"):
            vc, gz = step.potential(N @ Yc, Zn, Zt, contact)
        if np.isfinite(vc) and vc <= val + 1e-4 * alpha * slope:
            return Yc, vc, gz
        alpha *= 0.5
    return None, None, None


def _refresh(step: Step, contact: Contact, Z: np.ndarray, Zn: np.ndarray) -> None:
    """Refactor the preconditioner with the contact as it stands at ``Z``: the points
    pushing into the ground, and friction's curvature at how far each has slid in the
    step (its lagged bound kept)."""
    contact.close = step.touch_rest[contact.index, 1] + contact.rows @ Z[:, 1] < 0.0
    if contact.friction is not None and len(contact.friction):
        contact.slide = np.linalg.norm((contact.rows_f @ (Z - Zn))[:, [0, 2]], axis=1)
    step._factor(contact)
    step.factor_key = None  # (the next step factors afresh)

def _two_loop(step: Step, g, s_hist, y_hist):
    q = g.copy()
    alphas = []
    for s, y in zip(reversed(s_hist), reversed(y_hist)):
        sy = float(np.sum(s * y))
        if sy <= 1e-300:
            alphas.append(None)
            continue
        a = float(np.sum(s * q)) / sy
        alphas.append((a, sy))
        q = q - a * y
    r = step.solve(q)
    for (s, y), a in zip(zip(s_hist, y_hist), reversed(alphas)):
        if a is None:
            continue
        b = float(np.sum(y * r)) / a[1]
        r = r + s * (a[0] - b)
    return r
