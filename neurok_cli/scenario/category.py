"""What kind of body a surface is, read from its geometry (``--material auto``): a cloth, a
beam or a soft body. ``animate`` and ``simulate`` decide alike, so one file runs the same job
in both (docs/design.md, "Units, size and materials")."""

from __future__ import annotations

import numpy as np

from ..data.geometry import face_areas
from .presets import long_axis

SHEET_HOLES = 0.3  # an open surface is a sheet when closing its holes takes this x its area


def _rim(faces: np.ndarray) -> np.ndarray:
    """The surface's open boundary: edges of one face only, (E, 2), as their faces run."""
    e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]).astype(np.int64)
    if not len(e):
        return e
    # one int64 key per undirected edge, not rows of a structured view (600k edges of a
    # 100k-vertex mesh: 0.43 s -> ~0.05 s)
    lo, hi = e.min(axis=1), e.max(axis=1)
    key = lo * (int(e.max()) + 1) + hi
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return e[counts[inverse] == 1]


def open_boundary(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Length of the surface's open boundary (edges of one face) over sqrt(its area): 0 for
    a watertight solid, small for a solid with a few holes, ~4 for a square sheet."""
    b = _rim(faces)
    length = np.linalg.norm(vertices[b[:, 0]] - vertices[b[:, 1]], axis=1).sum()
    return float(length / max(np.sqrt(face_areas(vertices, faces).sum()), 1e-300))


def hole_share(vertices: np.ndarray, faces: np.ndarray) -> float:
    """The area it takes to close the surface's holes over the surface's own area: the sum
    of the boundary loops' vector areas (the area of each loop's projection on its best
    plane). 0 for a watertight solid, 1 for a flat sheet, 0.5 for a hemispherical shell,
    about a third for a square cloth hanging straight down all round a table half its
    width, under a quarter for a teapot open at its lid and spout."""
    rim = _rim(faces)
    if not len(rim):
        return 0.0
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(vertices)
    graph = coo_matrix((np.ones(len(rim)), (rim[:, 0], rim[:, 1])), shape=(n, n))
    _, loop = connected_components(graph, directed=False)
    cross = np.cross(vertices[rim[:, 0]], vertices[rim[:, 1]]) / 2.0  # closed loops: origin-free
    vector = np.zeros((n, 3))
    np.add.at(vector, loop[rim[:, 0]], cross)
    area = face_areas(vertices, faces).sum()
    return float(np.linalg.norm(vector, axis=1).sum() / max(area, 1e-300))


def auto_category(vertices: np.ndarray, faces: np.ndarray) -> str:
    """cloth for flat surfaces and open ones whose holes are a large part of them (a sheet,
    not a solid with openings such as a teapot's), beam for long slender solids, else soft."""
    ext = np.sort(np.ptp(vertices, axis=0))[::-1]
    if ext[2] < 0.02 * ext[0] or (open_boundary(vertices, faces) > 1.0
                                  and hole_share(vertices, faces) >= SHEET_HOLES):
        return "cloth"
    if ext[0] >= 4.0 * ext[1]:
        return "beam"
    return "soft"


FEWEST_VERTICES = 64  # a sheet or a body with fewer bends and squashes only at so few points
FEWEST_STATIONS = 6  # a rod needs vertices at this many places along its length to bend


def too_coarse(vertices: np.ndarray, category: str) -> str | None:
    """Why the surface (N, 3), +Y up, cannot show its category's motion, in one line, or
    None: a sheet or a body of fewer than FEWEST_VERTICES vertices (a modelling tool's plane
    has 4, and swings as one flat quad: the motion moves vertices, and folds only at them),
    or a rod with vertices at fewer than FEWEST_STATIONS places along its length (a
    cylinder's two rims: it bends within, but its straight triangles show none of it)."""
    n = len(vertices)
    if category == "beam":
        extent = np.ptp(vertices, axis=0)
        axis = long_axis(extent)
        along = np.round((vertices[:, axis] - vertices[:, axis].min())
                         / max(float(extent[axis]), 1e-300) * 100)
        stations = len(np.unique(along))
        if stations < FEWEST_STATIONS:
            return (f"the rod has vertices at only {stations} places along its length, and "
                    "its bending shows only there: subdivide it along its length")
        return None
    if n < FEWEST_VERTICES:
        what = "folds" if category == "cloth" else "squashes"
        return (f"the {'sheet' if category == 'cloth' else 'body'} has {n} vertices and "
                f"{what} only at them: subdivide it for finer motion")
    return None
