"""The surface the engine is given: a welded mesh cleaned of what a flex cannot hold.

Scanned and hand-made meshes carry vertices no face uses (stray scan points, leftovers of
deleted faces). The engine's flex drops them, so its frames would no longer line up with the
mesh; here they are taken out before the run and carried along after it, each following the
nearest simulated vertex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree


@dataclass
class EngineSurface:
    """The used part of a surface and how the whole surface follows it."""

    vertices: np.ndarray  # (M, 3) vertices some face uses, metres
    faces: np.ndarray  # (F, 3) indices into ``vertices``
    follow: np.ndarray  # (N,) the simulated vertex each vertex of the whole surface follows

    def expand(self, frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
        """(T, M, 3) simulated positions -> (T, N, 3) positions of the whole surface ``rest``
        (N, 3): a used vertex moves as simulated, a stray one as its nearest used vertex."""
        disp = frames - self.vertices[None]  # (T, M, 3)
        return rest[None] + disp[:, self.follow]


def engine_surface(vertices: np.ndarray, faces: np.ndarray) -> EngineSurface:
    """Drop the vertices no face uses from (N, 3) ``vertices`` and (F, 3) ``faces``."""
    faces = np.asarray(faces, np.int64)
    used = np.unique(faces)
    remap = np.full(len(vertices), -1, np.int64)
    remap[used] = np.arange(len(used))
    follow = remap.copy()
    stray = np.flatnonzero(follow < 0)
    if len(stray):
        _, nearest = cKDTree(vertices[used]).query(vertices[stray])
        follow[stray] = nearest
    return EngineSurface(vertices=vertices[used], faces=remap[faces], follow=follow)
