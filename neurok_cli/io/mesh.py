"""Loading meshes (OBJ, GLB/glTF, PLY, STL), welding by position, and the canonical frame.

``load_mesh`` returns an :class:`Asset` in the file's own frame and units; ``weld`` gives the
surface to deform with the map back to the file's vertices; :class:`CanonicalFrame` moves
positions between the file's frame and the model's (Y up, centred, largest extent 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, UsageError
from .asset import Asset, Part, weld  # noqa: F401  (weld: re-exported, the loaders' API)

GLTF_SUFFIXES = (".glb", ".gltf")
MAX_COORDINATE = 1e15  # |x| in file units; beyond it float32 exports and squared distances fail


def _load_gltf(path: Path) -> tuple[list[Part], list[str], dict]:
    from .gltf.doc import load_document
    from .gltf.scene import load_gltf_parts

    doc = load_document(path)
    parts, warnings = load_gltf_parts(doc)
    return parts, warnings, {"document": doc, "metres_per_unit": 1.0}


def _load_obj(path: Path) -> tuple[list[Part], list[str], dict]:
    from .obj import load_obj

    parts, warnings = load_obj(path)
    return parts, warnings, {}


def _check_stl(path: Path) -> None:
    """Refuse what is not an STL before trimesh guesses at it: trimesh reads a cut binary STL
    without complaint and sends undecodable "ASCII" to a text-encoding detector."""
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(1024)
    count = int.from_bytes(head[80:84], "little") if len(head) >= 84 else -1
    if count > 0 and size == 84 + 50 * count:
        return  # binary, whatever its 80-byte header says
    if head.lstrip()[:5].lower() == b"solid" and b"facet" in head:
        try:
            path.read_bytes().decode("ascii")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: not a valid STL (starts like ASCII STL but holds "
                             f"non-text bytes at byte {e.start})") from None
        return
    if size < 84:
        raise InputError(f"{path}: not a valid STL ({size} bytes: too short for binary STL, "
                         "and not ASCII STL text)")
    if size < 84 + 50 * count:
        raise InputError(f"{path}: not a valid STL: truncated binary STL "
                         f"({(size - 84) // 50} of {count} triangles present)")


def _load_trimesh(path: Path) -> tuple[list[Part], list[str], dict]:
    import trimesh

    if path.suffix.lower() == ".stl":
        _check_stl(path)
    try:
        loaded = trimesh.load_mesh(path, process=False)
    except Exception as e:  # trimesh raises many types for corrupt files
        raise InputError(f"{path}: cannot read {path.suffix[1:].upper()} "
                         f"({e.__class__.__name__}: {e})") from e
    meshes = list(loaded.geometry.values()) if hasattr(loaded, "geometry") else [loaded]
    parts = [Part(name=path.stem, vertices=np.asarray(m.vertices, np.float64),
                  faces=np.asarray(m.faces, np.int64).reshape(-1, 3)) for m in meshes
             if hasattr(m, "faces")]
    return parts, [], {}


# suffix -> loader returning (parts, warnings, extra Asset fields)
LOADERS = {".obj": _load_obj, ".glb": _load_gltf, ".gltf": _load_gltf,
           ".ply": _load_trimesh, ".stl": _load_trimesh}
# the up axis a file's format implies when none is given: STL comes from CAD and 3D printing,
# where +Z is up (as Blender's STL importer assumes); OBJ and PLY are +Y up by common use
DEFAULT_UP = {".stl": "z"}


def check_up(path: Path, up: str | None) -> None:
    """Refuse an up axis that is none, or one a glTF file (always +Y up) cannot take."""
    if up not in (None, "y", "z"):
        raise UsageError(f"«up» must be 'y' or 'z', not {up!r}")
    if up == "z" and path.suffix.lower() in GLTF_SUFFIXES:
        raise UsageError(f"{path}: glTF is always +Y up; «up» applies to OBJ, PLY and STL only")


def check_scale(size: float | None, units: str | None) -> None:
    """Refuse a size (metres) that is no length, or units this reader does not know."""
    if size is not None and not (np.isfinite(size) and size > 0):
        raise UsageError(f"«size» must be a positive length in metres, not {size}")
    if units is not None and units not in UNITS:
        raise UsageError(f"unknown «units» {units!r}; choose one of {', '.join(UNITS)}")


def load_mesh(path: str | Path, *, up: str | None = None) -> Asset:
    """Load a mesh file into an :class:`Asset` (file frame and units), checking it is usable.

    ``up`` ("y" or "z") says which axis is up in a unitless file (default: "z" for STL,
    "y" for OBJ and PLY); glTF is always +Y up. Raises :class:`InputError` naming the file
    and the problem.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        inside = sorted(f.name for f in path.iterdir() if f.suffix.lower() in LOADERS)
        hint = f"; it holds {', '.join(inside[:3])}{' ...' if len(inside) > 3 else ''}" \
            if inside else ""
        raise InputError(f"{path}: is a folder, not a mesh file{hint}")
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        raise InputError(f"{path}: unsupported file type '{suffix or path.name}'; "
                         f"use one of {', '.join(sorted(LOADERS))}")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")
    check_up(path, up)
    try:
        parts, warnings, extra = LOADERS[suffix](path)
    except (UnicodeDecodeError, OSError) as e:
        raise InputError(f"{path}: cannot read ({e.__class__.__name__}: {e})") from e
    asset = Asset(path=path, format=suffix[1:], parts=parts,
                  up=up or DEFAULT_UP.get(suffix, "y"), warnings=warnings, **extra)
    validate(asset)
    return asset


