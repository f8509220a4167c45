"""The latent dynamics' right-hand side, step control and RK4 steps, compiled (numba).

:class:`~neurok_cli.model.dynamics.equations.LatentDynamics` states the mechanics in torch;
this module evaluates the same equations point by point in machine code. An evaluation
holds a few hundred numbers, so in torch it is nearly all per-operation overhead (~200
calls, ~0.6 ms); here one evaluation is one call. :func:`advance` runs the whole stretch
between two frames (step control every BURST steps, the classic RK4 "3/8 rule" steps that
``torchdiffeq``'s ``rk4`` takes), so Python is visited once per frame. Same arithmetic as
the torch code, in another order: the two agree to rounding (tests/model/test_kernel.py
holds them to it), and the torch path stays as the reference (``rollout(...,
compiled=False)``).

Everything is float64; S motions of one body are looped over. kernel_params.py gathers what
the kernel reads from a LatentDynamics into one named tuple of arrays and numbers;
kernel_terms.py holds the pieces of one evaluation (geometry, forces, linear algebra).
"""

from __future__ import annotations

import math

import numpy as np

from ...jit import cache_depends_on, njit
from .. import rotation, strain
from . import kernel_params, kernel_terms
from .kernel_params import (
    ACCURACY,
    BULK,
    BURST,
    CONTACT_DAMPING,
    CONTACT_MASS,
    CONTACT_RATE,
    GROUND,
    MAX_STEPS,
    MAX_STRIDE,
    MIN_STEP,
    PIN_RATE,
    Q_RADIUS,
    REST_VOLUME,
    SCALARS,
    SIZE,
    STABILITY,
    Params,
)
from .kernel_terms import (
    _anchors,
    _cholesky,
    _crossed,
    _external,
    _frame,
    _internal,
    _lower_inverse,
    _mass_matrix,
    _mtv,
    _pins,
    _skew,
    _solve,
    _spring_vectors,
    _volume_gradient,
)

# what advance() reports back
OK, TOO_MANY_STEPS, NOT_FINITE = 0, 1, 2


# --- the right-hand side --------------------------------------------------------------------

@njit(cache=True)
def _rhs_one(P, t, R_ref, y, frame):
    """dy/dt of one motion (as LatentDynamics._rhs)."""
    k = P.linear.shape[2]
    n = 6 + k
    q, v, w, qd = y[6:6 + k], y[6 + k:9 + k], y[9 + k:12 + k], y[12 + k:12 + 2 * k]
    R, Jinv, p, J, Jqd, curv, u, x, xdot = frame
    force, p_diss, p_work = _external(P, t, R, x, xdot)
    internal = _internal(P, p)
    rhs = np.zeros(n)
    gsum = np.zeros(3)
    for i in range(p.shape[0]):
        m = P.mass[i]
        b0, b1, b2 = _crossed(w[0], w[1], w[2], u[i, 0] + Jqd[i, 0], u[i, 1] + Jqd[i, 1],
                              u[i, 2] + Jqd[i, 2])
        f0, f1, f2 = _mtv(R, force[i, 0], force[i, 1], force[i, 2])
        g0 = f0 - m * (b0 + curv[i, 0])
        g1 = f1 - m * (b1 + curv[i, 1])
        g2 = f2 - m * (b2 + curv[i, 2])
        gsum[0] += g0
        gsum[1] += g1
        gsum[2] += g2
        c0, c1, c2 = _crossed(p[i, 0], p[i, 1], p[i, 2], g0, g1, g2)
        rhs[3] += c0
        rhs[4] += c1
        rhs[5] += c2
        e0, e1, e2 = g0 + internal[i, 0], g1 + internal[i, 1], g2 + internal[i, 2]
        for a in range(k):
            rhs[6 + a] += J[i, 0, a] * e0 + J[i, 1, a] * e1 + J[i, 2, a] * e2
    rhs[0:3] = R @ gsum
    damping = P.damping @ qd
    for a in range(k):
        outside = max(abs(q[a]) - P.sc[Q_RADIUS], 0.0)
        rhs[6 + a] += -P.bound_stiffness[a] * outside * np.sign(q[a]) - damping[a]
        p_diss += damping[a] * qd[a]
    gen, power = _pins(P, R, p, J, u, x, xdot, v, w)
    rhs += gen
    acc = _solve(P, _mass_matrix(P, R, p, J), rhs)
    out = np.empty(2 * n + 2)
    out[0:3] = v
    out[3:6] = Jinv @ w
    out[6:n] = qd
    out[n:2 * n] = acc
    out[2 * n] = p_diss + power
    out[2 * n + 1] = p_work
    return out


