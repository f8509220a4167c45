"""Reading point clouds: XYZ/TXT/CSV columns, NumPy .npy, and PLY or OBJ files without faces."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from .mesh import MAX_COORDINATE

POINT_SUFFIXES = (".xyz", ".txt", ".csv", ".npy", ".ply", ".obj")


def _text(path: Path) -> np.ndarray:
    rows = []
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        fields = line.split()
        try:
            rows.append([float(x) for x in fields[:3]])
        except ValueError:
            if rows:  # a header line is allowed before the numbers, not among them
                raise InputError(f"{path}:{n}: not a row of numbers: {line[:40]!r}") from None
            continue
        if len(rows[-1]) < 3:
            raise InputError(f"{path}:{n}: needs x y z columns, found {len(fields)}")
    return np.array(rows, np.float64).reshape(-1, 3)


def _npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise InputError(f"{path}: cannot read ({e})") from e
    if arr.ndim != 2 or arr.shape[1] < 3 or not np.issubdtype(arr.dtype, np.number):
        raise InputError(f"{path}: expected an (N, 3) array of numbers, got {arr.shape} "
                         f"{arr.dtype}")
    return np.asarray(arr[:, :3], np.float64)


def _obj(path: Path) -> np.ndarray:
    rows = [line.split()[1:4] for line in path.read_text(errors="replace").splitlines()
            if line.startswith("v ")]
    try:
        return np.array(rows, np.float64).reshape(-1, 3)
    except ValueError as e:
        raise InputError(f"{path}: malformed vertex line ({e})") from e


def _ply(path: Path) -> np.ndarray:
    import trimesh

    try:
        loaded = trimesh.load(path, process=False)
    except Exception as e:  # trimesh raises many types for corrupt files
        raise InputError(f"{path}: cannot read PLY ({e.__class__.__name__}: {e})") from e
    if not hasattr(loaded, "vertices"):
        raise InputError(f"{path}: has no vertices")
    return np.asarray(loaded.vertices, np.float64).reshape(-1, 3)


# suffix -> reader of (N, 3) positions in the file's units and axes
READERS = {".xyz": _text, ".txt": _text, ".csv": _text, ".npy": _npy, ".ply": _ply,
           ".obj": _obj}


def load_points(path: str | Path) -> np.ndarray:
    """Positions (N, 3) of a point-cloud file, in its own units and axes.

    Raises :class:`InputError` for a missing, empty, unreadable or non-finite file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if suffix not in READERS:
        raise InputError(f"{path}: unsupported point-cloud type '{suffix or path.name}'; use "
                         f"one of {', '.join(POINT_SUFFIXES)}")
    points = READERS[suffix](path)
    if len(points) < 16:
        raise InputError(f"{path}: has {len(points)} points; a shape needs at least 16")
    if not np.isfinite(points).all():
        raise InputError(f"{path}: coordinates contain NaN or infinity")
    big = float(np.abs(points).max())
    if big > MAX_COORDINATE:
        raise InputError(f"{path}: a coordinate is {big:.3g}; coordinates beyond "
                         f"{MAX_COORDINATE:.0e} cannot be computed with: rescale the file")
    return points
