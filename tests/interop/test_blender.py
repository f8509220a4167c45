"""Blender opens our files as we wrote them: its evaluated vertices match our frames.

Blender (``bpy``, pinned in requirements-blender.txt) lives in its own environment, found at
``$NEUROK_BLENDER_PYTHON`` or ``work/blender/bin/python`` (.ci/run makes it); without it the
tests skip locally with the install command and fail in CI. blender_frames.py runs there,
imports the file as a user would (nothing chosen: Blender plays the action the importer makes
active), and saves the evaluated world positions at a few frames. Here they are compared with
our first animation read back by ``read_animated`` (glTF) or with the stage's points (USD).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from neurok_cli.io.gltf import read_animated
from tests.conftest import ROOT
from tests.interop.conftest import FPS, FRAMES, assert_same_motion

SCRIPT = Path(__file__).with_name("blender_frames.py")
REQUIREMENTS = Path(__file__).with_name("requirements-blender.txt")

pytestmark = pytest.mark.slow


def blender_python() -> str:
    """The Python that has bpy; skips locally (fails in CI) when there is none."""
    env = os.environ.get("NEUROK_BLENDER_PYTHON")
    path = Path(env) if env else ROOT / "work" / "blender" / "bin" / "python"
    if path.is_file():
        return str(path)
    hint = (f"Blender's bpy not found at {path}: python3.11 -m venv work/blender && "
            f"work/blender/bin/pip install -r {REQUIREMENTS.relative_to(ROOT)}")
    if os.environ.get("CI"):
        pytest.fail(hint)
    pytest.skip(hint)


def blender_positions(path: Path, frames: list[int] = FRAMES) -> np.ndarray:
    """(F, N, 3) world positions Blender evaluates for the file, in glTF's Y-up axes."""
    out = path.with_suffix(path.suffix + ".blender.npz")
    proc = subprocess.run([blender_python(), str(SCRIPT), str(path), str(out), str(FPS),
                           *map(str, frames)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(out) as saved:
        assert list(saved["frames"]) == frames and saved["fps"] == FPS
        return saved["positions"]


@pytest.mark.parametrize("name", ["blob.glb", "truck.glb", "blob_bones.glb", "truck_bones.glb"])
def test_blender_plays_our_first_animation(made, name):
    """The truck's wheels spin by the file's own channels and ride on the deforming body."""
    path = made(name)
    ours = read_animated(path, times=np.array(FRAMES) / FPS, animations=[0]).frames
    assert_same_motion(blender_positions(path), ours, "Blender")


def test_blender_reads_our_usd(made):
    """Time codes are frames; Blender scales the stage to metres by its metersPerUnit."""
    from pxr import Usd, UsdGeom

    path = made("blob.usdc")
    stage = Usd.Stage.Open(str(path))
    (mesh,) = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    ours = np.stack([np.asarray(mesh.GetPointsAttr().Get(f), np.float64) for f in FRAMES])
    ours *= UsdGeom.GetStageMetersPerUnit(stage)
    assert_same_motion(blender_positions(path), ours, "Blender")


def test_blender_plays_our_usd_skeleton(made):
    """`--encoding bones` to USD: Blender's armature moves the mesh as USD's own skinning
    (UsdSkel) does."""
    from pxr import Usd, UsdGeom, UsdSkel

    path = made("blob_bones.usdc")
    stage = Usd.Stage.Open(str(path))
    cache = UsdSkel.Cache()
    cache.Populate(UsdSkel.Root(stage.GetPrimAtPath("/Root")), Usd.TraverseInstanceProxies())
    (mesh,) = [p for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    skel = cache.GetSkelQuery(UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton")))
    skinning = cache.GetSkinningQuery(mesh)
    ours = []
    for f in FRAMES:
        points = UsdGeom.Mesh(mesh).GetPointsAttr().Get()
        skinning.ComputeSkinnedPoints(skel.ComputeSkinningTransforms(f), points, f)
        ours.append(np.asarray(points, np.float64))
    ours = np.stack(ours) * UsdGeom.GetStageMetersPerUnit(stage)
    assert_same_motion(blender_positions(path), ours, "Blender")