@njit(cache=True)
def rhs(P, t, R_ref, y):
    """dy/dt (S, 2n + 2) at time t for the states y (S, 2n + 2), frames R_ref (S, 3, 3)."""
    out = np.empty_like(y)
    for s in range(y.shape[0]):
        out[s] = _rhs_one(P, t, R_ref[s], y[s], _frame(P, R_ref[s], y[s]))
    return out


@njit(cache=True)
def _rk4(P, t0, t1, R_ref, y, f0):
    """One step of torchdiffeq's rk4 (the 3/8 rule) from y at t0 to t1; f0 = dy/dt at t0."""
    dt = t1 - t0
    third = 1.0 / 3.0
    k2 = rhs(P, t0 + dt * third, R_ref, y + dt * f0 * third)
    k3 = rhs(P, t0 + dt * (2.0 / 3.0), R_ref, y + dt * (k2 - f0 * third))
    k4 = rhs(P, t1, R_ref, y + dt * (f0 - k2 + k3))
    return y + (f0 + 3.0 * (k2 + k3) + k4) * dt * 0.125


# --- step control ---------------------------------------------------------------------------

@njit(cache=True)
def _elastic_stiffness(P, p, J):
    """The springs' and the volume term's stiffness in q (k, k) (as _Springs.stiffness_matrix
    and VolumeTerm.stiffness: stretch along each stretched spring, Gauss–Newton for V)."""
    k = J.shape[2]
    d = _spring_vectors(P, p)
    K = np.zeros((k, k))
    GJ = np.empty((3, k))
    dl = np.empty(k)
    for e in range(d.shape[0]):
        GJ[:] = 0.0
        for j in range(P.g_ptr[e], P.g_ptr[e + 1]):
            w, col = P.g_val[j], P.g_col[j]
            for c in range(3):
                for a in range(k):
                    GJ[c, a] += w * J[col, c, a]
        ke = P.stiffness[e]
        if P.zero[e]:
            for a in range(k):
                for b in range(k):
                    K[a, b] += ke * (GJ[0, a] * GJ[0, b] + GJ[1, a] * GJ[1, b]
                                     + GJ[2, a] * GJ[2, b])
        else:
            length = max(math.sqrt(d[e, 0] ** 2 + d[e, 1] ** 2 + d[e, 2] ** 2), 1e-12)
            for a in range(k):
                dl[a] = (d[e, 0] * GJ[0, a] + d[e, 1] * GJ[1, a] + d[e, 2] * GJ[2, a]) / length
            for a in range(k):
                for b in range(k):
                    K[a, b] += ke * dl[a] * dl[b]
    if P.triangles.shape[0] > 0:
        _, grad = _volume_gradient(P, p)
        g = np.zeros(k)
        for i in range(p.shape[0]):
            for a in range(k):
                g[a] += grad[i, 0] * J[i, 0, a] + grad[i, 1] * J[i, 1, a] + grad[i, 2] * J[i, 2, a]
        K += (P.sc[BULK] / P.sc[REST_VOLUME]) * np.outer(g, g)
    return K


@njit(cache=True)
def _fastest(Linv, K):
    """The largest eigenvalue of L⁻¹ K L⁻ᵀ (a frequency², rad²/s²); 0 for a state that is
    no longer finite (the step then ends in NOT_FINITE, as it would without it)."""
    A = Linv @ K @ Linv.T
    if not np.isfinite(A).all():
        return 0.0
    return np.linalg.eigvalsh(A)[-1]


@njit(cache=True)
def _contact_rows(P, R, p, J, x, xdot, base, idx):
    """Rows of y·W_i over the free coordinates idx for the points on or near the ground
    (within what they can fall in two base steps), zero for the others."""
    Q = p.shape[0]
    rows = np.zeros((Q, idx.shape[0]))
    near = False
    row = R[1]
    for i in range(Q):
        if x[i, 1] < 2.0 * base * abs(min(xdot[i, 1], 0.0)) + 1e-3 * P.sc[SIZE]:
            near = True
            full = np.concatenate((row @ R.T, -(row @ _skew(p[i])), row @ J[i]))
            rows[i] = full[idx]
    return rows, near


