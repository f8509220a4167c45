"""The latent dynamics' right-hand side, step control and RK4 steps, compiled (numba).

:class:`~neurok_cli.model.dynamics.core.LatentDynamics` states the mechanics in torch; this module
evaluates the same equations point by point in machine code. An evaluation holds a few
hundred numbers, so in torch it is nearly all per-operation overhead (~200 calls, ~0.6 ms);
here one evaluation is one call. :func:`advance` runs the whole stretch between two frames
(step control every BURST steps, the classic RK4 "3/8 rule" steps that ``torchdiffeq``'s
``rk4`` takes), so Python is visited once per frame. Same arithmetic as the torch code, in
another order: the two agree to rounding (tests/model/test_kernel.py holds them to it), and
the torch path stays as the reference (``rollout(..., compiled=False)``).

Everything is float64; S motions of one body are looped over. :func:`params` gathers what
the kernel reads from a LatentDynamics into one named tuple of arrays and numbers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import rotation, strain
from .._jit import njit

# what advance() reports back
OK, TOO_MANY_STEPS, NOT_FINITE = 0, 1, 2


class Params(NamedTuple):
    """One body and its environment, as the kernel reads them (see :func:`params`)."""

    rest: np.ndarray  # (Q, 3)
    linear: np.ndarray  # (Q, 3, k)
    quadratic: np.ndarray  # (Q, 3, k, k)
    mass: np.ndarray  # (Q,)
    centre: np.ndarray  # (3,)
    gravity: np.ndarray  # (3,)
    normals: np.ndarray  # (Q, 3)
    areas: np.ndarray  # (Q,)
    # springs d = G p + offset as CSR rows, stiffness, rest length, zero-length flags
    g_ptr: np.ndarray
    g_col: np.ndarray
    g_val: np.ndarray
    offset: np.ndarray  # (E, 3)
    stiffness: np.ndarray  # (E,)
    rest_length: np.ndarray  # (E,)
    zero: np.ndarray  # (E,) bool
    triangles: np.ndarray  # (T, 3) int64; empty without a volume term
    bound_stiffness: np.ndarray  # (k,)
    damping: np.ndarray  # (k, k) Rayleigh D
    latent_inertia: np.ndarray  # (k, k)
    free: np.ndarray  # (n,) bool
    wind: np.ndarray  # (3,)
    pin_index: np.ndarray  # (P,) int64
    pin_offset: np.ndarray  # (P, 3)
    pin_target: np.ndarray  # (P, 3)
    pin_mass: np.ndarray  # (P,)
    sc: np.ndarray  # the numbers, at the indices below (a tuple of arrays alone compiles
    # several times faster than one that mixes arrays and numbers)


SCALARS = ("bulk", "rest_volume", "q_radius", "ground", "friction", "contact_rate",
           "contact_damping", "contact_mass", "air", "closed", "air_drag", "gust", "joint",
           "pin_rate", "pin_damping", "size", "accuracy", "stability", "min_step",
           "max_stride", "burst", "max_steps", "gust_hz")
(BULK, REST_VOLUME, Q_RADIUS, GROUND, FRICTION, CONTACT_RATE, CONTACT_DAMPING, CONTACT_MASS,
 AIR, CLOSED, AIR_DRAG, GUST, JOINT, PIN_RATE, PIN_DAMPING, SIZE, ACCURACY, STABILITY,
 MIN_STEP, MAX_STRIDE, BURST, MAX_STEPS, GUST_HZ) = range(len(SCALARS))


def params(dyn, constants: dict) -> Params:
    """The kernel's view of a LatentDynamics ``dyn``; ``constants``: its step-control
    constants (dynamics.KERNEL_CONSTANTS: the step control's and the gusts' frequency)."""
    a = lambda t: np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float64)  # noqa: E731
    i64 = lambda t: np.ascontiguousarray(t.cpu().numpy(), dtype=np.int64)  # noqa: E731
    body, env, sp = dyn.body, dyn.env, dyn.springs
    G = sp.G.to_dense().to_sparse_csr()
    vol = body.volume
    sc = np.zeros(len(SCALARS))
    for name, value in dict(
            bulk=0.0 if vol is None else vol.bulk,
            rest_volume=1.0 if vol is None else vol.rest_volume, q_radius=dyn.q_radius,
            ground=env.ground, friction=env.friction, contact_rate=env.contact_rate,
            contact_damping=env.contact_damping, contact_mass=dyn.contact_mass, air=dyn._air,
            closed=body.closed, air_drag=0.5 * env.air_density * env.drag, gust=env.gust,
            joint=dyn._joint, pin_rate=env.pin_rate, pin_damping=dyn.pin_damping,
            size=float(body.shape.rest.abs().max()),
            **{key.lower(): value for key, value in constants.items()}).items():
        sc[SCALARS.index(name)] = float(value)
    return Params(
        rest=a(body.shape.rest), linear=a(body.shape.linear), quadratic=a(body.shape.quadratic),
        mass=a(body.mass), centre=a(body.centre), gravity=a(dyn.g), normals=a(body.normals),
        areas=a(body.areas), g_ptr=i64(G.crow_indices()), g_col=i64(G.col_indices()),
        g_val=a(G.values()), offset=a(sp.offset), stiffness=a(sp.stiffness),
        rest_length=a(sp.rest_length), zero=sp.zero.cpu().numpy().astype(np.bool_),
        triangles=np.zeros((0, 3), np.int64) if vol is None else i64(vol.triangles),
        bound_stiffness=a(dyn.bound_stiffness), damping=a(dyn.D),
        latent_inertia=a(dyn.latent_inertia), free=dyn.free.cpu().numpy().astype(np.bool_),
        wind=a(dyn.wind), pin_index=i64(dyn._pin_index), pin_offset=a(dyn.pin_offset),
        pin_target=a(dyn.pin_target), pin_mass=a(dyn.pin_mass), sc=sc)


# --- small pieces -------------------------------------------------------------------------

@njit(cache=True)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _crossed(a0, a1, a2, b0, b1, b2):
    """a x b from components, as a tuple (no array is made: this runs per point)."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _mv(R, a0, a1, a2):
    """R a for a 3 x 3 R, as a tuple."""
    return (R[0, 0] * a0 + R[0, 1] * a1 + R[0, 2] * a2, R[1, 0] * a0 + R[1, 1] * a1
            + R[1, 2] * a2, R[2, 0] * a0 + R[2, 1] * a1 + R[2, 2] * a2)


