"""Point caches: a motion as positions per frame for an already imported mesh (MDD and PC2,
the formats of Blender's Mesh Cache modifier, also read by Houdini, 3ds Max and Cinema 4D).

A cache holds positions only, so its points must follow the vertex order of the mesh it is
laid on. That mesh is the user's own import of the input file, so the points follow the
vertices as importers number them (:func:`cache_order`): an OBJ's used ``v`` records in file
order (Blender's OBJ importer keeps them so; UV seams are corners, not vertices), an STL's
distinct corner positions in first-seen order (importers merge STL's unshared corners), and a
PLY's or glTF's vertices as stored (glTF: every primitive in scene order).

Coordinates are the file's own axes and units, as every other output writes them. Blender's
OBJ importer turns a +Y-up file upright on the object, not in its vertex data, so the cache
plays at the modifier's default axes (and an STL is +Z up already); its glTF importer turns
the data itself to +Z up, so there set the modifier's Forward to -Z and Up to Y.

MDD (big-endian): int32 frame count, int32 point count, float32 time of each frame in
seconds, then float32 x, y, z of every point, frame after frame.
PC2 (little-endian): the 12 bytes ``POINTCACHE2\\0``, int32 version 1, int32 point count,
float32 start frame, float32 sample rate (frames between samples), int32 sample count, then
float32 x, y, z of every point, sample after sample.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ..errors import InputError
from .asset import Asset
from .atomic import atomic_path

PC2_SIGNATURE = b"POINTCACHE2\0"
PC2_HEADER = struct.Struct("<12siiffi")
MDD_HEADER = struct.Struct(">ii")


def cache_order(asset: Asset) -> np.ndarray:
    """(M,) the asset vertex whose motion each cache point carries, in the order importers
    number the input file's vertices (see the module's docstring)."""
    if asset.format == "obj" and asset.path.is_file():
        from scipy.spatial import cKDTree

        from .obj import parse_obj

        v, _, _, groups, _ = parse_obj(asset.path)  # the file's own v records
        corners = [np.asarray(t, np.int64).reshape(-1, 3)[:, 0] for t in groups.values()
                   if len(t)]
        used = np.unique(np.concatenate(corners))
        # the loader copies each record's numbers into the asset's vertices unchanged
        _, index = cKDTree(asset.vertices).query(v[used])
        return np.asarray(index, np.int64)
    if asset.format == "stl":
        _, first = np.unique(asset.vertices, axis=0, return_index=True)
        return np.sort(first)
    return np.arange(len(asset.vertices))


def write_mdd(frames: np.ndarray, path: str | Path, *, fps: float) -> int:
    """Write (T, M, 3) positions as MDD, frame i at i / fps seconds; returns the bytes."""
    frames = np.asarray(frames)
    times = np.arange(len(frames), dtype=np.float64) / fps
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        f.write(MDD_HEADER.pack(len(frames), frames.shape[1]))
        f.write(times.astype(">f4").tobytes())
        f.write(frames.astype(">f4").tobytes())
    return Path(path).stat().st_size


def write_pc2(frames: np.ndarray, path: str | Path, *, start: float = 0.0,
              sampling: float = 1.0) -> int:
    """Write (T, M, 3) positions as PC2 from frame ``start``, one sample every ``sampling``
    frames; returns the bytes."""
    frames = np.asarray(frames)
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        f.write(PC2_HEADER.pack(PC2_SIGNATURE, 1, frames.shape[1], start, sampling,
                                len(frames)))
        f.write(frames.astype("<f4").tobytes())
    return Path(path).stat().st_size


def _body(path: Path, data: bytes, offset: int, count: int, points: int, dtype: str
          ) -> np.ndarray:
    if count < 0 or points < 0 or len(data) != offset + 12 * count * points:
        raise InputError(f"{path}: not a complete point cache ({len(data)} bytes for "
                         f"{count} frames of {points} points)")
    return np.frombuffer(data, dtype, offset=offset).reshape(count, points, 3)


def read_mdd(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(T,) times in seconds and (T, M, 3) float32 positions of an MDD file."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) < MDD_HEADER.size:
        raise InputError(f"{path}: too short for an MDD point cache")
    count, points = MDD_HEADER.unpack_from(data)
    times = np.frombuffer(data, ">f4", count=max(count, 0), offset=MDD_HEADER.size)
    frames = _body(path, data, MDD_HEADER.size + 4 * count, count, points, ">f4")
    return times.astype(np.float32), frames.astype(np.float32)


def read_pc2(path: str | Path) -> tuple[float, float, np.ndarray]:
    """Start frame, sample rate and (T, M, 3) float32 positions of a PC2 file."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) < PC2_HEADER.size or not data.startswith(PC2_SIGNATURE):
        raise InputError(f"{path}: not a PC2 point cache (no {PC2_SIGNATURE!r} header)")
    _, version, points, start, sampling, count = PC2_HEADER.unpack_from(data)
    if version != 1:
        raise InputError(f"{path}: PC2 version {version}; only version 1 is known")
    frames = _body(path, data, PC2_HEADER.size, count, points, "<f4")
    return start, sampling, frames.astype(np.float32)


def write_point_cache(asset: Asset, frames: np.ndarray, path: str | Path, *, fmt: str,
                      fps: float) -> tuple[int, dict]:
    """Write (T, N, 3) positions of ``asset.vertices`` (file frame and units) as a ``fmt``
    ("mdd" or "pc2") cache of the input file's vertices; returns the bytes and details."""
    order = cache_order(asset)
    points = np.asarray(frames)[:, order]
    size = (write_mdd(points, path, fps=fps) if fmt == "mdd"
            else write_pc2(points, path))
    return size, {"frames": len(points), "points": len(order)}


POINT_CACHES = {"mdd": (write_mdd, read_mdd), "pc2": (write_pc2, read_pc2)}
