"""Procedural shape families for the 4D physics dataset (metres, +Y up, resting on y = 0).

Each family is a function ``rng -> Shape`` that draws its parameters from the given
``numpy.random.Generator`` only, so a seed fixes the shape: the corpus's own in
``sim/families.py``, the wider ones of ``--families wide`` in ``sim/wide_families.py``, both
built from the meshes of ``sim/meshes.py``. ``FAMILIES`` at the end of this module is the
registry and ``CATEGORY_FAMILIES`` groups its names by the simulator category that uses them.
Closed shapes are watertight with faces counter-clockwise seen from outside; composites (chair,
mushroom, table) are closed parts concatenated into one mesh, each part watertight on its own
(parts overlap but share no vertices). Every shape ends centred in x and z with min y = 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UsageError
from .families import BASE_FAMILIES
from .meshes import KINDS, Mesh, Shape, finish
from .wide_families import WIDER_FAMILIES

__all__ = ["CATEGORY_FAMILIES", "FAMILIES", "KINDS", "WIDE_FAMILIES", "Mesh", "Shape",
           "make_shape", "mesh_stats", "shape_from_mesh"]


def make_shape(family: str, rng: np.random.Generator) -> Shape:
    """Draw a shape of the named family; the same generator state gives the same shape."""
    if family not in FAMILIES:
        raise UsageError(f"unknown shape family {family!r}; choose one of: {', '.join(FAMILIES)}")
    if not isinstance(rng, np.random.Generator):
        raise UsageError(f"make_shape needs a numpy.random.Generator, got {type(rng).__name__}; "
                         "pass numpy.random.default_rng(seed)")
    return FAMILIES[family](rng)


def shape_from_mesh(vertices: np.ndarray, faces: np.ndarray, *, family: str = "user",
                    kind: str = "solid", size: float | None = None) -> Shape:
    """Normalise a user mesh into a :class:`Shape` (+Y up as given, vertices kept in order).

    vertices: (N, 3) metres; faces: (F, 3) integer indices. The mesh is scaled about the origin
    so its largest bbox extent is ``size`` metres (when given), then moved so its bbox is centred
    in x and z and its lowest point is at y = 0.
    """
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0 or not np.isfinite(v).all():
        raise UsageError(f"vertices must be a non-empty finite (N, 3) array, got shape {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise UsageError(f"faces must be an (F, 3) integer array, got {f.dtype} {f.shape}")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise UsageError(f"face indices must lie in [0, {len(v) - 1}]")
    if kind not in KINDS:
        raise UsageError(f"unknown shape kind {kind!r}; choose one of: {', '.join(KINDS)}")
    params: dict = {}
    if size is not None:
        extent = float(np.ptp(v, axis=0).max())
        if not (np.isfinite(size) and size > 0) or extent <= 0:
            raise UsageError(f"cannot scale to size {size!r}: need size > 0 and a mesh of "
                             f"non-zero extent (its extent is {extent})")
        v = v * (size / extent)
        params = {"size": float(size), "scale": float(size / extent)}
    return finish(family, kind, (v, f), params)


def mesh_stats(shape: Shape) -> dict:
    """Counts and size of a shape, JSON-serialisable.

    Returns vertices, faces, components (connected parts), extent (3 floats, metres),
    watertight (every directed edge matched by its reverse exactly once: closed and consistently
    wound) and volume (m^3, sum of the parts' signed volumes, overlaps counted twice; None for
    sheets).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    v, f = shape.vertices, shape.faces
    n = len(v)
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    code = edges[:, 0] * n + edges[:, 1]
    watertight = bool(len(np.unique(code)) == len(code)
                      and np.isin(edges[:, 1] * n + edges[:, 0], code).all())
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    components = int(connected_components(graph, directed=False)[0])
    volume = None
    if shape.kind != "sheet":
        tri = v[f]
        volume = float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6)
    return {"vertices": int(n), "faces": int(len(f)), "components": components,
            "extent": np.ptp(v, axis=0).tolist(), "watertight": watertight, "volume": volume}


# name -> builder(rng) -> Shape
FAMILIES: dict[str, Callable[[np.random.Generator], Shape]] = {**BASE_FAMILIES, **WIDER_FAMILIES}

# simulator category -> the families it draws from
CATEGORY_FAMILIES: dict[str, tuple[str, ...]] = {
    "soft": ("sphere", "ellipsoid", "superquadric", "torus", "blob", "capsule", "box", "chair",
             "mushroom", "table"),
    "cloth": ("sheet", "disc", "flag"),
    "beam": ("beam", "rod"),
}


# simulator category -> the families that ``--families wide`` adds to its training draws
WIDE_FAMILIES: dict[str, tuple[str, ...]] = {
    "soft": ("lathe", "banana", "stack", "prism"),
    "cloth": ("pennant", "cutout", "curl"),
    "beam": ("taper", "arc"),
}