@njit(cache=True)
def _mtv(R, a0, a1, a2):
    """Rᵀ a for a 3 x 3 R, as a tuple."""
    return (R[0, 0] * a0 + R[1, 0] * a1 + R[2, 0] * a2, R[0, 1] * a0 + R[1, 1] * a1
            + R[2, 1] * a2, R[0, 2] * a0 + R[1, 2] * a1 + R[2, 2] * a2)


@njit(cache=True)
def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@njit(cache=True)
def _rotation(R_ref, th):
    """R_ref Exp(θ) (Rodrigues) and J_r(θ)⁻¹ (its series, as dynamics.inv_right_jacobian)."""
    K = _skew(th)
    K2 = K @ K
    a2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    a = math.sqrt(a2)
    if a < 1e-6:
        s1, s2 = 1.0 - a2 / 6.0, 0.5 - a2 / 24.0
    else:
        s1, s2 = math.sin(a) / a, 2.0 * math.sin(0.5 * a) ** 2 / a2
    R = R_ref @ (np.eye(3) + s1 * K + s2 * K2)
    Jinv = np.eye(3) + 0.5 * K + (1.0 / 12.0 + a2 / 720.0 + a2 * a2 / 30240.0) * K2
    return R, Jinv


@njit(cache=True)
def _shape(P, q, qd):
    """Points p (Q, 3), Jacobian J (Q, 3, k), J q̇ (Q, 3) and B[q̇, q̇] (Q, 3) at q, q̇: one
    pass over the quadratic coefficients."""
    Q, k = P.rest.shape[0], q.shape[0]
    p = np.empty((Q, 3))
    J = np.empty((Q, 3, k))
    Jqd = np.empty((Q, 3))
    curv = np.empty((Q, 3))
    for i in range(Q):
        for c in range(3):
            lin, full, jq, cu = 0.0, 0.0, 0.0, 0.0
            for a in range(k):
                bq, bqd = 0.0, 0.0
                for b in range(k):
                    B = P.quadratic[i, c, a, b]
                    bq += B * q[b]
                    bqd += B * qd[b]
                j = P.linear[i, c, a] + bq
                J[i, c, a] = j
                lin += P.linear[i, c, a] * q[a]
                full += j * q[a]
                jq += j * qd[a]
                cu += bqd * qd[a]
            p[i, c] = P.rest[i, c] + 0.5 * (lin + full)
            Jqd[i, c] = jq
            curv[i, c] = cu
    return p, J, Jqd, curv


