"""MuJoCo scenes (MJCF) for the three categories, built from any triangle surface.

- cloth: a 2D flex on the mesh itself, one body per unpinned vertex (``dof="full"``);
- soft: the closed surface embedded in a cage of trilinear (or quadratic) cells, or, for
  star-shaped solids, full tetrahedra fanned from the centre (``dof="tet"``), or carried by a
  lattice of tetrahedra that fills the solid (``dof="lattice"``, meshing/lattice.py);
- beam: quadratic cells along the beam, the nodes of one end pinned (clamped).

Our frame is +Y up (glTF); MuJoCo's is +Z up. ``to_mj``/``from_mj`` convert positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..scenario.conditions import CATEGORIES, Conditions, SimMaterial

# (x, y, z) with +Y up -> (x, -z, y) with +Z up
_TO_MJ = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
DOFS = ("full", "trilinear", "quadratic", "tet", "lattice")
CELL_DOFS = ("trilinear", "quadratic")  # the surface embedded in interpolation cells
SIZED_DOFS = (*CELL_DOFS, "lattice")  # the dofs whose resolution ``cells`` sets
# fixed time step per category, chosen so 30 fps is a whole number of steps (s)
TIMESTEPS = {"cloth": 1 / 180, "soft": 1 / 480, "beam": 1 / 480}


def to_mj(x: np.ndarray) -> np.ndarray:
    """(..., 3) +Y-up positions or vectors -> MuJoCo's +Z-up frame."""
    return np.asarray(x, np.float64) @ _TO_MJ.T


def from_mj(x: np.ndarray) -> np.ndarray:
    """(..., 3) MuJoCo +Z-up -> +Y-up."""
    return np.asarray(x, np.float64) @ _TO_MJ


@dataclass
class SceneSpec:
    """Everything that defines one MuJoCo scene of a deforming object (metres, +Y up)."""

    vertices: np.ndarray  # (N, 3) surface vertices, placed where the run starts
    faces: np.ndarray  # (F, 3) triangles
    category: str  # "soft", "cloth" or "beam"
    material: SimMaterial
    conditions: Conditions
    dof: str = "trilinear"  # cloth is always "full"; beams "quadratic"
    cells: tuple[int, int, int] = (1, 1, 1)  # interpolation cells along x, y, z (+Y up)
    mass: float = 1.0  # kg, total
    radius: float = 0.002  # contact radius of the flex, m
    timestep: float = 1 / 480
    integrator: str = "discrete"  # MuJoCo's; "Euler" is unstable for stiff flexes (tests use it)
    pinned_vertices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pinned_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # dof "lattice": the tetrahedra filling the solid (meshing/lattice.py), +Y up, and their
    # size (the lattice's cube side, m); the surface rides on their nodes
    lattice_nodes: np.ndarray | None = None
    lattice_tets: np.ndarray | None = None
    lattice_spacing: float = 0.0

    def require_known(self) -> None:
        if self.category not in CATEGORIES:
            raise UsageError(f"unknown material category {self.category!r}; choose one of "
                             f"{', '.join(CATEGORIES)}")
        if self.dof not in DOFS:
            raise UsageError(f"unknown dof {self.dof!r}; choose one of {', '.join(DOFS)}")
        self.material.require_physical()


def _nums(a: np.ndarray, fmt: str = "{:.7g}") -> str:
    return " ".join(fmt.format(x) for x in np.asarray(a).reshape(-1))


def _cells_mj(cells: tuple[int, int, int]) -> tuple[int, int, int]:
    """Cell counts along our (x, y, z) -> MuJoCo's (x, y, z) = our (x, z, y)."""
    return cells[0], cells[2], cells[1]


def _flex_xml(spec: SceneSpec) -> str:
    mat, cond = spec.material, spec.conditions
    pts = to_mj(spec.vertices)
    faces = np.asarray(spec.faces, np.int64)
    if spec.dof == "tet":  # fan each surface triangle to the centre: tetrahedra
        centre = pts.mean(axis=0)
        pts = np.vstack([pts, centre])
        c = len(pts) - 1
        elements = np.concatenate([faces[:, [0, 2, 1]], np.full((len(faces), 1), c)], axis=1)
        dim, dof, extra = 3, "full", ""
    elif spec.dof == "lattice":
        pts, elements = to_mj(spec.lattice_nodes), np.asarray(spec.lattice_tets, np.int64)
        dim, dof, extra = 3, "full", ""
    else:
        elements, dim, dof = faces, 2, spec.dof
        extra = "" if dof == "full" else f' cellcount="{_nums(_cells_mj(spec.cells), "{:d}")}"'
    elastic2d = ' elastic2d="both"' if spec.category == "cloth" else ""
    thickness = f' thickness="{mat.thickness:.6g}"' if spec.category == "cloth" else ""
    pins = ""
    if len(spec.pinned_vertices):
        pins = f'<pin id="{_nums(spec.pinned_vertices, "{:d}")}"/>'
    elif len(spec.pinned_nodes):
        pins = f'<pin id="{_nums(spec.pinned_nodes, "{:d}")}"/>'
    return (
        f'<flexcomp name="obj" type="direct" dim="{dim}" dof="{dof}"{extra} '
        f'point="{_nums(pts)}" element="{_nums(elements, "{:d}")}" '
        f'radius="{spec.radius:.6g}" mass="{spec.mass:.9g}">\n'
        f'  <elasticity young="{mat.young:.6g}" poisson="{mat.poisson:.6g}" '
        f'damping="{mat.damping:.6g}"{thickness}{elastic2d}/>\n'
        f'  <contact selfcollide="none" condim="3" friction="{cond.friction:.4g}" '
        f'solref="0.005 1"/>\n'
        f'  {pins}\n'
        f'</flexcomp>')


def _memory_mb(spec: SceneSpec) -> int:
    """Engine arena: the flex solver and its ground contacts need about 16 KB per vertex dof
    on a large cloth (measured: the 25.6k-vertex mountain simulated whole asked for 1.25 GB
    at its first collision; 8 KB a dof ran out); keep 2x."""
    dofs = 3 * len(spec.vertices) if spec.dof in ("full", "tet") else 1000
    if spec.dof == "lattice":
        dofs = 3 * len(spec.lattice_nodes)
    return int(max(256, 32 * dofs // 1024))


def build_xml(spec: SceneSpec) -> str:
    """The MJCF model of ``spec``: options, ground and the flexcomp."""
    spec.require_known()
    g = to_mj(np.asarray(spec.conditions.gravity, np.float64))
    ground = ""
    if spec.conditions.ground:
        ground = (f'<geom name="ground" type="plane" size="0 0 1" '
                  f'friction="{spec.conditions.friction:.4g} 0.005 0.0001" solref="0.005 1"/>')
    return (
        '<mujoco model="neurok">\n'
        f'<option timestep="{spec.timestep:.9g}" integrator="{spec.integrator}" solver="CG" '
        f'gravity="{_nums(g)}"/>\n'
        f'<size memory="{_memory_mb(spec)}M"/>\n'
        f'<worldbody>\n{ground}\n{_flex_xml(spec)}\n</worldbody>\n</mujoco>\n')