@njit(cache=True)
def step_now(P, t, R_ref, y, base):
    """The step for the next burst (as LatentDynamics.step_now) and dy/dt at (t, y), which
    the burst's first step reuses."""
    k = P.linear.shape[2]
    S = y.shape[0]
    idx = np.nonzero(P.free)[0]
    f0 = np.empty_like(y)
    omega2, h, contact2, bound2 = 0.0, np.inf, 0.0, 0.0
    contact_near, bound_near = False, False
    stride = P.sc[MAX_STRIDE] * P.sc[Q_RADIUS]
    for s in range(S):
        frame = _frame(P, R_ref[s], y[s])
        R, p, J, x, xdot = frame[0], frame[2], frame[3], frame[7], frame[8]
        f0[s] = _rhs_one(P, t, R_ref[s], y[s], frame)
        M = _mass_matrix(P, R, p, J)
        Linv = _lower_inverse(_cholesky(M[6:, 6:]))
        omega2 = max(omega2, _fastest(Linv, _elastic_stiffness(P, p, J)))
        for a in range(k):  # |q̇| h + ½ |q̈| h² <= stride for every coordinate
            speed, acc = abs(y[s, 12 + k + a]), abs(f0[s, 12 + k + a])
            h = min(h, 2 * stride / max(speed + math.sqrt(speed**2 + 2 * acc * stride),
                                        1e-300))
        # the free coordinates' metric, for the contact's and the latent bound's rates
        W = _lower_inverse(_cholesky(M[idx][:, idx]))
        if (P.sc[GROUND] > 0):
            rows, near = _contact_rows(P, R, p, J, x, xdot, base, idx)
            if near:
                contact_near = True
                kc = P.sc[CONTACT_RATE] ** 2 * P.sc[CONTACT_MASS]
                contact2 = max(contact2, _fastest(W, kc * (rows.T @ rows)))
        stiff = np.zeros(6 + k)
        for a in range(k):
            if abs(y[s, 6 + a]) > (1.0 - int(P.sc[BURST]) * P.sc[MAX_STRIDE]) * P.sc[Q_RADIUS]:
                bound_near = True
                stiff[6 + a] = P.bound_stiffness[a]
        if bound_near:
            bound2 = max(bound2, _fastest(W, np.diag(stiff[idx])))
    omega = math.sqrt(max(omega2, 0.0))
    slow = max(omega, 1e-9)
    follow = max(P.sc[ACCURACY] / slow, min(P.sc[MIN_STEP], P.sc[STABILITY] / slow))
    step = min(base, follow, h)
    if contact_near:
        wc = math.sqrt(max(contact2, 0.0))
        damping = (2 * P.sc[CONTACT_DAMPING] + 1.0) * wc**2 / P.sc[CONTACT_RATE]
        step = min(step, P.sc[STABILITY] / max(wc, damping, 1e-9))
    if bound_near:
        step = min(step, P.sc[STABILITY] / max(math.sqrt(max(bound2, 0.0)), 1e-9))
    return step, f0


@njit(cache=True)
def advance(P, R_ref, y, t, stop, base, steps):
    """Integrate from (t, y) to ``stop`` in bursts of at most BURST RK4 steps, re-sizing the
    step before each (as rollout._rollout's inner loop). Returns y, the time reached, the
    steps taken so far, the last step size and a status (OK, TOO_MANY_STEPS, NOT_FINITE)."""
    h = base
    if not np.isfinite(y).all():
        return y, t, steps, h, NOT_FINITE
    while stop > t + 1e-12:
        h, f0 = step_now(P, t, R_ref, y, base)
        n = max(1, math.ceil((stop - t) / h - 1e-9))
        end = stop if n <= int(P.sc[BURST]) else t + int(P.sc[BURST]) * h
        n = min(n, int(P.sc[BURST]))
        width = (end - t) / n
        half = (n + 1) // 2
        for i in range(n):  # the grid of torch.linspace(t, end, n + 1)
            ta = t + width * i if i < half else end - width * (n - i)
            tb = t + width * (i + 1) if i + 1 < half else end - width * (n - i - 1)
            y = _rk4(P, ta, tb, R_ref, y, f0 if i == 0 else rhs(P, ta, R_ref, y))
        steps += n
        t = end
        if steps > int(P.sc[MAX_STEPS]):
            return y, t, steps, h, TOO_MANY_STEPS
        if not np.isfinite(y).all():
            return y, t, steps, h, NOT_FINITE
    return y, t, steps, h, OK


# --- bookkeeping ----------------------------------------------------------------------------

ENERGIES = ("kinetic", "gravity", "elastic", "contact", "pin", "dissipated", "work")


