"""The material's energy and its gradient in one compiled pass over the elements (numba),
the integrator's inner loop (docs/design.md, "The object's own shape space").

Each element's deformation gradient is read from its rows of the sparse ``D`` (CSR) and the
handle coordinates ``Z``, its energy density and first Piola stress follow in registers,
and the stress goes back through the same rows into the gradient: one pass where NumPy
made two sparse products and a dozen (E, 3, 3) temporaries (the penguin: 0.3 against 0.9 ms
an evaluation, ~1,300 evaluations a 4 s drop). The laws are ``laws.NeoHookean`` and
``laws.Membrane``, whose NumPy ``energy_stress`` stays the definition (the rest Hessian
is taken from it) and which tests/deform/test_step_terms.py holds these to.

Compiled at first use and cached on disk (``neurok_cli/jit.py``); the module is imported
only when a body moves in its own space, so other commands do not start numba.
"""

from __future__ import annotations

import numpy as np

from ...jit import njit


@njit(cache=True, nogil=True, inline="always")
def _read(indptr, indices, data, Z, e, F):  # pragma: no cover
    """F[:, :d] += element e's rows of D against Z (d = F's columns)."""
    d = F.shape[1]
    for j in range(d):
        r = d * e + j
        for k in range(indptr[r], indptr[r + 1]):
            col = indices[k]
            w = data[k]
            for c in range(3):
                F[c, j] += w * Z[col, c]


@njit(cache=True, nogil=True, inline="always")
def _pull(indptr, indices, data, scale, P, e, grad):  # pragma: no cover
    """grad += scale x element e's rows of D, transposed, against its stress P (3, d)."""
    d = P.shape[1]
    for j in range(d):
        r = d * e + j
        for k in range(indptr[r], indptr[r + 1]):
            col = indices[k]
            w = data[k] * scale
            for c in range(3):
                grad[col, c] += w * P[c, j]


@njit(cache=True, nogil=True)
def neo_hookean(indptr, indices, data, measure, mu, lam, Z, grad):  # pragma: no cover
    """Stable Neo-Hookean over solid elements (F0 = I, three rows of D each): returns
    sum_e measure_e Psi(F_e) and writes its gradient (4H, 3) into ``grad``."""
    grad[:] = 0.0
    total = 0.0
    F = np.empty((3, 3))
    C = np.empty((3, 3))
    P = np.empty((3, 3))
    for e in range(measure.shape[0]):
        for c in range(3):
            for j in range(3):
                F[c, j] = 1.0 if c == j else 0.0
        _read(indptr, indices, data, Z, e, F)
        for j in range(3):  # cofactor: column j is the cross product of the other two
            a = (j + 1) % 3
            b = (j + 2) % 3
            C[0, j] = F[1, a] * F[2, b] - F[2, a] * F[1, b]
            C[1, j] = F[2, a] * F[0, b] - F[0, a] * F[2, b]
            C[2, j] = F[0, a] * F[1, b] - F[1, a] * F[0, b]
        J = F[0, 0] * C[0, 0] + F[1, 0] * C[1, 0] + F[2, 0] * C[2, 0]
        norm = 0.0
        for c in range(3):
            for j in range(3):
                norm += F[c, j] * F[c, j]
        total += measure[e] * (0.5 * mu * (norm - 3.0) - mu * (J - 1.0)
                               + 0.5 * lam * (J - 1.0) * (J - 1.0))
        s = lam * (J - 1.0) - mu
        for c in range(3):
            for j in range(3):
                P[c, j] = mu * F[c, j] + s * C[c, j]
        _pull(indptr, indices, data, measure[e], P, e, grad)
    return total


@njit(cache=True, nogil=True)
def membrane(indptr, indices, data, F0, measure, mu, lam, compression, Z, grad
             ):  # pragma: no cover
    """St. Venant-Kirchhoff in plane stress over a sheet's triangles (F (3, 2) = F0_e +
    its two rows of D read against Z), the compressed part of the strain weighed by
    ``compression``: returns the energy and writes its gradient (4H, 3) into ``grad``."""
    grad[:] = 0.0
    total = 0.0
    F = np.empty((3, 2))
    P = np.empty((3, 2))
    for e in range(measure.shape[0]):
        for c in range(3):
            for j in range(2):
                F[c, j] = F0[e, c, j]
        _read(indptr, indices, data, Z, e, F)
        a = 0.5 * (F[0, 0] * F[0, 0] + F[1, 0] * F[1, 0] + F[2, 0] * F[2, 0] - 1.0)
        b = 0.5 * (F[0, 0] * F[0, 1] + F[1, 0] * F[1, 1] + F[2, 0] * F[2, 1])
        d = 0.5 * (F[0, 1] * F[0, 1] + F[1, 1] * F[1, 1] + F[2, 1] * F[2, 1] - 1.0)
        tr = a + d
        if compression < 1.0:  # E = E+ + E-: the positive part keeps E's positive eigenvalues
            m = 0.5 * (a + d)
            rad = np.sqrt((0.5 * (a - d)) ** 2 + b * b)
            hi = m + rad
            lo = m - rad
            if lo >= 0.0:
                pa, pb, pd = a, b, d
            elif hi <= 0.0:
                pa, pb, pd = 0.0, 0.0, 0.0
            else:
                scale = hi / max(2.0 * rad, 1e-300)
                pa, pb, pd = scale * (a - lo), scale * b, scale * (d - lo)
            na, nb, nd = a - pa, b - pb, d - pd
            trp = max(tr, 0.0)
            trn = tr - trp
            psi = mu * (pa * pa + 2.0 * pb * pb + pd * pd
                        + compression * (na * na + 2.0 * nb * nb + nd * nd)) + \
                0.5 * lam * (trp * trp + compression * trn * trn)
            t = lam * (trp + compression * trn)
            s00 = 2.0 * mu * (pa + compression * na) + t
            s01 = 2.0 * mu * (pb + compression * nb)
            s11 = 2.0 * mu * (pd + compression * nd) + t
        else:
            psi = mu * (a * a + 2.0 * b * b + d * d) + 0.5 * lam * tr * tr
            s00 = 2.0 * mu * a + lam * tr
            s01 = 2.0 * mu * b
            s11 = 2.0 * mu * d + lam * tr
        total += measure[e] * psi
        for c in range(3):  # P = F S
            P[c, 0] = F[c, 0] * s00 + F[c, 1] * s01
            P[c, 1] = F[c, 0] * s01 + F[c, 1] * s11
        _pull(indptr, indices, data, measure[e], P, e, grad)
    return total

