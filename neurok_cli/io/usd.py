"""Writing a motion as USD (``.usd``, ``.usda``, ``.usdc``) with Pixar's ``usd-core``.

One ``Mesh`` under a ``/Root`` Xform (the default prim) holds every vertex of the asset in
its file order, as the glTF and frame outputs do: time-sampled ``points``, ``normals`` (per
vertex, turned with the welded surface so UV seams stay smooth) and ``extent``; the
triangles; ``primvars:st`` where the file has UVs (flipped to USD's v-up convention); and a
``displayColor`` from each part's base colour (per face where parts differ).

With ``skin`` (``--encoding bones``) the motion is a UsdSkel skeleton instead of point
samples (io/skinning.py's decomposition, as the glTF bones encoding writes it): ``/Root`` is
a ``SkelRoot`` holding a ``Skeleton`` of sibling joints bound at their rest centres, a
``SkelAnimation`` of their time-sampled translations and rotations, and the mesh at rest
with four ``skel:jointIndices`` and ``skel:jointWeights`` a vertex.

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
              metres_per_unit: float = 1.0, fmt: str = "usd", skin: bool = False,
              bones: int | None = None) -> tuple[int, dict]:
    """Write (T, N, 3) positions of ``asset.vertices`` (file frame and units) as USD: text for
    ``.usda`` or ``fmt`` "usda", crate (binary) for ``.usdc`` and otherwise; ``skin``: as a
    UsdSkel skeleton of ``bones`` joints (None: as the clip needs them). Returns the bytes
    and what was written (frames; the skin's joints and mean error)."""
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
        details: dict = {"frames": len(frames)}
        if skin:
            from pxr import UsdSkel

            root = UsdSkel.Root.Define(stage, "/Root")
        else:
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
        if skin:
            details.update(_write_skin(stage, mesh, asset, frames, bones))
            frames = frames[:1]  # the mesh at rest, the skeleton moves it
        for t, (x, n) in enumerate(zip(frames, _normals(asset, frames))):
            x32 = x.astype(np.float32)
            at = Usd.TimeCode.Default() if skin else Usd.TimeCode(t)
            points.Set(Vt.Vec3fArray.FromNumpy(x32), at)
            normals.Set(Vt.Vec3fArray.FromNumpy(n), at)
            extent.Set(Vt.Vec3fArray.FromNumpy(np.stack([x32.min(0), x32.max(0)])), at)
        if all(p.uvs is not None for p in asset.parts):
            uv = np.concatenate([p.uvs for p in asset.parts]).astype(np.float32)
            st = UsdGeom.PrimvarsAPI(mesh).CreatePrimvar(
                "st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex)
            st.Set(Vt.Vec2fArray.FromNumpy(np.stack([uv[:, 0], 1.0 - uv[:, 1]], axis=1)))
        colour, interpolation = _colours(asset)
        mesh.CreateDisplayColorPrimvar(interpolation).Set(Vt.Vec3fArray.FromNumpy(colour))
        layer.Save()
        del stage, layer
    return path.stat().st_size, details


def _write_skin(stage, mesh, asset: Asset, frames: np.ndarray, bones: int | None) -> dict:
    """The frames as a UsdSkel skeleton bound to ``mesh`` (whose points are the rest pose,
    ``frames[0]``): each joint's bind transform its rest centre, its animation where it is
    and how it has turned, so that R_j(t) (x - c_j) + p_j(t) = R_j(t) x + t_j(t)."""
    from pxr import Gf, UsdSkel, Vt

    from .skinning import decompose

    welded = asset.welded()
    rest = frames[0]
    skin = decompose(rest, frames, welded.faces, bones=bones, index=welded.index)
    names = [f"joint{j}" for j in range(skin.bones)]
    root = mesh.GetPrim().GetParent().GetPath()
    skeleton = UsdSkel.Skeleton.Define(stage, root.AppendChild("Skeleton"))
    skeleton.CreateJointsAttr(names)
    bind = [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*map(float, c))) for c in skin.centres]
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray(bind))
    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray(bind))
    anim = UsdSkel.Animation.Define(stage, skeleton.GetPath().AppendChild("Motion"))
    anim.CreateJointsAttr(names)
    moved, turned = anim.CreateTranslationsAttr(), anim.CreateRotationsAttr()
    anim.CreateScalesAttr().Set(Vt.Vec3hArray.FromNumpy(np.ones((skin.bones, 3), np.float16)))
    for t in range(len(frames)):
        moved.Set(Vt.Vec3fArray.FromNumpy(skin.translations[t].astype(np.float32)), t)
        q = skin.rotations[t]  # (x, y, z, w) -> USD's (w, x, y, z)
        turned.Set(Vt.QuatfArray([Gf.Quatf(float(w), float(x), float(y), float(z))
                                  for x, y, z, w in q]), t)
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets(
        [anim.GetPath()])
    binding = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
    binding.CreateSkeletonRel().SetTargets([skeleton.GetPath()])
    binding.CreateJointIndicesPrimvar(False, 4).Set(
        Vt.IntArray.FromNumpy(skin.joints.astype(np.int32).reshape(-1)))
    binding.CreateJointWeightsPrimvar(False, 4).Set(
        Vt.FloatArray.FromNumpy(skin.weights.astype(np.float32).reshape(-1)))
    binding.CreateGeomBindTransformAttr(Gf.Matrix4d(1.0))
    return {"bones": skin.bones, "mean_error": skin.mean_error, "max_error": skin.max_error}
