"""Air on the surface (docs/design.md, "The object's own shape space"): the wind, with its
gusts, and still air pressing on the surface's vertices, each standing for its share of the
area; on a large mesh at most AIR_POINTS of them, each weighed for the cells it stands for."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ...scenario.mass import AIR_DENSITY, DRAG
from .elements import cubature
from .mechanics import Mechanics

GUST_HZ = 0.7  # the wind's gust frequency (as the engine's)
AIR_POINTS = 3000  # air acts on at most about this many vertices, each standing for its
# cell's area (a 164k-vertex sphere spent 62 ms a step on all of them; the mountain's cloth
# flutter bends and crumples as with 8,000 (0.037, 0.126), its travel within 1 %, 1 s sooner)
AIR = 0.5 * AIR_DENSITY * DRAG  # air's pressure over the square of the speed across, Pa s²/m²


class Air:
    """The air on one surface: the vertices it acts on, the triangles around them (their
    normals), the wind (m/s) and its gust (a share of it, at GUST_HZ), and ``scale`` the
    pressure over the square of the speed across (0: no air)."""

    def __init__(self, v: np.ndarray, faces: np.ndarray, mech: Mechanics, wind: np.ndarray,
                 gust: float, scale: float):
        self.wind, self.gust, self.scale, self.solid = wind, gust, scale, mech.solid
        # the vertices air acts on: all of them, or on a large mesh at most AIR_POINTS
        # standing for the rest (``cubature``: each weighed by its cell's area over its
        # own), with the triangles around them (their normals)
        keep, weight = cubature(v, mech.areas, AIR_POINTS, 2)
        self.index, self.weight = keep, weight
        around = np.flatnonzero(np.isin(faces, keep).any(axis=1))
        self.faces = faces[around]
        nf = len(around)  # each vertex's share of its faces' area vectors (a third of half)
        corners = sp.csr_matrix((np.full(3 * nf, 1 / 6), (self.faces.reshape(-1),
                                                          np.repeat(np.arange(nf), 3))),
                                shape=(len(v), nf))
        self.corners = corners[keep].tocsr()
        self.rows = mech.vertex_rows[keep].tocsr()

    def force(self, x: np.ndarray, xdot: np.ndarray, t: float) -> np.ndarray:
        """(K, 3) air pressure on the vertices ``index`` (wind with its gusts, and
        still air), each times its cubature weight."""
        if self.scale == 0.0:
            return np.zeros((len(self.index), 3))
        f = self.faces
        a = x[f[:, 1]] - x[f[:, 0]]
        b = x[f[:, 2]] - x[f[:, 0]]
        normal = self.corners @ np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                                          a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                                          a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)
        a = np.linalg.norm(normal, axis=1)
        n = normal / np.maximum(a, 1e-30)[:, None]
        wind = self.wind * (1.0 + self.gust * math.sin(2 * math.pi * GUST_HZ * t))
        vn = np.einsum("ic,ic->i", wind[None, :] - xdot[self.index], n)
        press = -np.minimum(vn, 0.0) ** 2 if self.solid else vn * np.abs(vn)
        return (self.scale * press * a * self.weight)[:, None] * n
