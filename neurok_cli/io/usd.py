"""Writing a motion as USD (``.usd``, ``.usda``, ``.usdc``) with Pixar's ``usd-core``.

One ``Mesh`` under a ``/Root`` Xform (the default prim) holds every vertex of the asset in
its file order, as the glTF and frame outputs do: time-sampled ``points``, ``normals`` (per
vertex, turned with the welded surface so UV seams stay smooth) and ``extent``; the
triangles; ``primvars:st`` where the file has UVs (flipped to USD's v-up convention); and a
``displayColor`` from each part's base colour (per face where parts differ).

Positions stay in the file's own axes and units, as every output writes them; the stage's
metadata says what they are: ``upAxis`` the file's up axis (Y, or Z for a Z-up file) and
``metersPerUnit`` the metres of one file unit the run used (1 for glTF; for an OBJ, PLY or
STL what ``--size`` or ``--units`` gave, else the assumed everyday size), so a USD importer
brings the asset in upright and at its size. Time codes are frames: ``timeCodesPerSecond``
and ``framesPerSecond`` are the fps, from 0 to the last frame.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..extras import require
from .asset import Asset, Material
from .atomic import atomic_path
from .normals import vertex_normals

USD_SUFFIXES = (".usd", ".usda", ".usdc")


def _pxr():
    """The pxr modules, or a one-line error naming the extra that installs them."""
    return tuple(require(f"pxr.{name}", "usd") for name in ("Gf", "Sdf", "Usd", "UsdGeom", "Vt"))


def check_usd(path: Path, fmt: str) -> None:
    """Refuse, before any work, a USD output that cannot be written as asked: usd-core
    missing (the ``usd`` extra), or a name whose suffix says another format (``.usd`` takes
    either)."""
    _pxr()
    suffix = path.suffix.lower()
    if suffix not in USD_SUFFIXES or suffix not in (".usd", f".{fmt}"):
        raise UsageError(f"{path}: «format» {fmt} writes a "
                         f"{'.usd or .' + fmt if fmt != 'usd' else '.usd, .usda or .usdc'} "
                         "file; name it so")


def _prim_name(text: str) -> str:
    """A valid USD prim name from a file's stem."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text) or "mesh"
    return name if not name[0].isdigit() else f"_{name}"


def _normals(asset: Asset, frames: np.ndarray) -> np.ndarray:
    """(T, N, 3) unit vertex normals of the frames, shared across coincident vertices."""
    w = asset.welded()
    rep = np.empty(len(w.vertices), np.int64)
    rep[w.index] = np.arange(len(w.index))
    out = np.empty(frames.shape, np.float32)
    for s in range(0, len(frames), 32):  # blocks of frames: bounded memory on long clips
        out[s:s + 32] = vertex_normals(frames[s:s + 32, rep], w.faces)[:, w.index]
    return out


def _colours(asset: Asset) -> tuple[np.ndarray, str]:
    """displayColor values and interpolation: one colour, or one per face."""
    rgb = [(p.material or Material()).base_color[:3] for p in asset.parts]
    if len(set(rgb)) == 1:
        return np.asarray(rgb[:1], np.float32), "constant"
    per_face = np.concatenate([np.repeat([c], len(p.faces), axis=0)
                               for c, p in zip(rgb, asset.parts)])
    return per_face.astype(np.float32), "uniform"


def write_usd(asset: Asset, frames: np.ndarray, path: str | Path, *, fps: float,
              metres_per_unit: float = 1.0, fmt: str = "usd") -> int:
    """Write (T, N, 3) positions of ``asset.vertices`` (file frame and units) as USD: text for
    ``.usda`` or ``fmt`` "usda", crate (binary) for ``.usdc`` and otherwise. Returns the bytes.
    """
    Gf, Sdf, Usd, UsdGeom, Vt = _pxr()
    path = Path(path)
    frames = np.asarray(frames, np.float64)
    faces = asset.faces
    with atomic_path(path) as tmp:
        encoding = "usda" if "usda" in (fmt, path.suffix.lower()[1:]) else "usdc"
        layer = Sdf.Layer.CreateNew(str(tmp), args={"format": encoding})
        stage = Usd.Stage.Open(layer)
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if asset.up == "z" else UsdGeom.Tokens.y)
        UsdGeom.SetStageMetersPerUnit(stage, float(metres_per_unit))
        stage.SetStartTimeCode(0)
        stage.SetEndTimeCode(len(frames) - 1)
        stage.SetTimeCodesPerSecond(fps)
        stage.SetFramesPerSecond(fps)
        root = UsdGeom.Xform.Define(stage, "/Root")
        stage.SetDefaultPrim(root.GetPrim())
        mesh = UsdGeom.Mesh.Define(stage, f"/Root/{_prim_name(asset.path.stem)}")
        mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)  # the triangles as they are
        mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, np.int32)))
        mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(
            faces.reshape(-1).astype(np.int32)))
        mesh.SetNormalsInterpolation(UsdGeom.Tokens.vertex)
        points, normals, extent = (mesh.CreatePointsAttr(), mesh.CreateNormalsAttr(),
                                   mesh.CreateExtentAttr())
        for t, (x, n) in enumerate(zip(frames, _normals(asset, frames))):
            x32 = x.astype(np.float32)
            points.Set(Vt.Vec3fArray.FromNumpy(x32), Usd.TimeCode(t))
            normals.Set(Vt.Vec3fArray.FromNumpy(n), Usd.TimeCode(t))
            extent.Set(Vt.Vec3fArray.FromNumpy(np.stack([x32.min(0), x32.max(0)])),
                       Usd.TimeCode(t))
        if all(p.uvs is not None for p in asset.parts):
            uv = np.concatenate([p.uvs for p in asset.parts]).astype(np.float32)
            st = UsdGeom.PrimvarsAPI(mesh).CreatePrimvar(
                "st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex)
            st.Set(Vt.Vec2fArray.FromNumpy(np.stack([uv[:, 0], 1.0 - uv[:, 1]], axis=1)))
        colour, interpolation = _colours(asset)
        mesh.CreateDisplayColorPrimvar(interpolation).Set(Vt.Vec3fArray.FromNumpy(colour))
        layer.Save()
        del stage, layer
    return path.stat().st_size