@njit(cache=True)
def _mass_matrix(P, R, p, J):
    """Σ m Wᵀ W with W_i = [Rᵀ, -[p_i]x, J_i] (n, n), plus the latent inertia."""
    Q, k = p.shape[0], J.shape[2]
    n = 6 + k
    M = np.zeros((n, n))
    mp = np.zeros(3)
    mJ = np.zeros((3, k))
    for i in range(Q):
        m = P.mass[i]
        pi = p[i]
        mp += m * pi
        pp = pi[0] * pi[0] + pi[1] * pi[1] + pi[2] * pi[2]
        for r in range(3):
            M[3 + r, 3 + r] += m * pp
            for c in range(3):
                M[3 + r, 3 + c] -= m * pi[r] * pi[c]
        for a in range(k):
            j0, j1, j2 = J[i, 0, a], J[i, 1, a], J[i, 2, a]
            mJ[0, a] += m * j0
            mJ[1, a] += m * j1
            mJ[2, a] += m * j2
            c0, c1, c2 = _crossed(pi[0], pi[1], pi[2], j0, j1, j2)  # the (ω, q) block
            M[3, 6 + a] += m * c0
            M[4, 6 + a] += m * c1
            M[5, 6 + a] += m * c2
            for b in range(a, k):
                M[6 + a, 6 + b] += m * (j0 * J[i, 0, b] + j1 * J[i, 1, b] + j2 * J[i, 2, b])
    mtot = P.mass.sum()
    Mvw = -(R @ _skew(mp))
    Mvq = R @ mJ
    for r in range(3):
        M[r, r] = mtot
        for c in range(3):
            M[r, 3 + c] = Mvw[r, c]
            M[3 + c, r] = Mvw[r, c]
        for a in range(k):
            M[r, 6 + a] = Mvq[r, a]
            M[6 + a, r] = Mvq[r, a]
            M[6 + a, 3 + r] = M[3 + r, 6 + a]
    for a in range(k):
        for b in range(a + 1, k):
            M[6 + b, 6 + a] = M[6 + a, 6 + b]
    M[6:, 6:] += P.latent_inertia
    return M


# --- forces ---------------------------------------------------------------------------------

@njit(cache=True)
def _spring_vectors(P, p):
    """d = G p + offset (E, 3)."""
    E = P.offset.shape[0]
    d = P.offset.copy()
    for e in range(E):
        for j in range(P.g_ptr[e], P.g_ptr[e + 1]):
            w, col = P.g_val[j], P.g_col[j]
            for c in range(3):
                d[e, c] += w * p[col, c]
    return d


@njit(cache=True)
def _volume_gradient(P, p):
    """The enclosed volume V and dV/dp (Q, 3) (as volume.volume_gradient)."""
    grad = np.zeros_like(p)
    V = 0.0
    for t in range(P.triangles.shape[0]):
        ia, ib, ic = P.triangles[t, 0], P.triangles[t, 1], P.triangles[t, 2]
        a0, a1, a2 = p[ia, 0], p[ia, 1], p[ia, 2]
        b0, b1, b2 = p[ib, 0], p[ib, 1], p[ib, 2]
        c0, c1, c2 = p[ic, 0], p[ic, 1], p[ic, 2]
        x0, x1, x2 = _crossed(b0, b1, b2, c0, c1, c2)
        V += (a0 * x0 + a1 * x1 + a2 * x2) / 6.0
        grad[ia, 0] += x0 / 6.0
        grad[ia, 1] += x1 / 6.0
        grad[ia, 2] += x2 / 6.0
        x0, x1, x2 = _crossed(c0, c1, c2, a0, a1, a2)
        grad[ib, 0] += x0 / 6.0
        grad[ib, 1] += x1 / 6.0
        grad[ib, 2] += x2 / 6.0
        x0, x1, x2 = _crossed(a0, a1, a2, b0, b1, b2)
        grad[ic, 0] += x0 / 6.0
        grad[ic, 1] += x1 / 6.0
        grad[ic, 2] += x2 / 6.0
    return V, grad


