"""Blender opens our files as we wrote them: its evaluated vertices match our frames.

Blender (``bpy``, pinned in requirements-blender.txt) lives in its own environment, found at
``$NEUROK_BLENDER_PYTHON`` or ``work/blender/bin/python`` (.ci/run makes it); without it the
tests skip locally with the install command and fail in CI. blender_frames.py runs there,
imports the file as a user would (nothing chosen: Blender plays the action the importer makes
active), and saves the evaluated world positions at a few frames. Here they are compared with
our first animation read back by ``read_animated`` (glTF) or with the stage's points (USD).

Blender may reorder, split or merge vertices, so the comparison matches whole trajectories:
every Blender vertex's path over the frames must lie within the tolerance of one of ours, and
every one of ours within it of one of Blender's.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from neurok_cli.io.gltf_read import read_animated
from tests.conftest import ROOT, asset_path

SCRIPT = Path(__file__).with_name("blender_frames.py")
REQUIREMENTS = Path(__file__).with_name("requirements-blender.txt")
FPS = 30
FRAMES = [0, 1, 10, 20, 30]  # of a 1 s animation at 30 fps: start, first step, middle, end
TOLERANCE = 1e-5  # of the bounding-box diagonal; float32 files, measured ~2e-6

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


def trajectory_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance from a vertex path of ``a`` (F, Na, 3) to the nearest path of ``b``
    (F, Nb, 3), at any frame."""
    paths = lambda x: x.transpose(1, 0, 2).reshape(x.shape[1], -1)  # noqa: E731
    _, nearest = cKDTree(paths(b)).query(paths(a))
    return float(np.linalg.norm(a - b[:, nearest], axis=2).max())


def assert_same_motion(blender: np.ndarray, ours: np.ndarray) -> float:
    """Both ways within TOLERANCE of the diagonal, for a motion that does move; the error."""
    diag = float(np.linalg.norm(np.ptp(ours[0], axis=0)))
    moved = float(np.linalg.norm(ours - ours[:1], axis=2).max()) / diag
    assert moved > 0.05, f"the motion hardly moves ({moved:.3g} of the diagonal)"
    error = max(trajectory_error(blender, ours), trajectory_error(ours, blender)) / diag
    assert error < TOLERANCE, f"Blender differs from ours by {error:.3g} of the diagonal"
    return error


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    """`neurok animate` for 1 s: the blob to GLB and USD, the milk truck to GLB."""
    from neurok_cli.animate import AnimateConfig, animate

    blob, truck = ROOT / "examples" / "blob.obj", asset_path("truck")
    folder = tmp_path_factory.mktemp("interop")
    made = {"blob.glb": blob, "blob.usdc": blob, "truck.glb": truck}
    for name, source in made.items():
        animate(AnimateConfig(input=source, output=folder / name, seconds=1.0, fps=FPS))
    return {name: folder / name for name in made}


@pytest.mark.parametrize("name", ["blob.glb", "truck.glb"])
def test_blender_plays_our_first_animation(outputs, name):
    """The truck's wheels spin by the file's own channels and ride on the deforming body."""
    path = outputs[name]
    ours = read_animated(path, times=np.array(FRAMES) / FPS, animations=[0]).frames
    assert_same_motion(blender_positions(path), ours)


def test_blender_reads_our_usd(outputs):
    """Time codes are frames; Blender scales the stage to metres by its metersPerUnit."""
    from pxr import Usd, UsdGeom

    path = outputs["blob.usdc"]
    stage = Usd.Stage.Open(str(path))
    (mesh,) = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    ours = np.stack([np.asarray(mesh.GetPointsAttr().Get(f), np.float64) for f in FRAMES])
    ours *= UsdGeom.GetStageMetersPerUnit(stage)
    assert_same_motion(blender_positions(path), ours)
