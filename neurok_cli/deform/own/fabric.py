"""Fabric's energy on a cloth's simulation mesh, as projective dynamics' constraints (Bouaziz
et al. 2014; docs/design.md, "Cloth on its own simulation mesh").

Each term is ``w/2 |A x - p(x)|^2``: a linear map of the vertices' positions and the nearest
point of a set the term is at rest on, so one implicit step alternates a local step (every
projection, compiled) and a global one (a sparse system whose matrix does not change: it is
factored once a run).

- **Stretch**, per triangle: its deformation gradient F (3, 2) against the nearest matrix
  whose singular values lie within a strain limit ``[lo, hi]`` (a fabric that barely
  stretches, folds, and shears a little), weighed by its in-plane stiffness (N/m) times its
  area. Woven fabric is hundreds of times stiffer in its plane than the engine's explicit
  step can take; here the stiffness costs nothing in stability.
- **Bending**, per vertex: the cotangent Laplacian of the positions against the rest's,
  turned with the vertex's normal, over its area, weighed by the fabric's bending rigidity
  D (N m): a curved rest shape (a mountain's relief) is at rest, under any rigid motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...jit import njit


@dataclass
class Fabric:
    """A sheet's stretch and bending terms over its simulation mesh (metres)."""

    rest: np.ndarray  # (N, 3) rest positions
    faces: np.ndarray  # (F, 3)
    G: sp.csr_matrix  # (2F, N): (G @ x)[2t + j] = column j of triangle t's F (a row)
    stretch_weight: np.ndarray  # (F,) N/m x m^2: each triangle's stiffness x area
    lo: float  # the strain limit: singular values of F are kept within [lo, hi]
    hi: float
    L: sp.csr_matrix  # (N, N) cotangent Laplacian (clamped weights)
    bend_weight: np.ndarray  # (N,) D / the vertex's area
    rest_curvature: np.ndarray  # (N, 3) L @ rest
    rest_normals: np.ndarray  # (N, 3) unit vertex normals at rest

    def system(self) -> sp.csr_matrix:
        """(N, N) sum of the terms' ``w A^T A`` (the same for each coordinate)."""
        w = np.repeat(self.stretch_weight, 2)
        K = self.G.T @ sp.diags(w) @ self.G + self.L.T @ sp.diags(self.bend_weight) @ self.L
        return K.tocsr()

    def projections(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The local step at ``x`` (N, 3): (2F, 3) the nearest admissible deformation
        gradients' rows, and (N, 3) the rest curvature turned with each vertex's normal."""
        Fx = np.ascontiguousarray(self.G @ x)
        P = _clamp_stretch(Fx, self.lo, self.hi)
        normals = vertex_normals(x, self.faces)
        B = _turn_curvature(self.rest_curvature, self.rest_normals, normals)
        return P, B

    def pull(self, P: np.ndarray, B: np.ndarray) -> np.ndarray:
        """(N, 3) the global step's right-hand side from the projections: sum w A^T p."""
        w = np.repeat(self.stretch_weight, 2)[:, None]
        return self.G.T @ (w * P) + self.L.T @ (self.bend_weight[:, None] * B)

    def energy(self, x: np.ndarray) -> tuple[float, float]:
        """(stretch, bending) energy at ``x``, J: each term's distance to its projection."""
        P, B = self.projections(x)
        ds = (self.G @ x - P) ** 2
        db = (self.L @ x - B) ** 2
        w = np.repeat(self.stretch_weight, 2)
        return 0.5 * float(w @ ds.sum(axis=1)), 0.5 * float(self.bend_weight @ db.sum(axis=1))


def build_fabric(rest: np.ndarray, faces: np.ndarray, stretch: float, rigidity: float,
                 limit: tuple[float, float]) -> Fabric:
    """The fabric of a sheet ``rest`` (N, 3), ``faces`` (F, 3): in-plane stiffness
    ``stretch`` (N/m), bending rigidity ``rigidity`` (N m), strain limit ``limit`` (the
    least and most a triangle's principal stretch may be, e.g. (0.99, 1.01))."""
    x = np.asarray(rest, np.float64)
    f = np.asarray(faces, np.int64)
    e1, e2 = x[f[:, 1]] - x[f[:, 0]], x[f[:, 2]] - x[f[:, 0]]
    area = 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)
    ok = area > 1e-14 * max(float(area.max()), 1e-30)
    f, e1, e2, area = f[ok], e1[ok], e2[ok], area[ok]
    # each triangle's rest frame: edge 1 along the first axis, the second in its plane
    l1 = np.linalg.norm(e1, axis=1)
    u = e1 / l1[:, None]
    Dm = np.zeros((len(f), 2, 2))
    Dm[:, 0, 0] = l1
    Dm[:, 0, 1] = np.einsum("ij,ij->i", e2, u)
    Dm[:, 1, 1] = 2 * area / l1
    inv = np.linalg.inv(Dm)  # (F, 2, 2): F = [x1 - x0, x2 - x0] @ inv
    rows, cols, vals = [], [], []
    for j in range(2):  # column j of F = sum_k inv[k, j] (x_{k+1} - x_0)
        r = 2 * np.arange(len(f)) + j
        for k, coef in ((0, -inv[:, 0, j] - inv[:, 1, j]), (1, inv[:, 0, j]), (2, inv[:, 1, j])):
            rows.append(r)
            cols.append(f[:, k])
            vals.append(coef)
    G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(2 * len(f), len(x)))
    L, vertex_area = cotangent_laplacian(x, f)
    return Fabric(rest=x, faces=f, G=G, stretch_weight=stretch * area, lo=limit[0],
                  hi=limit[1], L=L, bend_weight=rigidity / np.maximum(vertex_area, 1e-30),
                  rest_curvature=np.asarray(L @ x), rest_normals=vertex_normals(x, f))


