"""The pieces of one compiled evaluation of the latent dynamics (numba): the frame's
geometry (rotation, decoded shape, metric), the forces (springs, volume, contact, air,
pins) and the small linear algebra. model/dynamics/kernel.py puts them together into the
right-hand side and the RK4 steps; everything is float64, one motion at a time."""

from __future__ import annotations

import math

import numpy as np

from ...jit import cache_depends_on, njit
from . import kernel_params
from .kernel_params import (
    AIR,
    AIR_DRAG,
    BULK,
    CLOSED,
    CONTACT_DAMPING,
    CONTACT_MASS,
    CONTACT_RATE,
    FRICTION,
    GROUND,
    GUST,
    GUST_HZ,
    JOINT,
    PIN_DAMPING,
    PIN_RATE,
    REST_VOLUME,
)

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
    """R_ref Exp(θ) (Rodrigues) and J_r(θ)⁻¹ (its series, as equations.inv_right_jacobian)."""
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


# --- one state's frame ----------------------------------------------------------------------

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



# the compiled functions above read kernel_params' indices: a change there recompiles them
cache_depends_on(globals(), kernel_params)
