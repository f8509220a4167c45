"""An object's reduced mechanics in its own shape space (docs/design.md, "The object's own
shape space"): the handle basis (``deform/own/basis.py``), the masses its points carry, the
material's elements and law at cubature points, a sheet's bending, and the rest Hessian the
step factors. Metres, +Y up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...data.geometry import vertex_areas
from ...scenario.conditions import SimMaterial
from ...scenario.mass import total_mass
from .basis import even, own_basis, spacing, tet_volumes
from .bending import Bending
from .elements import Elements, centred_cubature, cubature, smooth_solid, triangles
from .handles import HandleBasis
from .laws import Membrane, NeoHookean

SHELL = 0.05  # an open "solid": a shell this fraction of its size thick
CUBATURE = 2048  # energy is measured on at most about this many triangles or tetrahedra
CENTRED = 1.25  # ... a solid's at the centres of volume of cells as wide as its lattice's
# nodes are apart where these are at most this x as many (centred_cubature), else at a
# grid's largest tetrahedra: beams of aspect 5-13 bent 0.86-1.17x Euler-Bernoulli's on the
# largest, 0.90-1.01x at the centres, and a dropped ball rolled 0.21 m by 4 s, now 0.07
COMPRESSION = 0.03  # cloth's membrane: a compression costs this x a stretch (see Membrane;
# the test split's cloth rollouts: 0.190 of the diagonal from the engine's frames at 0.03
# and at 0, their edges' strain 0.067 against 0.149, the engine's 0.010; 0.201 at 0.1)
PATCHES = 0.9  # cloth's stretch: this share on the handles' patches' mean strain, the rest
# on each triangle's (see Membrane.over_patches). The mountain's flutter bends / crumples
# 0.037 / 0.126 at 0, 0.050 / 0.166 at 0.9, 0.057 / 0.188 at 0.97 (the engine's 0.059 /
# 0.190), and at 1 a flat sheet dimpled; the test split's cloth rollouts: error 0.190,
# 0.183, 0.180 and edge strain 0.067, 0.081, 0.103 (the engine's 0.010)


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
        tet_volume = tet_volumes(nodes, tets)
        node_rows = basis.rows(np.arange(n, len(points)))
        step = spacing(nodes)
        near = np.concatenate([n + np.arange(len(nodes)), even(v, step)])
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



def _bending(v, f, areas, rows, material, thickness) -> Bending:
    import igl

    L = igl.cotmatrix(np.ascontiguousarray(v), np.ascontiguousarray(f))
    return Bending.build(L, areas, v, rows, material, thickness)

