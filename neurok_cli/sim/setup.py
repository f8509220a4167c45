"""From a surface and a request to a ready :class:`SceneSpec`: placement, cells, pins, mass."""

from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ..meshing.lattice import lattice, thickness
from ..scenario.conditions import Conditions, SimMaterial, check_not_all, pinned_by, select_region
from ..scenario.mass import total_mass
from ..scenario.presets import DEFAULT_BEAM_PIN
from .scene import CELL_DOFS, TIMESTEPS, SceneSpec, from_mj, to_mj


def auto_cells(extent: np.ndarray, category: str, dof: str) -> tuple[int, int, int]:
    """Interpolation cells per axis: more along long axes (beams: along x)."""
    if category == "beam":
        aspect = extent[0] / max(min(extent[1], extent[2]), 1e-9)
        return int(np.clip(round(aspect / 4.0), 3, 5)), 1, 1
    per = np.clip(np.round(extent / max(extent.min(), 0.15 * extent.max())), 1,
                  3 if dof == "trilinear" else 2)
    return int(per[0]), int(per[1]), int(per[2])


LATTICE_CELLS = (6, 12)  # dof "lattice": cubes along the longest side, fewest and most


def lattice_cells(vertices: np.ndarray, faces: np.ndarray) -> tuple[int, bool]:
    """Lattice cubes along the longest side for two across the solid's thin parts
    (lattice.thickness), within LATTICE_CELLS, and whether that many suffice (a chair's
    legs would want more than the most)."""
    longest = float(np.ptp(vertices, axis=0).max())
    want = int(np.ceil(2 * longest / max(thickness(vertices, faces), 1e-9)))
    return int(np.clip(want, *LATTICE_CELLS)), want <= LATTICE_CELLS[1]


def node_grid(vertices: np.ndarray, cells: tuple[int, int, int], order: int) -> np.ndarray:
    """(K, 3) +Y-up positions of the interpolation nodes, in MuJoCo's pin-id order
    (z fastest, then y, then x, in MuJoCo's axes) over the vertices' bounding box."""
    pts = to_mj(vertices)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    n = np.array([cells[0], cells[2], cells[1]]) * order + 1  # MuJoCo axes: our x, z, y
    axes = [np.linspace(lo[a], hi[a], n[a]) for a in range(3)]
    gx, gy, gz = np.meshgrid(*axes, indexing="ij")  # x slowest, z fastest
    mj = np.stack([gx, gy, gz], axis=-1).reshape(-1, 3)
    return from_mj(mj)


def _pins(vertices: np.ndarray, regions: list[str], nodes: np.ndarray | None) -> np.ndarray:
    """Indices of pinned vertices (nodes=None) or of pinned interpolation nodes."""
    if not regions:
        return np.zeros(0, np.int64)
    if nodes is None:
        return np.flatnonzero(pinned_by(regions, vertices))
    lo, ext = vertices.min(axis=0), np.maximum(np.ptp(vertices, axis=0), 1e-12)
    # a node is pinned when the region holds it, judged on the vertices' bounding box
    both = np.vstack([vertices, nodes])
    mask = np.zeros(len(nodes), bool)
    for r in regions:
        if r.replace(",", "").replace("-", "").strip().isdigit():
            raise UsageError("soft bodies and beams pin regions, not vertex indices: use "
                             "e.g. «pin region» 'x<0.05'")
        mask |= select_region(r, both)[len(vertices):]
    if not mask.any():  # the region lies between nodes: pin the nearest node plane to it
        sel = np.zeros(len(vertices), bool)
        for r in regions:
            sel |= select_region(r, vertices)
        if not sel.any():
            raise UsageError(f"«pin region» {' '.join(regions)} selects no part of the object")
        target = (vertices[sel].mean(axis=0) - lo) / ext
        d = np.linalg.norm((nodes - lo) / ext - target, axis=1)
        mask = d <= d.min() + 1e-9
    check_not_all(mask, regions)
    return np.flatnonzero(mask)


def prepare(vertices: np.ndarray, faces: np.ndarray, category: str, material: SimMaterial,
            conditions: Conditions, *, dof: str | None = None,
            cells: tuple[int, int, int] | None = None) -> SceneSpec:
    """Place the surface (lowest point ``conditions.height`` above y = 0) and set up its scene.

    Args:
        vertices: (N, 3) surface in metres, +Y up. faces: (F, 3).
        category: "soft", "cloth" or "beam". dof: for soft, "trilinear" (default),
            "quadratic", "tet" (full tetrahedra fanned from the centre: star-shaped solids)
            or "lattice" (tetrahedra filling the solid: meshing/lattice.py).
        cells: interpolation cells per axis; for dof "lattice", (cubes along the longest
            side, 1, 1) (default: lattice_cells).
    """
    v = np.asarray(vertices, np.float64).copy()
    v[:, 1] += conditions.height - v[:, 1].min()
    if category == "cloth":
        dof = "full"
    elif category == "beam":
        dof = dof or "quadratic"
    else:
        dof = dof or "trilinear"
    extent = np.ptp(v, axis=0)
    lat_nodes = lat_tets = None
    spacing = 0.0
    if dof in CELL_DOFS:
        cells = cells or auto_cells(extent, category, dof)
        nodes = node_grid(v, cells, 1 if dof == "trilinear" else 2)
    elif dof == "lattice":
        res = int(cells[0]) if cells else lattice_cells(v, faces)[0]
        cells = (res, 1, 1)
        lat_nodes, lat_tets = lattice(v, faces, res)
        spacing = float(extent.max()) / res
        nodes = lat_nodes
    else:
        cells, nodes = (1, 1, 1), None
    regions = list(conditions.pins) or ([DEFAULT_BEAM_PIN] if category == "beam" else [])
    pins = _pins(v, regions, nodes)
    edge = np.linalg.norm(v[faces[:, 0]] - v[faces[:, 1]], axis=1).mean()
    radius = float(min(0.2 * edge, 0.004)) if category == "cloth" else 0.002
    return SceneSpec(
        vertices=v, faces=np.asarray(faces, np.int64), category=category, material=material,
        conditions=conditions, dof=dof, cells=cells,
        mass=total_mass(v, faces, category, material), radius=radius,
        timestep=TIMESTEPS[category] / (2 if dof == "tet" else 1),
        lattice_nodes=lat_nodes, lattice_tets=lat_tets, lattice_spacing=spacing,
        pinned_vertices=pins if nodes is None else np.zeros(0, np.int64),
        pinned_nodes=pins if nodes is not None else np.zeros(0, np.int64))