@njit(cache=True)
def _internal(P, p):
    """Body-frame elastic forces on the points (Q, 3): the springs and the volume term."""
    d = _spring_vectors(P, p)
    f = np.zeros_like(p)
    for e in range(d.shape[0]):
        length = max(math.sqrt(d[e, 0] ** 2 + d[e, 1] ** 2 + d[e, 2] ** 2), 1e-12)
        s = P.stiffness[e] * (length - P.rest_length[e]) / length
        for j in range(P.g_ptr[e], P.g_ptr[e + 1]):
            w, col = P.g_val[j], P.g_col[j]
            for c in range(3):
                f[col, c] -= w * s * d[e, c]
    if P.triangles.shape[0] > 0:
        V, grad = _volume_gradient(P, p)
        f -= P.sc[BULK] * (V / P.sc[REST_VOLUME] - 1.0) * grad
    return f


@njit(cache=True)
def _external(P, t, R, x, xdot):
    """World forces on the points (Q, 3) but the pins': gravity, contact with friction and
    air; also the dissipative part's power and the wind's (air's) power."""
    Q = x.shape[0]
    force = np.empty((Q, 3))
    p_diss, p_work = 0.0, 0.0
    kc = P.sc[CONTACT_RATE] ** 2
    cc = 2.0 * P.sc[CONTACT_DAMPING] * P.sc[CONTACT_RATE]
    mc = P.sc[CONTACT_MASS]
    gust = 1.0 + P.sc[GUST] * math.sin(2.0 * math.pi * P.sc[GUST_HZ] * t)
    for i in range(Q):
        for c in range(3):
            force[i, c] = P.mass[i] * P.gravity[c]
        if (P.sc[GROUND] > 0):
            pen = max(-x[i, 1], 0.0)
            spring = kc * mc * pen
            reach = P.sc[CONTACT_RATE] * pen  # the damper's speed: within the rate x depth
            damper = cc * mc * min(max(xdot[i, 1], -reach), reach)
            fn = max(spring - damper, 0.0)
            speed = max(math.sqrt(xdot[i, 0] ** 2 + xdot[i, 2] ** 2), 1e-12)
            ft = min(P.sc[FRICTION] * fn, P.sc[CONTACT_RATE] * mc * speed)
            fx, fz = -ft / speed * xdot[i, 0], -ft / speed * xdot[i, 2]
            force[i, 0] += fx
            force[i, 1] += fn
            force[i, 2] += fz
            p_diss -= fx * xdot[i, 0] + (fn - spring) * xdot[i, 1] + fz * xdot[i, 2]
        if (P.sc[AIR] > 0):
            normal = _mv(R, P.normals[i, 0], P.normals[i, 1], P.normals[i, 2])
            vn = 0.0
            for c in range(3):
                vn += (P.wind[c] * gust - xdot[i, c]) * normal[c]
            press = -min(vn, 0.0) ** 2 if (P.sc[CLOSED] > 0) else vn * abs(vn)
            for c in range(3):
                fw = P.sc[AIR_DRAG] * press * P.areas[i] * normal[c]
                force[i, c] += fw
                p_work += fw * xdot[i, c]
    return force, p_diss, p_work


@njit(cache=True)
def _anchors(P, R, p, J, u, x, xdot, v, w):
    """The pins' anchors: world positions and velocities (P, 3) and body-frame W (P, 3, n)."""
    n_p, k = P.pin_index.shape[0], J.shape[2]
    xa = np.empty((n_p, 3))
    va = np.empty((n_p, 3))
    Wa = np.zeros((n_p, 3, 6 + k))
    for j in range(n_p):
        i = P.pin_index[j]
        pa = p[i] - P.pin_offset[j] if (P.sc[JOINT] > 0) else p[i]
        if (P.sc[JOINT] > 0):
            xa[j] = x[i] - R @ P.pin_offset[j]
            va[j] = v + R @ (u[i] - _cross(w, P.pin_offset[j]))
        else:
            xa[j], va[j] = x[i], xdot[i]
        Wa[j, :, 0:3] = R.T
        Wa[j, :, 3:6] = -_skew(pa)
        Wa[j, :, 6:] = J[i]
    return xa, va, Wa