def cotangent_laplacian(x: np.ndarray, faces: np.ndarray, most: float = 10.0
                        ) -> tuple[sp.csr_matrix, np.ndarray]:
    """(N, N) the cotangent Laplacian (L x)_i = sum_j w_ij (x_i - x_j) / 2 with each cotangent
    clamped to [0, ``most``] (a coarse copy's slivers and obtuse triangles would give
    weights that bend it the wrong way), and (N,) the vertices' areas (a third of their
    triangles')."""
    n = len(x)
    rows, cols, vals = [], [], []
    for a, b, c in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):  # the angle at a faces edge (b, c)
        ea = x[faces[:, b]] - x[faces[:, a]]
        eb = x[faces[:, c]] - x[faces[:, a]]
        cos = np.einsum("ij,ij->i", ea, eb)
        sin = np.linalg.norm(np.cross(ea, eb), axis=1)
        cot = np.clip(cos / np.maximum(sin, 1e-30), 0.0, most) / 2
        rows += [faces[:, b], faces[:, c]]
        cols += [faces[:, c], faces[:, b]]
        vals += [cot, cot]
    W = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n))
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    area = np.zeros(n)
    tri = 0.5 * np.linalg.norm(np.cross(x[faces[:, 1]] - x[faces[:, 0]],
                                        x[faces[:, 2]] - x[faces[:, 0]]), axis=1)
    np.add.at(area, faces.reshape(-1), np.repeat(tri / 3, 3))
    return L.tocsr(), area


