"""The handle basis an object moves with (docs/design.md, "The object's own shape space"):
over its surface's vertices and, inside a closed solid, a tetrahedral lattice's nodes
(``meshing/lattice.py``); pinned regions each a handle of their own; both kept between runs
(``deform/own/basis_cache.py``)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from ...errors import UsageError
from . import basis_cache
from .handles import HandleBasis, build_basis, mesh_edges

POINTS_PER_HANDLE = 12  # a coarse mesh gets fewer handles (see _most_handles)
ACROSS = 4  # a solid's lattice: cubes across its thinnest side (see _solid) ...
MOST_CELLS = 160  # ... and at most this many along its longest
CUBES = 8000  # a solid's lattice spans at most about this many cubes of its bounding box
HANDLES = {"soft": 24, "cloth": 32, "beam": 24}  # beams add handles along their length
BEAM_HANDLES = 4, 128  # a beam's handles per unit of slenderness, and their most
RESOLVED = 1.5  # a solid's weights are at least this many lattice steps wide


def handle_count(category: str, vertices: np.ndarray) -> int:
    """Handles by category; a beam adds four per unit of its slenderness (its first
    bending modes need several along its length; with three, and at most 96, a box of
    aspect 5 sagged 0.82 of Euler-Bernoulli's and of aspect 40 0.86: docs/design.md)."""
    if category != "beam":
        return HANDLES.get(category, 24)
    ext = np.sort(np.ptp(vertices, axis=0))
    per, most = BEAM_HANDLES
    return int(min(most, HANDLES["beam"] + per * math.ceil(ext[2] / max(ext[1], 1e-9))))


def _winding(points, vertices, faces):
    import igl

    return igl.fast_winding_number(np.ascontiguousarray(vertices, np.float64),
                                   np.ascontiguousarray(faces, np.int64),
                                   np.ascontiguousarray(points, np.float64))


def _solid(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A tetrahedral lattice inside a closed surface, ACROSS cubes across its thinnest side
    (at least 14, at most MOST_CELLS along its longest, and about CUBES in its bounding box:
    a thin plate too thin for two becomes a shell), or None where it holds no volume. With
    2.5 across, a rod's stiffness hung on how the cubes fell against its sides (0.09-0.2 of
    Euler-Bernoulli's as it was moved a few mm, 1.0 at another size); with 4, 0.85-1.08."""
    from ...meshing.lattice import lattice

    ext = np.sort(np.ptp(vertices, axis=0))
    budget = (CUBES * ext[2] ** 2 / max(ext[0] * ext[1], 1e-18)) ** (1 / 3)  # a thin plate
    across = math.ceil(ACROSS * ext[2] / max(ext[0], 1e-9) - 1e-6)  # (no float's flip)
    cells = int(min(MOST_CELLS, budget, max(14, across)))
    try:
        return lattice(vertices, faces, cells, winding=_winding)
    except UsageError:
        return None


def pin_groups(pinned: np.ndarray, faces: np.ndarray, most: int = 16) -> list[np.ndarray]:
    """The pinned vertices (N,) bool as connected regions (over the mesh's edges), one
    handle each; scattered pins beyond ``most`` regions share one."""
    idx = np.flatnonzero(pinned)
    if not len(idx):
        return []
    e = mesh_edges(faces)
    e = e[pinned[e[:, 0]] & pinned[e[:, 1]]]
    n = len(pinned)
    graph = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    parts = [idx[label[idx] == c] for c in np.unique(label[idx])]
    return parts if len(parts) <= most else [idx]



def own_basis(vertices: np.ndarray, faces: np.ndarray, category: str,
              handles: int | None = None, pinned: np.ndarray | None = None
              ) -> tuple[HandleBasis, tuple[np.ndarray, np.ndarray] | None, list[np.ndarray]]:
    """The handle basis ``build_mechanics`` moves a surface (N, 3) with: over its vertices
    and, inside a closed solid (not cloth), a tetrahedral lattice's nodes -> (the basis,
    the lattice's nodes and tetrahedra or None, the pinned regions among the basis's
    points, each one handle's)."""
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    n = len(v)
    groups = pin_groups(pinned, f) if pinned is not None else []
    count = handles or handle_count(category, v)
    inner = None if category == "cloth" else _cached_solid(v, f)
    if inner is None:
        return _cached_basis(v, mesh_edges(f), min(count, _most_handles(n)), groups=groups), \
            None, groups
    nodes, tets = inner
    points = np.concatenate([v, nodes])
    edges = np.concatenate([mesh_edges(f), n + mesh_edges(tets)])
    groups = _with_nodes(groups, v, nodes)
    count = min(count, _most_handles(len(nodes)))
    step = spacing(nodes)
    basis = _cached_basis(points, edges, count, candidates=np.arange(n, len(points)),
                          groups=groups,
                          scale=_thickness(v, nodes, tet_volumes(nodes, tets).sum() / count),
                          resolution=RESOLVED * step, skin=f, skin_reach=step)
    return basis, inner, groups


def tet_volumes(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """(T,) the tetrahedra's volumes."""
    return np.abs(np.linalg.det(nodes[tets[:, 1:]] - nodes[tets[:, :1]])) / 6


def _cached_solid(v: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``_solid``, kept between runs (``deform/own/basis_cache.py``)."""
    from ...meshing import lattice

    def compute() -> dict[str, np.ndarray]:
        inner = _solid(v, f)
        return {} if inner is None else {"nodes": inner[0], "tets": inner[1]}

    name = basis_cache.key("lattice", (__file__, lattice.__file__), v, f)
    got = basis_cache.cached(name, compute)
    return (got["nodes"], got["tets"]) if "nodes" in got else None


def _cached_basis(points: np.ndarray, edges: np.ndarray, count: int, **options
                  ) -> HandleBasis:
    """``build_basis``, kept between runs (``deform/own/basis_cache.py``)."""
    from . import handles

    def compute() -> dict[str, np.ndarray]:
        b = build_basis(points, edges, count, **options)
        w = b.weights
        return {"data": w.data, "indices": w.indices, "indptr": w.indptr,
                "shape": np.asarray(w.shape), "centres": b.centres,
                "spacing": np.asarray(b.spacing)}

    parts = [points, edges, count, *(options.get(k) for k in sorted(options) if k != "groups"),
             list(options.get("groups", []))]
    got = basis_cache.cached(basis_cache.key("basis", (handles.__file__,), *parts), compute)
    weights = sp.csr_matrix((got["data"], got["indices"], got["indptr"]),
                            shape=tuple(got["shape"]))
    return HandleBasis(points=points, weights=weights, centres=got["centres"],
                       spacing=float(got["spacing"]))


def _thickness(v: np.ndarray, nodes: np.ndarray, share: float, k: int = 27) -> np.ndarray:
    """(K,) the solid's local thickness at its lattice nodes: twice the largest depth below
    the surface among each node's k nearest (a node near the surface reads its part's
    middle, not its own small depth), and at least half the side of a cube of ``share``
    (each handle's share of the volume): a slender beam's handles space along it, while a
    figure's small flippers and feet do not draw handles from its body."""
    depth, _ = cKDTree(v).query(nodes)
    _, near = cKDTree(nodes).query(nodes, k=min(k, len(nodes)))
    return np.maximum(2 * depth[near].max(axis=1), 0.5 * share ** (1 / 3))


def even(points: np.ndarray, step: float) -> np.ndarray:
    """Indices of ``points`` thinned to about one per cube of side ``step`` (the first in
    each): a surface as dense as the lattice inside it."""
    cell = np.floor((points - points.min(axis=0)) / max(step, 1e-12)).astype(np.int64)
    _, first = np.unique(cell, axis=0, return_index=True)
    return np.sort(first)


def spacing(points: np.ndarray) -> float:
    """The median distance from a point to its nearest other."""
    if len(points) < 2:
        return 0.0
    return float(np.median(cKDTree(points).query(points, k=2)[0][:, 1]))


def _most_handles(points: int) -> int:
    """A handle needs points enough to tell its affine map (its weights reach about TOP
    times its share): at most one per POINTS_PER_HANDLE of them."""
    return max(4, points // POINTS_PER_HANDLE)


def _with_nodes(groups: list[np.ndarray], v: np.ndarray, nodes: np.ndarray
                ) -> list[np.ndarray]:
    """The pinned regions with the lattice nodes under them: those whose nearest vertex
    they pin and that lie within the region's bounds, widened by half the lattice's step
    (a coarse surface's nearest vertex reaches far past the region: a clamp would hold
    more of a beam than it was asked to). Indices into vertices, then nodes."""
    if not groups:
        return groups
    owner = np.full(len(v), -1)
    for i, g in enumerate(groups):
        owner[g] = i
    _, near = cKDTree(v).query(nodes)
    step = spacing(nodes)
    out = []
    for i, g in enumerate(groups):
        lo, hi = v[g].min(axis=0) - step / 2, v[g].max(axis=0) + step / 2
        inside = np.all((nodes >= lo) & (nodes <= hi), axis=1)
        out.append(np.concatenate([g, len(v) + np.flatnonzero((owner[near] == i) & inside)]))
    return out