@njit(cache=True)
def energy(P, R_ref, y):
    """(S, 7) J: the ENERGIES of each motion (as LatentDynamics.energy, without the total)."""
    k = P.linear.shape[2]
    n = 6 + k
    out = np.zeros((y.shape[0], len(ENERGIES)))
    for s in range(y.shape[0]):
        R, _, p, J, _, _, u, x, xdot = _frame(P, R_ref[s], y[s])
        vel = y[s, n:2 * n]
        out[s, 0] = 0.5 * vel @ _mass_matrix(P, R, p, J) @ vel
        for i in range(p.shape[0]):
            for c in range(3):
                out[s, 1] -= P.mass[i] * P.gravity[c] * x[i, c]
            if P.sc[GROUND] > 0:
                pen = max(-x[i, 1], 0.0)
                out[s, 3] += 0.5 * P.sc[CONTACT_RATE] ** 2 * P.sc[CONTACT_MASS] * pen * pen
        d = _spring_vectors(P, p)
        for e in range(d.shape[0]):
            stretch = max(math.sqrt(d[e, 0] ** 2 + d[e, 1] ** 2 + d[e, 2] ** 2),
                          1e-12) - P.rest_length[e]
            out[s, 2] += 0.5 * P.stiffness[e] * stretch * stretch
        if P.triangles.shape[0] > 0:
            strain = _volume_gradient(P, p)[0] / P.sc[REST_VOLUME] - 1.0
            out[s, 2] += 0.5 * P.sc[BULK] * P.sc[REST_VOLUME] * strain * strain
        for a in range(k):
            outside = max(abs(y[s, 6 + a]) - P.sc[Q_RADIUS], 0.0)
            out[s, 2] += 0.5 * P.bound_stiffness[a] * outside * outside
        if P.pin_index.shape[0] > 0:
            xa = _anchors(P, R, p, J, u, x, xdot, y[s, n:n + 3], y[s, n + 3:n + 6])[0]
            for j in range(xa.shape[0]):
                for c in range(3):
                    err = xa[j, c] - P.pin_target[j, c]
                    out[s, 4] += 0.5 * P.sc[PIN_RATE] ** 2 * P.pin_mass[j] * err * err
        out[s, 5], out[s, 6] = y[s, 2 * n], y[s, 2 * n + 1]
    return out


def ready() -> bool:
    """Whether the compiled steps (and the skinning's rotations and the strain limit's
    local step) are loaded or cached on disk for this source; if not, the first rollout
    compiles them (about half a minute, once)."""
    try:
        return all(bool(f.signatures) or bool(f._cache._cache_file._load_index())
                   for f in (advance, energy, rotation._nearest, strain._local))
    except Exception:  # numba's cache layout is not public: when unsure, say nothing
        return True


def warm() -> None:
    """Load (or, the first time, compile) the compiled steps, on a two-point body, the
    skinning's rotations and the strain limit's local step: what a process pays once
    before its first rollout (numba's own start-up and the cache), done early by
    :func:`warm_in_background`."""
    f, i = np.float64, np.int64
    k = 1
    P = Params(rest=np.zeros((2, 3)), linear=np.zeros((2, 3, k)),
               quadratic=np.zeros((2, 3, k, k)), mass=np.ones(2), centre=np.zeros(3),
               gravity=np.zeros(3), normals=np.zeros((2, 3)), areas=np.zeros(2),
               g_ptr=np.array([0, 2], i), g_col=np.array([0, 1], i),
               g_val=np.array([1.0, -1.0]), offset=np.zeros((1, 3)), stiffness=np.ones(1),
               rest_length=np.zeros(1), zero=np.zeros(1, np.bool_),
               triangles=np.zeros((0, 3), i), bound_stiffness=np.ones(k),
               damping=np.zeros((k, k)), latent_inertia=np.eye(k),
               free=np.ones(6 + k, np.bool_), wind=np.zeros(3), pin_index=np.zeros(0, i),
               pin_offset=np.zeros((0, 3)), pin_target=np.zeros((0, 3)),
               pin_mass=np.zeros(0), sc=np.ones(len(SCALARS), f))
    R, y = np.eye(3)[None].copy(), np.zeros((1, 2 * (6 + k) + 2))
    advance(P, R, y, 0.0, 0.0, 1e-3, 0)
    energy(P, R, y)
    rotation.warm()
    strain.warm()


_WARMING: list = []  # warm-up threads started in this process


def warm_in_background() -> None:
    """Start :func:`warm` on a daemon thread: it overlaps with loading and encoding (torch
    releases the interpreter while it computes), and the first rollout waits for it. A
    process that ends meanwhile (an error in its input) waits for it at exit: one that
    ended with the thread inside LLVM aborted there (SIGABRT, "dyn_cast on a non-existent
    value") instead of exiting with its one-line error."""
    import atexit
    import threading

    thread = threading.Thread(target=warm, name="neurok-kernel-warm", daemon=True)
    if not _WARMING:
        atexit.register(_finish_warming)
    _WARMING.append(thread)
    thread.start()


def _finish_warming() -> None:
    for thread in _WARMING:
        thread.join()


# advance and energy hold the code of the functions they call from kernel_terms (and the
# indices of kernel_params): numba checks only this file, so a change in those recompiles too
cache_depends_on(globals(), kernel_params, kernel_terms)