def validate(asset: Asset) -> None:
    """Raise :class:`InputError` for assets no stage can work with."""
    path = asset.path
    if not asset.parts or sum(len(p.faces) for p in asset.parts) == 0:
        raise InputError(f"{path}: has no triangle faces (a point cloud or an empty mesh?)")
    for p in asset.parts:
        if not np.isfinite(p.vertices).all():
            raise InputError(f"{path}: vertex coordinates contain NaN or infinity")
        if len(p.faces) and (p.faces.min() < 0 or p.faces.max() >= len(p.vertices)):
            raise InputError(f"{path}: face indices out of range (part '{p.name}' has "
                             f"{len(p.vertices)} vertices, a face uses {int(p.faces.max())})")
    big = max(float(np.abs(p.vertices).max(initial=0.0)) for p in asset.parts)
    if big > MAX_COORDINATE:
        raise InputError(f"{path}: a vertex coordinate is {big:.3g}; coordinates beyond "
                         f"{MAX_COORDINATE:.0e} cannot be computed with: rescale the file")
    if float(np.ptp(asset.vertices, axis=0).max()) <= 0:
        raise InputError(f"{path}: all vertices are at one point")
    _check_area(asset)


def _check_area(asset: Asset) -> None:
    """Refuse a surface without area: collinear vertices, or faces that welding collapses.

    A face of at least 1e-6 extent^2 has edges far longer than the welding tolerance, so it
    survives welding: only meshes without such a face are welded here to find out."""
    v, f = asset.vertices, asset.faces
    areas = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]),
                                 axis=1)
    extent2 = float(np.ptp(v, axis=0).max()) ** 2
    if areas.max() >= 1e-6 * extent2:
        return
    if not areas.sum() > 1e-12 * extent2 or len(asset.welded().faces) == 0:
        raise InputError(f"{asset.path}: the faces have no area (all vertices lie on a line "
                         "or the triangles are degenerate); there is no surface to deform")


Z_UP_TO_Y_UP = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])  # (x, y, z) -> (x, z, -y)


@dataclass
class CanonicalFrame:
    """Maps file positions to the model's frame and back.

    Canonical positions are +Y up, centred on the bounding box and scaled so the largest extent
    is 1. ``size_m`` is that extent in metres, for physics.
    """

    center: np.ndarray  # (3,) bounding-box centre, file units
    extent: float  # largest bounding-box extent, file units
    up: str = "y"
    size_m: float = 1.0

    @property
    def rotation(self) -> np.ndarray:
        """(3, 3) rotation from the file's axes to +Y up."""
        return Z_UP_TO_Y_UP if self.up == "z" else np.eye(3)

    def to_canonical(self, x: np.ndarray) -> np.ndarray:
        """(..., 3) file positions -> (..., 3) canonical positions."""
        out = _turn(np.asarray(x) - self.center, self.rotation.T)
        out /= self.extent  # in place: one new array, not one per step (a clip's frames)
        return out

    def from_canonical(self, x: np.ndarray) -> np.ndarray:
        """(..., 3) canonical positions -> (..., 3) file positions."""
        out = _turn(np.asarray(x, np.float64) * self.extent, self.rotation)
        out += self.center  # in place: a 121-frame clip of 100k vertices is 290 MB
        return out

    def vector_to_canonical(self, v: np.ndarray) -> np.ndarray:
        """(..., 3) displacements or directions in file axes -> canonical axes (unscaled)."""
        return np.asarray(v) @ self.rotation.T


def _turn(x: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """x (..., 3) @ rotation (3, 3), skipped where it is the identity (a 121-frame clip of
    100k vertices: a pass over 290 MB)."""
    return x if np.array_equal(rotation, np.eye(3)) else x @ rotation


UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "ft": 0.3048}  # metres per unit
DEFAULT_SIZE = 0.5  # m: the largest extent a unitless file is given, an everyday object's


def canonical_frame(asset: Asset, *, size: float | None = None, units: str | None = None
                    ) -> CanonicalFrame:
    """The canonical frame of ``asset`` and its size in metres: ``size`` (the largest extent,
    metres) if given, else the file's numbers read in ``units``, else glTF's metres, else
    (a unitless OBJ, PLY or STL) DEFAULT_SIZE: a toy read as metres would be given a
    building's physics (a plush toy of 9.2 units melted under its 17 tonnes)."""
    lo, hi = asset.bounds()
    extent = float((hi - lo).max())
    check_scale(size, units)
    if size is not None:
        metres = size
    elif units is not None:
        metres = extent * UNITS[units]
    elif asset.metres_per_unit is not None:
        metres = extent * asset.metres_per_unit
    else:
        metres = DEFAULT_SIZE
    return CanonicalFrame(center=(lo + hi) / 2, extent=extent, up=asset.up, size_m=metres)


def size_source(asset: Asset, size: float | None = None, units: str | None = None) -> str:
    """Where an asset's size in metres came from (see :func:`canonical_frame`), in words."""
    if size is not None:
        return "--size"
    if units is not None:
        return f"the file's numbers in {units}"
    if asset.metres_per_unit is not None:
        return "the file's metres"
    return "a unitless file at an everyday size; --size or --units to set it"


def guess_units(asset: Asset) -> str:
    """A human hint about the file's units, from its format and size."""
    if asset.metres_per_unit is not None:
        return "metres (glTF)"
    extent = float(np.ptp(asset.vertices, axis=0).max())
    return (f"unitless (largest extent {extent:.4g}); animated at {DEFAULT_SIZE:g} m unless "
            "--size or --units says otherwise")
