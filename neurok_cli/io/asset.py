"""What a loaded asset is: parts with their geometry and looks, in the file's own frame."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .gltf.doc import GltfDocument


@dataclass
class Material:
    """Base colour (linear RGBA in [0, 1]) and an optional encoded base-colour texture."""

    name: str = "default"
    base_color: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)
    texture: bytes | None = None  # encoded PNG or JPEG, as found in the file
    texture_mime: str | None = None
    double_sided: bool = False


@dataclass
class Part:
    """One drawable piece: an OBJ group, a glTF primitive as placed by one node.

    ``vertices`` are in the asset's world frame (node transforms applied) and file units; they
    are the file's own render vertices, so UV seams appear as coincident duplicates.
    """

    name: str
    vertices: np.ndarray  # (n, 3) float64
    faces: np.ndarray  # (f, 3) int64, indices into this part's vertices
    uvs: np.ndarray | None = None  # (n, 2) float32, glTF convention (v = 0 at the image top)
    normals: np.ndarray | None = None  # (n, 3) float32, as in the file
    material: Material | None = None
    # glTF origin: node, mesh and primitive indices, and the node's world matrix (4, 4)
    node: int | None = None
    mesh: int | None = None
    primitive: int | None = None
    matrix: np.ndarray | None = None


@dataclass
class Welded:
    """The asset welded by position: the surface that simulation and the model deform.

    ``index[i]`` is the welded vertex of file vertex ``i`` (all parts concatenated), so welded
    positions ``x`` map back to file vertices as ``x[index]``. ``faces`` have degenerate
    (collapsed) and duplicated (double-sided) triangles removed.
    """

    vertices: np.ndarray  # (M, 3) float64
    faces: np.ndarray  # (F, 3) int64
    index: np.ndarray  # (N,) int64


@dataclass
class Asset:
    """A loaded mesh file: parts, where it came from, and how to read its units."""

    path: Path
    format: str  # "obj", "gltf", "glb", "ply", "stl"
    parts: list[Part]
    up: str = "y"  # the file's up axis: "y" or "z"
    metres_per_unit: float | None = None  # known for glTF (1.0); None where the file is unitless
    document: GltfDocument | None = None  # the parsed glTF, kept so export preserves its scene
    warnings: list[str] = field(default_factory=list)
    _welded: Welded | None = field(default=None, repr=False)

    @property
    def offsets(self) -> np.ndarray:
        """(P + 1,) start of each part's vertices in the concatenated vertex array."""
        return np.cumsum([0] + [len(p.vertices) for p in self.parts])

    @property
    def vertices(self) -> np.ndarray:
        """(N, 3) all parts' file vertices, concatenated in part order."""
        return np.concatenate([p.vertices for p in self.parts])

    @property
    def faces(self) -> np.ndarray:
        """(F, 3) all parts' faces, indexing :attr:`vertices`."""
        offs = self.offsets
        return np.concatenate([p.faces + o for p, o in zip(self.parts, offs[:-1])])

    def bounds(self) -> np.ndarray:
        """(2, 3) min and max corner of the asset in file units."""
        v = self.vertices
        return np.stack([v.min(axis=0), v.max(axis=0)])

    def welded(self) -> Welded:
        """The position-welded surface (computed once)."""
        if self._welded is None:
            self._welded = weld(self.vertices, self.faces)
        return self._welded


def weld(vertices: np.ndarray, faces: np.ndarray, *, tolerance: float = 1e-7) -> Welded:
    """Merge vertices closer than ``tolerance`` x bounding-box diagonal.

    Args:
        vertices: (N, 3) positions. faces: (F, 3) indices into them.
    Returns:
        :class:`Welded` with (M, 3) unique positions, cleaned (F', 3) faces and the (N,) map.
    """
    diag = float(np.linalg.norm(np.ptp(vertices, axis=0))) or 1.0
    keys = np.round((vertices - vertices.min(axis=0)) / (tolerance * diag)).astype(np.int64)
    _, first, index = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    wf = index[faces]
    keep = (wf[:, 0] != wf[:, 1]) & (wf[:, 1] != wf[:, 2]) & (wf[:, 0] != wf[:, 2])
    wf = wf[keep]
    # a double-sided copy of a triangle (any winding) is the same surface: keep the first
    _, uniq = np.unique(np.sort(wf, axis=1), axis=0, return_index=True)
    wf = wf[np.sort(uniq)]
    return Welded(vertices=vertices[first], faces=wf, index=index)
