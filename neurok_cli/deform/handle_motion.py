"""Motion in the object's own shape space: BDF2 over affine handle coordinates with the
material's energy (docs/design.md, "The object's own shape space").

Each step minimizes the incremental potential of the handle coordinates ``Z`` (4H, 3)
(Simplicits' choice, with BDF2's step in place of implicit Euler's, which damps a swing
several per cent a period at these steps): inertia ``|Z - Z~|^2_M / 2h'^2``, elastic and
bending energy, Rayleigh damping, ground contact (a penalty on the surface's vertices near
the ground, with lagged, smoothed Coulomb friction as IPC writes it) and pins (the handle
directions that would move a pinned vertex are removed); air drag and wind act on the
surface's vertices, lagged a step. The minimizer is L-BFGS preconditioned by the rest
Hessian turned by each handle's rotation, with the contact's and friction's own, factored
afresh when the contact set changes, while the object slides, or once a handle has turned
a few degrees: the reduced system has a few hundred coordinates, so a factorization costs
a millisecond or a few.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from ..data.geometry import surface_grid, vertex_areas
from ..errors import UsageError
from ..scenario.conditions import SimMaterial, pinned_by, select_region
from ..scenario.mass import AIR_DENSITY, DRAG, total_mass
from . import basis_cache
from .elastic import (
    Bending,
    Elements,
    Membrane,
    NeoHookean,
    centred_cubature,
    cubature,
    smooth_solid,
    triangles,
)
from .handles import HandleBasis, affine_coords, basis_rows, build_basis, mesh_edges
from .reduced_model import describe
from .spec import Motion, MotionConfig

PENETRATION = 0.003  # contact and pin springs: sag of a point carrying 16x its share, x size
GUST_HZ = 0.7  # the wind's gust frequency (as the engine's)
MAX_STEP = 1 / 120  # s: the longest step (an undamped beam's 1.4 Hz swing keeps its
# amplitude over four periods at it, within the few per cent the tip's sampling reads)
SOLID_STEP = 1 / 60  # ... a soft body's: its drop lands, squashes and tips nearly as at
# 1/120 s (penguin's smallest volume 0.963 against 0.958, the capsule's largest shape change
# 0.021 against 0.025, tilts within 3 degrees) in a third less time; a sheet's minimizer
# needs twice the iterations at it, so cloth and beams keep MAX_STEP
ITERATIONS = 64  # L-BFGS iterations per step, at most (a stiff rod just pushed needs 61)
REFRESH_AT = (3, 6, 9, 12)  # a step not done after these iterations refactors (see _refresh)
HISTORY = 6  # L-BFGS pairs kept within a step
TOLERANCE = 1e-6  # a step stops when its decrease is below this x its energy scale
SLIP = 1e-3  # m/s: friction's smoothing speed (below it, static friction creeps)
SHELL = 0.05  # an open "solid": a shell this fraction of its size thick
POINTS_PER_HANDLE = 12  # a coarse mesh gets fewer handles (see _most_handles)
ACROSS = 4  # a solid's lattice: cubes across its thinnest side (see _solid) ...
MOST_CELLS = 160  # ... and at most this many along its longest
CUBES = 8000  # a solid's lattice spans at most about this many cubes of its bounding box
CUBATURE = 2048  # energy is measured on at most about this many triangles or tetrahedra
CENTRED = 1.25  # ... a solid's at the centres of volume of cells as wide as its lattice's
# nodes are apart where these are at most this x as many (centred_cubature), else at a
# grid's largest tetrahedra: beams of aspect 5-13 bent 0.86-1.17x Euler-Bernoulli's on the
# largest, 0.90-1.01x at the centres, and a dropped ball rolled 0.21 m by 4 s, now 0.07
RESOLVED = 1.5  # a solid's weights are at least this many lattice steps wide
SPANNED = 1e-4  # a handle's direction carries mass if this share of its most massive one
TURN = math.radians(3)  # refactor once a handle has turned this far: a stale factor's
# stiffness, turned the wrong way, stops the minimizer short (a sheet's membrane)
AIR_POINTS = 3000  # air acts on at most about this many vertices, each standing for its
# cell's area (a 164k-vertex sphere spent 62 ms a step on all of them; the mountain's cloth
# flutter bends and crumples as with 8,000 (0.037, 0.126), its travel within 1 %, 1 s sooner)
FEWEST = 24  # the ground holds the whole weight on this many points at PENETRATION (at 16x
# their share alone, a penguin on its feet sank 3.7 % of its size)
REACH = 0.02  # the ground's candidates: points this x size above it (and their fall)
TOUCH = 1 / 16  # the ground touches the surface's points this x size apart at most (a
# coarse mesh's long triangles get a grid: on its corners alone a box sank and blew up)
COMPRESSION = 0.03  # cloth's membrane: a compression costs this x a stretch (see Membrane;
# the test split's cloth rollouts: 0.190 of the diagonal from the engine's frames at 0.03
# and at 0, their edges' strain 0.067 against 0.149, the engine's 0.010; 0.201 at 0.1)
PATCHES = 0.9  # cloth's stretch: this share on the handles' patches' mean strain, the rest
# on each triangle's (see Membrane.over_patches). The mountain's flutter bends / crumples
# 0.037 / 0.126 at 0, 0.050 / 0.166 at 0.9, 0.057 / 0.188 at 0.97 (the engine's 0.059 /
# 0.190), and at 1 a flat sheet dimpled; the test split's cloth rollouts: error 0.190,
# 0.183, 0.180 and edge strain 0.067, 0.081, 0.103 (the engine's 0.010)
SAMPLE_MODES = 8  # --samples: each further sample starts over this many lowest modes ...
SAMPLE_ENERGY = 0.02  # ... with this x its weight's work over its size (half deformation)
SAMPLE_STREAM = 7  # (the random stream of the samples' draws, beside the seed)
HANDLES = {"soft": 24, "cloth": 32, "beam": 24}  # beams add handles along their length
BEAM_HANDLES = 4, 128  # a beam's handles per unit of slenderness, and their most
AIR = 0.5 * AIR_DENSITY * DRAG  # air's pressure over the square of the speed across, Pa s²/m²
CONSTANTS = {"iterations": ITERATIONS, "history": HISTORY, "tolerance": TOLERANCE, "slip": SLIP,
             "turn": TURN, "penetration": PENETRATION, "reach": REACH, "gust_hz": GUST_HZ,
             "air": AIR, "refresh_at": list(REFRESH_AT)}
# (the step's constants, as the reduced model's description carries them)


@dataclass
class Mechanics:
    """An object's reduced mechanics: the basis, masses and energies (metres, +Y up)."""

    basis: HandleBasis
    vertex_rows: sp.csr_matrix  # (N, 4H): the surface's vertices
    mass_rows: sp.csr_matrix  # (P, 4H): the points that carry mass
    point_mass: np.ndarray  # (P,) kg
    M: np.ndarray  # (4H, 4H) mass per coordinate
    elements: Elements
    law: NeoHookean | Membrane
    bending: Bending | None
    K0: np.ndarray  # (12H, 12H) elastic rest Hessian (bending's is in ``bending.Q``)
    areas: np.ndarray  # (N,) the vertices' area shares, m^2
    mass_total: float
    solid: bool  # tetrahedra inside (else: the surface as a sheet or shell)
    held: list[np.ndarray]  # the pinned regions among ``basis.points`` (vertices, nodes):
    # region i is handle i's alone

    @property
    def dims(self) -> int:
        return self.M.shape[0] * 3


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
    from ..sim.lattice import lattice

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