@njit(cache=True)
def _pins(P, R, p, J, u, x, xdot, v, w):
    """The pins' generalized force (n,) and the power their dampers dissipate."""
    n = 6 + J.shape[2]
    gen = np.zeros(n)
    if P.pin_index.shape[0] == 0:
        return gen, 0.0
    xa, va, Wa = _anchors(P, R, p, J, u, x, xdot, v, w)
    kp = P.sc[PIN_RATE] ** 2
    power = 0.0
    for j in range(xa.shape[0]):
        pm = P.pin_mass[j]
        damp = -P.sc[PIN_DAMPING] * pm * va[j]
        fb = R.T @ (-kp * pm * (xa[j] - P.pin_target[j]) + damp)
        gen += Wa[j].T @ fb
        power -= damp[0] * va[j, 0] + damp[1] * va[j, 1] + damp[2] * va[j, 2]
    return gen, power


@njit(cache=True)
def _cholesky(A):
    """L with L Lᵀ = A (symmetric positive definite; written out, as numpy.linalg's takes
    seconds to compile)."""
    n = A.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        d = A[j, j]
        for m in range(j):
            d -= L[j, m] * L[j, m]
        L[j, j] = math.sqrt(d)
        for i in range(j + 1, n):
            v = A[i, j]
            for m in range(j):
                v -= L[i, m] * L[j, m]
            L[i, j] = v / L[j, j]
    return L


@njit(cache=True)
def _lower_inverse(L):
    """L⁻¹ of a lower-triangular L."""
    n = L.shape[0]
    X = np.zeros((n, n))
    for c in range(n):
        X[c, c] = 1.0 / L[c, c]
        for i in range(c + 1, n):
            v = 0.0
            for m in range(c, i):
                v -= L[i, m] * X[m, c]
            X[i, c] = v / L[i, i]
    return X


@njit(cache=True)
def _solve(P, M, rhs):
    """M⁻¹ rhs over the free coordinates (the others stay still), by Cholesky."""
    idx = np.nonzero(P.free)[0]
    L = _cholesky(M[idx][:, idx])
    z = rhs[idx].copy()
    f = idx.shape[0]
    for i in range(f):  # L z = b, then Lᵀ x = z
        for m in range(i):
            z[i] -= L[i, m] * z[m]
        z[i] /= L[i, i]
    for i in range(f - 1, -1, -1):
        for m in range(i + 1, f):
            z[i] -= L[m, i] * z[m]
        z[i] /= L[i, i]
    out = np.zeros_like(rhs)
    out[idx] = z
    return out


# --- the right-hand side --------------------------------------------------------------------

@njit(cache=True)
def _frame(P, R_ref, y):
    """What one motion's state y (2n + 2) gives: R, J_r⁻¹, p, J, J q̇, B[q̇, q̇], u (body
    velocity relative to the frame), x and ẋ (world)."""
    k = P.linear.shape[2]
    q, v, w, qd = y[6:6 + k], y[6 + k:9 + k], y[9 + k:12 + k], y[12 + k:12 + 2 * k]
    R, Jinv = _rotation(R_ref, y[3:6])
    p, J, Jqd, curv = _shape(P, q, qd)
    Q = p.shape[0]
    u = np.empty((Q, 3))
    x = np.empty((Q, 3))
    xdot = np.empty((Q, 3))
    for i in range(Q):
        c0, c1, c2 = _crossed(w[0], w[1], w[2], p[i, 0], p[i, 1], p[i, 2])
        u0, u1, u2 = c0 + Jqd[i, 0], c1 + Jqd[i, 1], c2 + Jqd[i, 2]
        u[i, 0], u[i, 1], u[i, 2] = u0, u1, u2
        r0, r1, r2 = _mv(R, p[i, 0], p[i, 1], p[i, 2])
        x[i, 0], x[i, 1], x[i, 2] = P.centre[0] + y[0] + r0, P.centre[1] + y[1] + r1, \
            P.centre[2] + y[2] + r2
        r0, r1, r2 = _mv(R, u0, u1, u2)
        xdot[i, 0], xdot[i, 1], xdot[i, 2] = v[0] + r0, v[1] + r1, v[2] + r2
    return R, Jinv, p, J, Jqd, curv, u, x, xdot


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
    step before each (as dynamics._rollout's inner loop). Returns y, the time reached, the
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