def vertex_normals(x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(N, 3) unit normals, the sum of the vertex's triangles' area vectors (a vertex of no
    triangle: +y)."""
    return _vertex_normals(np.ascontiguousarray(x, np.float64),
                           np.ascontiguousarray(faces, np.int64))


@njit(cache=True, nogil=True)
def _vertex_normals(x, faces):
    n = np.zeros_like(x)
    for t in range(faces.shape[0]):
        a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
        u0, u1, u2 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        v0, v1, v2 = x[c, 0] - x[a, 0], x[c, 1] - x[a, 1], x[c, 2] - x[a, 2]
        cx, cy, cz = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
        for k in (a, b, c):
            n[k, 0] += cx
            n[k, 1] += cy
            n[k, 2] += cz
    for i in range(x.shape[0]):
        s = np.sqrt(n[i, 0] ** 2 + n[i, 1] ** 2 + n[i, 2] ** 2)
        if s > 1e-300:
            n[i] /= s
        else:
            n[i, 0], n[i, 1], n[i, 2] = 0.0, 1.0, 0.0
    return n


@njit(cache=True, nogil=True)
def _clamp_stretch(Fx, lo, hi):
    """Rows (2F, 3) of deformation gradients F_t (3, 2) -> the nearest F_t V diag(s) V^T
    with V, s from F_t^T F_t's eigen-decomposition: its singular values clamped to [lo, hi]."""
    out = np.empty_like(Fx)
    for t in range(Fx.shape[0] // 2):
        f0, f1 = Fx[2 * t], Fx[2 * t + 1]  # F's two columns
        a = f0[0] * f0[0] + f0[1] * f0[1] + f0[2] * f0[2]
        b = f0[0] * f1[0] + f0[1] * f1[1] + f0[2] * f1[2]
        d = f1[0] * f1[0] + f1[1] * f1[1] + f1[2] * f1[2]
        m = 0.5 * (a + d)
        r = np.sqrt(0.25 * (a - d) ** 2 + b * b)
        l1, l2 = m + r, max(m - r, 0.0)  # F^T F's eigenvalues, l1 >= l2
        if r > 1e-14 * max(m, 1e-300):  # the first eigenvector
            if a >= d:
                v0, v1 = l1 - d, b
            else:
                v0, v1 = b, l1 - a
            s = np.sqrt(v0 * v0 + v1 * v1)
            v0, v1 = v0 / s, v1 / s
        else:
            v0, v1 = 1.0, 0.0
        s1, s2 = np.sqrt(l1), np.sqrt(l2)
        c1 = min(max(s1, lo), hi) / s1 if s1 > 1e-12 else 1.0
        c2 = min(max(s2, lo), hi) / s2 if s2 > 1e-12 else 1.0
        # S = c1 v v^T + c2 w w^T with w = (-v1, v0)
        s00 = c1 * v0 * v0 + c2 * v1 * v1
        s01 = (c1 - c2) * v0 * v1
        s11 = c1 * v1 * v1 + c2 * v0 * v0
        for k in range(3):
            out[2 * t, k] = f0[k] * s00 + f1[k] * s01
            out[2 * t + 1, k] = f0[k] * s01 + f1[k] * s11
    return out


@njit(cache=True, nogil=True)
def _turn_curvature(rest_curv, rest_n, n):
    """Each vertex's rest curvature vector turned by the least rotation taking its rest
    normal to its normal now (Rodrigues)."""
    out = np.empty_like(rest_curv)
    for i in range(rest_curv.shape[0]):
        a0, a1, a2 = rest_n[i, 0], rest_n[i, 1], rest_n[i, 2]
        b0, b1, b2 = n[i, 0], n[i, 1], n[i, 2]
        k0, k1, k2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0  # sin axis
        c = a0 * b0 + a1 * b1 + a2 * b2
        p0, p1, p2 = rest_curv[i, 0], rest_curv[i, 1], rest_curv[i, 2]
        if c < -1.0 + 1e-9:  # turned over: a half turn about any axis across the normal
            out[i, 0], out[i, 1], out[i, 2] = -p0, -p1, -p2
            continue
        kp0, kp1, kp2 = k1 * p2 - k2 * p1, k2 * p0 - k0 * p2, k0 * p1 - k1 * p0
        kk0, kk1, kk2 = k1 * kp2 - k2 * kp1, k2 * kp0 - k0 * kp2, k0 * kp1 - k1 * kp0
        q = 1.0 / (1.0 + c)
        out[i, 0] = p0 + kp0 + q * kk0
        out[i, 1] = p1 + kp1 + q * kk1
        out[i, 2] = p2 + kp2 + q * kk2
    return out