def build_mechanics(vertices: np.ndarray, faces: np.ndarray, category: str,
                    material: SimMaterial, handles: int | None = None,
                    stiffness: float = 1.0, pinned: np.ndarray | None = None) -> Mechanics:
    """The handle basis and energies of a surface (N, 3) metres: a lattice of tetrahedra
    inside a closed solid, else the surface (cloth at the material's thickness; an open
    solid as a shell SHELL x its size thick). ``pinned`` (N,) bool: vertices held, each
    connected region of them one handle of its own."""
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    n = len(v)
    law_material = SimMaterial(**{**material.__dict__, "young": material.young * stiffness})
    areas = vertex_areas(v, f)
    mass_total = total_mass(v, f, category, material)
    basis, inner, groups = own_basis(v, f, category, handles, pinned)
    if inner is not None:
        nodes, tets = inner
        points = basis.points
        tet_volume = _tet_volumes(nodes, tets)
        node_rows = basis.rows(np.arange(n, len(points)))
        step = _step(nodes)
        near = np.concatenate([n + np.arange(len(nodes)), _even(v, step)])
        # the body's own volume, as its mass has, where the lattice covers 90-97 % of it
        fill = float(np.clip(mass_total / (material.density * max(tet_volume.sum(), 1e-30)),
                             0.5, 2.0))
        centroids = nodes[tets].mean(axis=1)
        cells = centred_cubature(centroids, tet_volume, int(CENTRED * CUBATURE),
                                 nodes.min(axis=0), step)
        if cells is None:
            keep, weight = cubature(centroids, tet_volume, CUBATURE, 3)
            cells = centroids[keep], tet_volume[keep] * weight
        at, volume = cells
        elements = smooth_solid(points[near], basis.weights[near], basis.centres, at,
                                volume * fill, index=near)
        point_mass = np.zeros(len(nodes))
        np.add.at(point_mass, tets.reshape(-1), np.repeat(tet_volume / 4, 4))
        mass_rows, law, bending = node_rows, NeoHookean(law_material), None
    else:
        thick = material.thickness if category == "cloth" else SHELL * float(np.ptp(v, 0).max())
        mass_rows = basis.rows()
        tri = v[f]
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]),
                                    axis=1)
        keep, weight = cubature(tri.mean(axis=1), area, CUBATURE, 2)
        elements = triangles(v, f[keep], thick, mass_rows, weight)
        point_mass = areas.copy()
        law = Membrane(law_material, COMPRESSION if category == "cloth" else 1.0)
        if category == "cloth":
            law.over_patches(elements, _corner_mean(elements.faces, n) @ basis.weights[:n],
                             PATCHES)
        bending = _bending(v, f, areas, mass_rows, law_material, thick)
    point_mass *= mass_total / max(point_mass.sum(), 1e-30)
    M = np.asarray((mass_rows.T @ sp.diags(point_mass) @ mass_rows).todense())
    M += 1e-9 * np.trace(M) / len(M) * np.eye(len(M))  # a handle no mass reaches
    return Mechanics(basis=basis, vertex_rows=basis.rows(np.arange(n)), mass_rows=mass_rows,
                     point_mass=point_mass, M=M, elements=elements, law=law, bending=bending,
                     K0=law.rest_hessian(elements), areas=areas, mass_total=mass_total,
                     solid=inner is not None,
                     held=groups)


def _corner_mean(faces: np.ndarray, n: int) -> sp.csr_matrix:
    """(F, n): each triangle's mean of its three corners."""
    return sp.csr_matrix((np.full(faces.size, 1 / 3), (np.repeat(np.arange(len(faces)), 3),
                                                       faces.reshape(-1))),
                         shape=(len(faces), n))


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
    step = _step(nodes)
    basis = _cached_basis(points, edges, count, candidates=np.arange(n, len(points)),
                          groups=groups,
                          scale=_thickness(v, nodes, _tet_volumes(nodes, tets).sum() / count),
                          resolution=RESOLVED * step, skin=f, skin_reach=step)
    return basis, inner, groups


def _tet_volumes(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """(T,) the tetrahedra's volumes."""
    return np.abs(np.linalg.det(nodes[tets[:, 1:]] - nodes[tets[:, :1]])) / 6


def _cached_solid(v: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``_solid``, kept between runs (``deform/basis_cache.py``)."""
    from ..sim import lattice

    def compute() -> dict[str, np.ndarray]:
        inner = _solid(v, f)
        return {} if inner is None else {"nodes": inner[0], "tets": inner[1]}

    name = basis_cache.key("lattice", (__file__, lattice.__file__), v, f)
    got = basis_cache.cached(name, compute)
    return (got["nodes"], got["tets"]) if "nodes" in got else None


def _cached_basis(points: np.ndarray, edges: np.ndarray, count: int, **options
                  ) -> HandleBasis:
    """``build_basis``, kept between runs (``deform/basis_cache.py``)."""
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


def _even(points: np.ndarray, step: float) -> np.ndarray:
    """Indices of ``points`` thinned to about one per cube of side ``step`` (the first in
    each): a surface as dense as the lattice inside it."""
    cell = np.floor((points - points.min(axis=0)) / max(step, 1e-12)).astype(np.int64)
    _, first = np.unique(cell, axis=0, return_index=True)
    return np.sort(first)


def _step(points: np.ndarray) -> float:
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
    step = _step(nodes)
    out = []
    for i, g in enumerate(groups):
        lo, hi = v[g].min(axis=0) - step / 2, v[g].max(axis=0) + step / 2
        inside = np.all((nodes >= lo) & (nodes <= hi), axis=1)
        out.append(np.concatenate([g, len(v) + np.flatnonzero((owner[near] == i) & inside)]))
    return out


def _bending(v, f, areas, rows, material, thickness) -> Bending:
    import igl

    L = igl.cotmatrix(np.ascontiguousarray(v), np.ascontiguousarray(f))
    return Bending.build(L, areas, v, rows, material, thickness)


def free_directions(mech: Mechanics) -> np.ndarray:
    """The handle coordinates' directions that move the object and leave its pinned points
    where they are: (4H, r) orthonormal columns, each within one handle (the identity
    where nothing is pinned and every direction moves mass). A handle's four coordinates
    move its mass only along the directions its mass points span (a sheet's handles: not
    along their normal; a solid's: not where only surface vertices lie; those carry no
    mass, and a push or a contact on them would fly off, so they are left out); a pinned
    region moves with its own handle alone, so its directions are also the null space of
    its points' rows (a pinned line keeps the turn about itself)."""
    basis = mech.basis
    H = basis.handles
    blocks = []
    for h in range(H):
        B = mech.M[4 * h:4 * h + 4, 4 * h:4 * h + 4]  # the mass of its own directions
        spread = math.sqrt(max(np.trace(B[:3, :3]) / max(B[3, 3], 1e-300), 1e-300))
        unit = np.array([1 / spread] * 3 + [1.0])  # its affine part in units of its size
        val, vec = np.linalg.eigh(B * unit[:, None] * unit[None, :])
        keep = vec[:, val > SPANNED * max(float(val[-1]), 1e-300)]
        block = np.eye(4)
        if keep.shape[1] < 4:  # directions that move no mass: left out
            block = np.linalg.qr(unit[:, None] * keep)[0]
        if h < len(mech.held):
            rows = basis.rows(mech.held[h]).toarray()[:, 4 * h:4 * h + 4] @ block
            if len(rows):
                _, sv, vt = np.linalg.svd(rows, full_matrices=True)
                block = block @ vt[int((sv > 1e-6 * sv[0]).sum()):].T
        blocks.append(block)
    r = sum(b.shape[1] for b in blocks)
    if not r:
        raise UsageError("the pins hold every part of the object: nothing is left to move")
    N = np.zeros((4 * H, r))
    col = 0
    for h, block in enumerate(blocks):
        N[4 * h:4 * h + 4, col:col + block.shape[1]] = block
        col += block.shape[1]
    return _without_massless(mech, N)


def _without_massless(mech: Mechanics, N: np.ndarray) -> np.ndarray:
    """N's span less the combinations of handles that move no mass: with handles
    overlapping on few points, some cancel there (their mass, against how far they could
    move a point). The object's own affine motions (every handle carrying one map, so its
    translations and turns) stay in the span: a combination dropped with a share of them
    took that share from every vertex the mass does not hold (a teapot's spout and handle,
    where the lattice has no nodes, fell slower than its body and its energy diverged on
    landing)."""
    H = mech.basis.handles
    reach = np.ones((H, 4))
    reach[:, :3] = np.asarray([np.trace(mech.M[4 * h:4 * h + 3, 4 * h:4 * h + 3]) /
                               max(mech.M[4 * h + 3, 4 * h + 3], 1e-300) / 3
                               for h in range(H)])[:, None]
    G = N.T @ (reach.reshape(-1)[:, None] * N)
    Mn = N.T @ mech.M @ N
    P = _massive(Mn, N.T @ _affine_rows(mech.basis.centres))  # (r, a) in N's coordinates
    # the rest of the span, G-orthogonal to the affine motions; its massless part dropped
    C = sla.null_space(P.T @ G) if P.shape[1] else np.eye(len(Mn))
    val, vec = sla.eigh(C.T @ Mn @ C, C.T @ G @ C)
    keep = val > SPANNED * max(float(val[-1]) if len(val) else 0.0, 1e-300)
    if keep.all():
        return N
    S = np.concatenate([P, C @ vec[:, keep]], axis=1)
    if not S.shape[1]:
        raise UsageError("the pins hold every part of the object: nothing is left to move")
    return N @ np.linalg.qr(S)[0]


def _affine_rows(centres: np.ndarray) -> np.ndarray:
    """(4H, 4) the handle coordinates' rows of the object's affine motions: Z = P [a^T; t^T]
    is the displacement u(x) = a x + t (see handles.affine_coords)."""
    H = len(centres)
    P = np.zeros((H, 4, 4))
    P[:, :3, :3] = np.eye(3)
    P[:, 3, :3] = centres
    P[:, 3, 3] = 1.0
    return P.reshape(4 * H, 4)


def _massive(Mn: np.ndarray, P: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the directions of P's span (r, a) that move mass (a sheet's
    affine motions move it along three of their four)."""
    if not P.size:
        return P
    Q, _ = np.linalg.qr(P)
    val, vec = np.linalg.eigh(Q.T @ Mn @ Q)
    top = max(float(val[-1]), 1e-300)
    return Q @ vec[:, val > SPANNED * top]


def _turned_matrix(A: np.ndarray, Rr: np.ndarray) -> np.ndarray:
    """T A T^T for the block-diagonal T of the (n, 3, 3) rotations Rr, A (3n, 3n)."""
    n = len(Rr)
    out = np.matmul(Rr, A.reshape(n, 3, 3 * n))
    out = np.matmul(out.reshape(3 * n, n, 3).transpose(1, 0, 2), Rr.transpose(0, 2, 1))
    return out.transpose(1, 0, 2).reshape(3 * n, 3 * n)


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _polar(F: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations nearest the (n, 3, 3) matrices F."""
    U, _, Vt = np.linalg.svd(F)
    R = U @ Vt
    flip = np.linalg.det(R) < 0
    if flip.any():
        U[flip, :, 2] *= -1
        R[flip] = U[flip] @ Vt[flip]
    return R


@dataclass
class _Contact:
    """One step's ground contact: a penalty on the candidate vertices' depth below y = 0 and
    lagged, smoothed Coulomb friction (IPC's) on those that carried a normal force."""

    index: np.ndarray  # (n,) the candidate vertices
    rows: sp.csr_matrix  # (n, 4H) their basis rows
    k: np.ndarray  # (n,) penalty stiffness, N/m
    close: np.ndarray  # (n,) bool: touching, or nearly (the preconditioner's share)
    friction: np.ndarray | None  # (n,) mu x the lagged normal force, N (None: frictionless)
    slide: np.ndarray  # (n,) m: how far each slid along the ground in the step before

    def __post_init__(self):
        if self.friction is not None:
            self.touching = self.friction > 0
            self.rows_f = self.rows[self.touching]
            self.friction = self.friction[self.touching]
            self.slide = self.slide[self.touching]

    def energy_grad(self, Z, Zn, y_rest, eps) -> tuple[float, np.ndarray]:
        pen = np.minimum(y_rest + self.rows @ Z[:, 1], 0.0)
        val = 0.5 * float(np.sum(self.k * pen * pen))
        grad = np.zeros_like(Z)
        grad[:, 1] = self.rows.T @ (self.k * pen)
        if self.friction is not None and len(self.friction):
            ut = (self.rows_f @ (Z - Zn))[:, [0, 2]]
            s_t = np.linalg.norm(ut, axis=1)
            lo = s_t < eps
            f0 = np.where(lo, -s_t ** 3 / (3 * eps ** 2) + s_t ** 2 / eps + eps / 3, s_t)
            f1 = np.where(lo, -s_t ** 2 / eps ** 2 + 2 * s_t / eps, 1.0)
            val += float(np.sum(self.friction * f0))
            coef = self.friction * f1 / np.maximum(s_t, 1e-30)
            ft = np.zeros((len(s_t), 3))
            ft[:, 0], ft[:, 2] = coef * ut[:, 0], coef * ut[:, 1]
            grad += self.rows_f.T @ ft
        return val, grad

    def stiffness(self, eps) -> tuple[np.ndarray, np.ndarray | None]:
        """(4H, 4H) Hessians of the penalty (vertical) and of friction (each horizontal
        axis) over the close vertices, for the preconditioner."""
        rows = self.rows[self.close]
        Ky = _weighted_gram(rows, self.k[self.close])
        if self.friction is None or not len(self.friction):
            return Ky, None
        s = np.maximum(self.slide, 1e-3 * eps)  # friction's curvature where it slid last
        kf = self.friction * np.where(s < eps, 2 / eps - s / eps ** 2, 1 / s)
        return Ky, _weighted_gram(self.rows_f, kf)


def _material_weights(mech: Mechanics, points: np.ndarray, n: int) -> sp.csr_matrix:
    """Basis weights (C, H) of the surface's points (C, 3): the first ``n`` the vertices'
    own, the rest the material's: blended (inverse distance) from the 4 nearest points the
    basis knows, the lattice's inside a solid. Weights blended from the triangle's corners
    instead tie a coarse mesh's contact to its few vertices (a box of 8 blew up)."""
    own = mech.basis.weights[:n]
    if len(points) == n:
        return own.tocsr()
    k = min(4, len(mech.basis.points))  # (a sheet of 3 vertices has 3)
    d, near = cKDTree(mech.basis.points).query(points[n:], k=k)
    d, near = d.reshape(len(d), k), near.reshape(len(near), k)
    w = 1.0 / np.maximum(d, 1e-12) ** 2
    w /= w.sum(axis=1, keepdims=True)
    blend = sp.csr_matrix((w.ravel(), (np.repeat(np.arange(len(w)), k), near.ravel())),
                          shape=(len(w), len(mech.basis.points)))
    return sp.vstack([own, blend @ mech.basis.weights]).tocsr()


def _weighted_gram(rows: sp.csr_matrix, k: np.ndarray) -> np.ndarray:
    """rows^T diag(k) rows (a few hundred rows of a few hundred columns: dense is faster)."""
    dense = rows.toarray()
    return dense.T @ (k[:, None] * dense)


class _Step:
    """One object's implicit steps: the incremental potential, its minimizer and the
    forces and contacts it needs (arrays in Z's layout (4H, 3))."""

    def __init__(self, mech: Mechanics, v: np.ndarray, faces: np.ndarray, cfg: MotionConfig,
                 h: float):
        cond = cfg.conditions
        self.mech, self.v, self.h = mech, v, h
        self.size = float(np.ptp(v, axis=0).max())
        self.g = g = np.asarray(cond.gravity, np.float64)
        gmag = max(float(np.linalg.norm(g)), 9.81)
        self.gravity = mech.mass_rows.T @ (mech.point_mass[:, None] * g[None, :])  # (4H, 3)
        self.weight = mech.mass_total * float(np.linalg.norm(g)) * self.size  # J
        self.k_contact = None  # no ground: no points to touch it
        if cond.ground:
            self.touch, area = surface_grid(v, faces, TOUCH * self.size)  # (C, N), (C,)
            self.touch_rest = self.touch @ v
            self.touch_weights = _material_weights(mech, self.touch_rest, len(v))
            self.touch_rows = basis_rows(self.touch_weights.tocoo(), self.touch_rest,
                                         mech.basis.centres).tocsr()
            share = mech.mass_total * area / max(area.sum(), 1e-30)
            carried = np.maximum(16 * share, mech.mass_total / FEWEST)  # kg a point may hold
            self.k_contact = carried * gmag / (PENETRATION * self.size)
        self.friction = float(cond.friction)
        self.beta = cfg.material.damping * cfg.damping_scale
        self.N = free_directions(mech)
        self.N_rows = sp.csr_matrix(self.N.T)  # (r, 4H): sparse, most columns within a handle
        self.mass_factor = sla.cho_factor(self.N.T @ mech.M @ self.N, check_finite=False)
        self.wind = np.asarray(cond.wind, np.float64)
        self.gust = float(cond.gust)
        self.air = AIR if cfg.still_air or self.wind.any() else 0.0
        self._air_points(v, faces, mech)
        material = slice(len(v), None) if mech.solid else slice(0, len(v))
        self.material_rest = mech.basis.points[material]
        self.material_weights = mech.basis.weights[material].T.tocsr()
        mass = np.maximum(np.asarray(self.material_weights.sum(axis=1)).ravel(), 1e-30)
        self.material_centres = (self.material_weights @ self.material_rest) / mass[:, None]
        spread = self.material_weights @ np.sum(self.material_rest ** 2, axis=1) - mass * np.sum(
            self.material_centres ** 2, axis=1)  # the trace of each handle's rest covariance
        self.material_spread = 1e-2 * np.maximum(spread, 1e-30)
        self._covariance_terms()
        self.bend_turns = None if mech.bending is None else \
            mech.bending.by_handles(mech.basis.weights[: len(v)])
        self.restart()

    def restart(self) -> None:
        """Forget the run so far (the rotations, the BDF2 history and the factor): a new
        run starts with these steps, from the rest's rotations."""
        H = self.mech.basis.handles
        self.R_handles = np.broadcast_to(np.eye(3), (H, 3, 3)).copy()
        self.bend = (np.zeros((self.mech.M.shape[0], 3)), 0.0)  # bending's linear part
        self.hh = self.h  # the implicit step: h (Euler's first step), 2h/3 (BDF2's)
        self.previous = None  # (Z, V) a step back, for BDF2
        self.factor = None
        self.factor_key = None
        self.factor_R = self.R_handles.copy()
        self.rest_part = (None, 0.0, None)  # (rotations, step, the Hessian's part without
        # contact) of the last factorization
        self.isotropic = {}  # step -> the mass and bending part, the same on each axis

    # -- forces and energies -------------------------------------------------------------

    def positions(self, Z: np.ndarray) -> np.ndarray:
        return self.v + self.mech.vertex_rows @ Z

    def _air_points(self, v: np.ndarray, faces: np.ndarray, mech: Mechanics) -> None:
        """The vertices air acts on: all of them, or on a large mesh at most AIR_POINTS
        standing for the rest (``cubature``: each weighed by its cell's area over its own),
        with the triangles around them (their normals)."""
        keep, weight = cubature(v, mech.areas, AIR_POINTS, 2)
        self.air_index, self.air_weight = keep, weight
        around = np.flatnonzero(np.isin(faces, keep).any(axis=1))
        self.air_faces = faces[around]
        nf = len(around)  # each vertex's share of its faces' area vectors (a third of half)
        corners = sp.csr_matrix((np.full(3 * nf, 1 / 6), (self.air_faces.reshape(-1),
                                                          np.repeat(np.arange(nf), 3))),
                                shape=(len(v), nf))
        self.air_corners = corners[keep].tocsr()
        self.air_rows = mech.vertex_rows[keep].tocsr()

    def air_force(self, x: np.ndarray, xdot: np.ndarray, t: float) -> np.ndarray:
        """(K, 3) air pressure on the vertices ``air_index`` (wind with its gusts, and
        still air), each times its cubature weight."""
        if self.air == 0.0:
            return np.zeros((len(self.air_index), 3))
        f = self.air_faces
        a = x[f[:, 1]] - x[f[:, 0]]
        b = x[f[:, 2]] - x[f[:, 0]]
        normal = self.air_corners @ np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                                          a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                                          a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)
        a = np.linalg.norm(normal, axis=1)
        n = normal / np.maximum(a, 1e-30)[:, None]
        wind = self.wind * (1.0 + self.gust * math.sin(2 * math.pi * GUST_HZ * t))
        vn = np.einsum("ic,ic->i", wind[None, :] - xdot[self.air_index], n)
        press = -np.minimum(vn, 0.0) ** 2 if self.mech.solid else vn * np.abs(vn)
        return (self.air * press * a * self.air_weight)[:, None] * n

    def _covariance_terms(self) -> None:
        """The sums over the material's points (P) that each handle's covariance
        sum_p w_hp x_p X_p^T - (sum_p w_hp x_p) c_h^T is made of: x = X + Phi Z is linear
        in Z, so a step reads it at a cost in H alone (the mountain's 25,600 points took
        2.4 ms a step)."""
        W, X, Phi = self.material_weights, self.material_rest, self.mech.mass_rows
        H = W.shape[0]
        self.cov_rest = np.asarray(W @ (X[:, :, None] * X[:, None, :]).reshape(-1, 9)
                                   ).reshape(H, 3, 3)
        self.cov_lin = np.stack([(W @ sp.diags(X[:, j]) @ Phi).toarray() for j in range(3)],
                                axis=2)  # (H, 4H, 3): sum_p w_hp Phi_pk X_pj
        self.mean_rest = np.asarray(W @ X)  # (H, 3)
        self.mean_lin = (W @ Phi).toarray()  # (H, 4H)

    def rotations(self, Z: np.ndarray) -> None:
        """Each handle's and each vertex's rotation at ``Z`` (for the lagged terms and the
        preconditioner): a handle's is the best fit of how its points have turned, weighed
        by its weights (shape matching; unlike its own affine map, it is defined for a
        handle on a few points, or on a flat sheet); a vertex's blends its handles'."""
        mech = self.mech
        cov = self.cov_rest + np.einsum("hkj,ki->hij", self.cov_lin, Z) - \
            (self.mean_rest + self.mean_lin @ Z)[:, :, None] * self.material_centres[:, None, :]
        H = mech.basis.handles  # and a little of the handle's own map, for the turns its
        # points cannot tell (a handle on a line of points: the pinned edge of a sheet)
        own = _polar(np.eye(3) + Z.reshape(H, 4, 3)[:, :3, :].transpose(0, 2, 1))
        self.R_handles = _polar(cov + self.material_spread[:, None, None] * own)
        if self.bend_turns is not None:  # each vertex's: a blend of its handles' (near
            self.bend = self.bend_turns.at(self.R_handles)  # a rotation itself)

    def potential(self, Z, Zn, Zt, contact: _Contact | None):
        """The incremental potential at Z and its gradient (4H, 3)."""
        mech, h = self.mech, self.hh
        dZ = Z - Zt
        MdZ = mech.M @ dZ
        val = 0.5 * float(np.sum(dZ * MdZ)) / h ** 2
        grad = MdZ / h ** 2
        elastic, g_elastic = mech.law.energy_grad(mech.elements, Z)
        val += elastic
        grad = grad + g_elastic
        if mech.bending is not None:
            eb, gb = Bending.energy_grad(Z, mech.bending.Q, *self.bend)
            val += eb
            grad = grad + gb
        if self.beta > 0:  # Rayleigh damping, the rest stiffness turned by the handles
            s = (Z - Zn).reshape(-1)
            Ks = self._turn(mech.K0 @ self._turn(s, inverse=True))
            val += 0.5 * self.beta / h * float(s @ Ks)
            grad = grad + (self.beta / h) * Ks.reshape(-1, 3)
        if contact is not None:
            v, g = contact.energy_grad(Z, Zn, self.touch_rest[contact.index, 1], SLIP * h)
            val += v
            grad = grad + g
        return val, grad

    def _turn(self, s: np.ndarray, inverse: bool = False) -> np.ndarray:
        """Apply (or undo) each handle's rotation to the rows of Z: T s or T^T s."""
        H = self.mech.basis.handles
        z = s.reshape(H, 4, 3)
        R = self.R_handles if inverse else self.R_handles.transpose(0, 2, 1)
        return np.matmul(z, R).reshape(-1)

    # -- the preconditioner --------------------------------------------------------------

    def _turned(self) -> float:
        """The largest angle (radians) a handle has turned since the last factorization."""
        cos = (np.einsum("hij,hij->h", self.factor_R, self.R_handles) - 1) / 2
        return float(np.arccos(np.clip(cos.min(), -1.0, 1.0)))

    def _factor(self, contact: _Contact | None) -> None:
        """Factor the preconditioner: the rest Hessian turned by each handle's rotation,
        the mass, bending, contact and friction terms, within the free directions."""
        mech, h = self.mech, self.hh
        H4 = mech.M.shape[0]
        if self.rest_part[0] is not self.R_handles or self.rest_part[1] != h:
            if h not in self.isotropic:  # (two step lengths: Euler's first, then BDF2's)
                iso = mech.M / h ** 2
                if mech.bending is not None:
                    iso = iso + mech.bending.Q
                self.isotropic[h] = np.kron(iso, np.eye(3))
            turned = _turned_matrix(mech.K0, np.repeat(self.R_handles, 4, 0))
            self.rest_part = (self.R_handles, h, (1.0 + self.beta / h) * turned +
                              self.isotropic[h])
        A = self.rest_part[2]  # (a refresh within the step keeps it: only contact changes)
        if contact is not None:
            A = A.copy()
            Ky, Kf = contact.stiffness(SLIP * h)
            A[1::3, 1::3] += Ky
            if Kf is not None:
                A[0::3, 0::3] += Kf
                A[2::3, 2::3] += Kf
        r = self.N.shape[1]
        if r < H4:  # (else N is the identity: nothing pinned, every direction spanned)
            # N^T A N over the handles' index with N sparse (a pinned handle's columns lie
            # within it): a clamped rod of 104 handles spent a fifth of its run here dense
            A = (self.N_rows @ A.reshape(H4, -1)).reshape(r, 3, H4, 3)
            A = (self.N_rows @ A.transpose(2, 0, 1, 3).reshape(H4, -1)).reshape(r, r, 3, 3)
            A = A.transpose(1, 2, 0, 3)  # (r, 3, r, 3)
        self.factor = sla.cho_factor(A.reshape(3 * r, 3 * r), lower=False, check_finite=False)
        self.factor_R = self.R_handles.copy()

    def solve(self, g: np.ndarray) -> np.ndarray:
        """The preconditioner's solve of a gradient in the free directions (r, 3)."""
        return sla.cho_solve(self.factor, g.reshape(-1), check_finite=False).reshape(-1, 3)

    def accelerate(self, force: np.ndarray) -> np.ndarray:
        """The accelerations (4H, 3) a force on the coordinates gives, within the free
        directions."""
        return self.N @ sla.cho_solve(self.mass_factor, self.N.T @ force, check_finite=False)

    def constrain(self, V: np.ndarray) -> np.ndarray:
        """Velocities (4H, 3) with the pins' share removed (the mass-nearest that keeps the
        pinned vertices still)."""
        return self.N @ sla.cho_solve(self.mass_factor, self.N.T @ (self.mech.M @ V),
                                      check_finite=False)

    # -- one step ------------------------------------------------------------------------

    def step(self, Z: np.ndarray, V: np.ndarray, t: float, x: np.ndarray, xdot: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, dict]:
        """Z, V one step on from time t (x, xdot: the vertices now) -> (Z, V, figures;
        ``x`` among them: the vertices then)."""
        f_air = self.air_force(x, xdot, t)
        f_ext = self.gravity + self.air_rows.T @ f_air
        if self.previous is None:  # implicit Euler
            Zb, Vb, self.hh = Z, V, self.h
        else:  # BDF2: Z' = Zb + hh V', V' = Vb + hh A' with hh = 2h/3
            Zp, Vp = self.previous
            Zb, Vb, self.hh = (4 * Z - Zp) / 3, (4 * V - Vp) / 3, 2 * self.h / 3
        Zt = Zb + self.hh * Vb + self.hh ** 2 * self.accelerate(f_ext)
        contact, active = None, np.zeros(0, bool)
        if self.k_contact is not None:
            contact, active = self._contact(self.touch @ x, self.touch @ xdot)
        key = (active.tobytes(), self.hh)
        self.rotations(Z)
        sliding = contact is not None and contact.friction is not None \
            and len(contact.friction) > 0
        if (self.factor is None or key != self.factor_key or sliding
                or self._turned() > TURN):
            self._factor(contact)
            self.factor_key = key
        Znew, iters = self._minimize(Zb, Zt, contact)
        Vnew = (Znew - Zb) / self.hh
        self.previous = (Z, V)
        xnew = self.positions(Znew)
        air_work = float(np.sum(f_air * (xnew - x)[self.air_index]))
        return Znew, Vnew, {"iters": iters, "air_work": air_work, "x": xnew,
                            "dissipated": self._dissipated(Znew, Zb, xnew - x, contact)}

    def _dissipated(self, Z, Zn, dx, contact: _Contact | None) -> float:
        """The energy damping and friction took this step (J); ``dx`` (N, 3): how far
        the vertices moved."""
        s = (Z - Zn).reshape(-1)
        out = self.beta * self.h / self.hh ** 2 * float(s @ self._turn(self.mech.K0 @ self._turn(
            s, inverse=True)))
        if contact is not None and contact.friction is not None:
            moved = self.touch[contact.index[contact.touching]] @ dx  # the touching points'
            slide = np.linalg.norm(moved[:, [0, 2]], axis=1)
            out += float(np.sum(contact.friction * slide))
        return out

    def _contact(self, x: np.ndarray, xdot: np.ndarray) -> tuple[_Contact | None, np.ndarray]:
        """The ground's candidates this step: the surface's points (``x``, ``xdot`` (C, 3))
        near enough to reach it (their fall over two steps, and a margin), with the normal
        forces they carry now (the lagged friction's bound) -> (contact or None, the points
        touching (C,) bool)."""
        y = x[:, 1]
        fall = 2 * self.h * np.maximum(-xdot[:, 1], 0.0)  # at most this far, two steps on
        index = np.flatnonzero(y < fall + REACH * self.size)
        active = y - fall < PENETRATION * self.size * 0.5  # the ground may stop it this step
        if not len(index):
            return None, active
        lam = self.k_contact[index] * np.maximum(-y[index], 0.0)
        slide = self.hh * np.linalg.norm(xdot[index][:, [0, 2]], axis=1)
        return _Contact(index, self.touch_rows[index], self.k_contact[index],
                        active[index],
                        self.friction * lam if self.friction > 0 else None, slide), active

    def _minimize(self, Zn: np.ndarray, Zt: np.ndarray, contact) -> tuple[np.ndarray, int]:
        """The potential's minimum over the free directions Z = N Y, from the inertial
        guess (projected onto them) -> (Z, iterations)."""
        N = self.N
        Y = N.T @ Zt  # N's columns are orthonormal
        val, gz = self.potential(N @ Y, Zn, Zt, contact)
        g = N.T @ gz
        s_hist, y_hist = [], []
        dz = Zt - Zn  # the step's own energy scale: its weight's work over the object's
        moving = 0.5 * float(np.sum(dz * (self.mech.M @ dz))) / self.hh ** 2  # size, its
        scale = TOLERANCE * max(self.weight + moving, abs(val), 1e-300)  # motion, its energy
        for it in range(1, ITERATIONS + 1):
            d = -self._two_loop(g, s_hist, y_hist)
            slope = float(np.sum(g * d))
            if -slope < scale:
                return N @ Y, it - 1
            alpha = 1.0
            for _ in range(12):
                Yc = Y + alpha * d
                vc, gz = self.potential(N @ Yc, Zn, Zt, contact)
                if vc <= val + 1e-4 * alpha * slope:
                    break
                alpha *= 0.5
            else:
                return N @ Y, it
            gc = N.T @ gz
            s_hist.append(Yc - Y)
            y_hist.append(gc - g)
            if len(s_hist) > HISTORY:
                s_hist.pop(0)
                y_hist.pop(0)
            Y, val, g = Yc, vc, gc
            if contact is not None and it in REFRESH_AT:  # a hard step (a landing): the
                self._refresh(contact, N @ Y, Zn)  # preconditioner from where it is now
                s_hist, y_hist = [], []
        return N @ Y, ITERATIONS

    def _refresh(self, contact: _Contact, Z: np.ndarray, Zn: np.ndarray) -> None:
        """Refactor the preconditioner with the contact as it stands at ``Z``: the points
        pushing into the ground, and friction's curvature at how far each has slid in the
        step (its lagged bound kept)."""
        contact.close = self.touch_rest[contact.index, 1] + contact.rows @ Z[:, 1] < 0.0
        if contact.friction is not None and len(contact.friction):
            contact.slide = np.linalg.norm((contact.rows_f @ (Z - Zn))[:, [0, 2]], axis=1)
        self._factor(contact)
        self.factor_key = None  # (the next step factors afresh)

    def _two_loop(self, g, s_hist, y_hist):
        q = g.copy()
        alphas = []
        for s, y in zip(reversed(s_hist), reversed(y_hist)):
            sy = float(np.sum(s * y))
            if sy <= 1e-300:
                alphas.append(None)
                continue
            a = float(np.sum(s * q)) / sy
            alphas.append((a, sy))
            q = q - a * y
        r = self.solve(q)
        for (s, y), a in zip(zip(s_hist, y_hist), reversed(alphas)):
            if a is None:
                continue
            b = float(np.sum(y * r)) / a[1]
            r = r + s * (a[0] - b)
        return r


def handle_motion(vertices: np.ndarray, faces: np.ndarray, cfg: MotionConfig, *,
                  handles: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Motion:
    """Move ``vertices`` (N, 3) (metres, +Y up, where they start; the ground is y = 0) in
    their own handle space; ``progress(done, total)`` after each frame."""
    clock = {"start": time.perf_counter()}
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    pinned = pinned_by(cfg.conditions.pins, v) if cfg.conditions.pins else None
    mech = build_mechanics(v, f, cfg.category, cfg.material, handles, cfg.stiffness, pinned)
    clock["fit"] = time.perf_counter()
    n_frames = int(np.floor(cfg.seconds * cfg.fps + 1e-9)) + 1
    longest = SOLID_STEP if cfg.category == "soft" else MAX_STEP
    sub = max(1, math.ceil(1.0 / (cfg.fps * longest)))
    h = 1.0 / (cfg.fps * sub)
    stepper = _Step(mech, v, f, cfg, h)
    cond = cfg.conditions
    centres = mech.basis.centres
    com = (mech.point_mass @ mech.basis.points[-len(mech.point_mass):]) / mech.mass_total \
        if mech.solid else (mech.point_mass @ v) / mech.mass_total
    spin = np.asarray(cond.spin, np.float64)
    V = affine_coords(_skew(spin), np.asarray(cond.velocity) - _skew(spin) @ com, centres)
    Z = np.zeros_like(V)
    if cfg.begin is not None:  # a fitted start: its shape and velocities in the basis
        from .handle_fit import coordinates_fit

        fit = coordinates_fit(mech, weights=mech.areas)
        Z, V = fit(cfg.begin[0] - v), V + fit(cfg.begin[1])
    V = stepper.constrain(V)
    pushes = [(p.time, _push(mech, v, p)) for p in sorted(cond.impulses, key=lambda i: i.time)]
    samples = max(int(cfg.samples), 1)
    frames = np.empty((samples, n_frames, len(v), 3))
    clip = (np.zeros((n_frames, *Z.shape)), np.zeros((n_frames, *Z.shape)))
    energy = {k: np.zeros((n_frames, samples)) for k in
              ("kinetic", "potential", "dissipated", "work", "total")}
    starts = [(Z, np.zeros_like(V))] + [(Z + z, dv) for z, dv in sample_starts(
        stepper, samples - 1, cfg.seed, cfg.diversity)]
    steps = iters = 0
    clip[0][0], clip[1][0] = Z, V
    for s, (Z0, dV) in enumerate(starts):  # the first: the conditions alone
        stepper.restart()
        V0 = stepper.constrain(V + dV) if s else V
        frames[s, 0] = stepper.positions(Z0)
        energy_s = {k: e[:, s:s + 1] for k, e in energy.items()}
        _energies(stepper, Z0, V0, energy_s, 0, 0.0, 0.0)
        done = None if progress is None else (
            lambda i, n, s=s: progress(s * n + i, samples * n))
        with threadpool_limits(1, user_api="blas"):  # a few hundred unknowns: threads wait
            n_steps, n_iters = _integrate(stepper, Z0, V0, frames[s:s + 1], energy_s,
                                          list(pushes), sub, clip if s == 0 else None, done)
        steps, iters = steps + n_steps, iters + n_iters
    clock["integrate"] = time.perf_counter()
    if cfg.conditions.ground:
        lowest = float(frames[:, :, :, 1].min())
    else:
        lowest = 0.0
    stats = {"vertices": len(v), "driving_points": len(v), "dynamics_points":
             len(mech.point_mass), "latent_dims": mech.dims, "reduced_dims": mech.dims,
             "handles": mech.basis.handles, "coordinates": stepper.N.shape[1] * 3,
             "elements": len(mech.elements.measure),
             "solid": mech.solid, "springs": 0, "mass_kg": mech.mass_total,
             "size_m": stepper.size, "fit_residual": 0.0, "run_residual": 0.0,
             "strain_limit": None, "strain_sweeps": 0, "steps": steps, "step_s": h,
             "iterations": iters / max(steps, 1), "latent_peak": 0.0,
             "lifted": max(-lowest, 0.0) / stepper.size,
             "pins": ({"vertices": int(pinned.sum()), "points": int(pinned.sum()),
                       "hold": "fixed"} if cond.pins else None),
             "singular_values": [],
             "time": {"encode": 0.0, "fit": clock["fit"] - clock["start"],
                      "integrate": clock["integrate"] - clock["fit"], "decode": 0.0}}
    model = describe(stepper, pushes, clip, cfg.fps, sub, CONSTANTS)
    return Motion(frames=frames, energy=energy, stats=stats, model=model)


def _integrate(stepper: _Step, Z, V, frames, energy, pushes, sub: int, clip, progress
               ) -> tuple[int, int]:
    """Step from ``Z``, ``V`` through ``frames`` (1, T, N, 3) (the first filled), ``sub``
    steps a frame, applying ``pushes`` [(time, momentum)] (sorted by time) as they come;
    fills the frames, the ``clip``'s coordinates and velocities (T, 4H, 3; None: not kept)
    and ``energy`` -> (steps, minimizer iterations)."""
    mech, h = stepper.mech, stepper.h
    n_frames = frames.shape[1]
    x, xdot = stepper.positions(Z), mech.vertex_rows @ V
    work, lost, steps, iters = 0.0, 0.0, 0, 0
    for fi in range(1, n_frames):
        for s in range(sub):
            t = ((fi - 1) * sub + s) * h
            while pushes and pushes[0][0] <= t + 1e-12:
                V = V + stepper.accelerate(pushes.pop(0)[1])
                stepper.previous = None  # the jump is no history: start again with Euler
                xdot = mech.vertex_rows @ V
            Z, V, fig = stepper.step(Z, V, t, x, xdot)
            if not np.isfinite(Z).all():
                raise FloatingPointError(f"the motion diverged at {t:.3f} s")
            x = fig["x"]
            xdot = mech.vertex_rows @ V
            work += fig["air_work"]
            lost += fig["dissipated"]
            steps += 1
            iters += fig["iters"]
        frames[0, fi] = x
        if clip is not None:
            clip[0][fi], clip[1][fi] = Z, V
        _energies(stepper, Z, V, energy, fi, work, lost)
        if progress is not None:
            progress(fi, n_frames - 1)
    return steps, iters


def sample_starts(stepper: _Step, count: int, seed: int, diversity: float | None = None
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` starts (Z, a velocity added to the conditions') for ``--samples``, each
    over the object's SAMPLE_MODES lowest elastic modes (its rest stiffness against its
    mass, in the free directions): a deformation holding half of SAMPLE_ENERGY x
    ``diversity`` (default 1) of its weight's work over its size, and a velocity holding
    the other half, in random proportions of the modes (``seed``: the same draws). The
    deformation's energy is the material's own, not the modes' quadratic one: a sheet's
    soft bending modes, taken far along their straight line, stretch it (the flag's held
    17 kJ where the modes said 0.24 J), so the draw is scaled back along its line until it
    holds its share."""
    if count <= 0:
        return []
    mech, N = stepper.mech, stepper.N
    P = np.kron(N, np.eye(3))  # (r, 3) coordinates -> Z.reshape(-1)
    w2, phi = sla.eigh(P.T @ mech.K0 @ P, np.kron(N.T @ mech.M @ N, np.eye(3)))
    keep = np.flatnonzero(w2 > 1e-6 * w2.max())[:SAMPLE_MODES]  # (not the rigid ones)
    gmag = max(float(np.linalg.norm(stepper.g)), 9.81)
    budget = (1.0 if diversity is None else float(diversity)) * SAMPLE_ENERGY * \
        mech.mass_total * gmag * stepper.size  # J
    out = []
    for s in range(1, count + 1):
        rng = np.random.default_rng([seed, SAMPLE_STREAM, s])
        a, b = rng.standard_normal((2, len(keep)))
        q = phi[:, keep] @ (a / np.sqrt(w2[keep])) * np.sqrt(budget) / np.linalg.norm(a)
        qd = phi[:, keep] @ b * np.sqrt(budget) / np.linalg.norm(b)
        Z = _within(mech, (P @ q).reshape(-1, 3), 0.5 * budget)
        out.append((Z, (P @ qd).reshape(-1, 3)))
    return out


def _within(mech: Mechanics, Z: np.ndarray, energy: float) -> np.ndarray:
    """``Z`` scaled back along its line (bisection) until the material's own energy there
    (elastic, and bending from the rest) is at most ``energy`` (J)."""
    rest = (np.zeros_like(Z), 0.0)  # bending from the rest shape
    if _stored(mech, Z, rest) <= energy * (1 + 1e-9):
        return Z
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _stored(mech, mid * Z, rest) <= energy else (lo, mid)
    return lo * Z


def _stored(mech: Mechanics, Z: np.ndarray, bend: tuple[np.ndarray, float]) -> float:
    """The material's energy at ``Z`` (J): elastic, and bending with its linear part
    ``bend`` (see Bending.turned)."""
    out = mech.law.energy_grad(mech.elements, Z)[0]
    if mech.bending is not None:
        out += Bending.energy_grad(Z, mech.bending.Q, *bend)[0]
    return out


def _push(mech: Mechanics, v: np.ndarray, push) -> np.ndarray:
    """The momentum (4H, 3) a push gives the coordinates: the mass under the region at the
    push's velocity (``accelerate`` turns it into their velocities' jump). A solid's mass
    is on its lattice's nodes: those whose nearest vertex the region selects (a push on
    the surface's vertices alone would land on directions that carry almost no mass)."""
    mask = select_region(push.region, v)
    if not mask.any():
        raise UsageError(f"region '{push.region}' selects no vertex of the mesh")
    if mech.solid:
        nodes = mech.basis.points[len(v):]
        _, near = cKDTree(v).query(nodes)
        under = mask[near]
        if not under.any():  # a region thinner than the lattice: the nodes nearest it
            under = np.zeros(len(nodes), bool)
            under[cKDTree(nodes).query(v[mask])[1]] = True
    else:
        under = mask
    held = mech.point_mass * under
    return mech.mass_rows.T @ (held[:, None] * np.asarray(push.velocity)[None, :])


def _energies(stepper: _Step, Z, V, energy, fi: int, work: float, lost: float) -> None:
    """Frame ``fi``'s kinetic and potential energy (elastic, bending, gravity, contact and
    pin springs), and the work and losses so far; the total's drift is what the implicit
    steps took beyond damping and friction."""
    mech = stepper.mech
    kin = 0.5 * float(np.sum(V * (mech.M @ V)))
    pot = _stored(mech, Z, stepper.bend) - float(np.sum(stepper.gravity * Z))
    if stepper.k_contact is not None:
        y = np.minimum(stepper.touch_rest[:, 1] + stepper.touch_rows @ Z[:, 1], 0.0)
        pot += 0.5 * float(np.sum(stepper.k_contact * y * y))
    energy["kinetic"][fi, 0] = kin
    energy["potential"][fi, 0] = pot
    energy["work"][fi, 0] = work
    energy["dissipated"][fi, 0] = lost
    energy["total"][fi, 0] = kin + pot + lost - work
