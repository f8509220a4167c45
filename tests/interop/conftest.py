"""What the interchange tests share: our files, made once, and the vertex comparison.

Other programs may reorder, split or merge vertices, so the comparison matches whole
trajectories: every vertex path of theirs over the sampled times must lie within the tolerance
of one of ours, and every one of ours within it of one of theirs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from tests.conftest import ROOT, asset_path

FPS = 30
FRAMES = [0, 1, 10, 20, 30]  # of a 1 s animation at 30 fps: start, first step, middle, end
TOLERANCE = 1e-5  # of the bounding-box diagonal; float32 files, measured below 3e-6


def trajectory_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance from a vertex path of ``a`` (T, Na, 3) to the nearest path of ``b``
    (T, Nb, 3), at any time."""
    paths = lambda x: x.transpose(1, 0, 2).reshape(x.shape[1], -1)  # noqa: E731
    _, nearest = cKDTree(paths(b)).query(paths(a))
    return float(np.linalg.norm(a - b[:, nearest], axis=2).max())


def assert_same_motion(theirs: np.ndarray, ours: np.ndarray, who: str) -> float:
    """Both ways within TOLERANCE of the diagonal, for a motion that does move; the error."""
    diag = float(np.linalg.norm(np.ptp(ours[0], axis=0)))
    moved = float(np.linalg.norm(ours - ours[:1], axis=2).max()) / diag
    assert moved > 0.05, f"the motion hardly moves ({moved:.3g} of the diagonal)"
    error = max(trajectory_error(theirs, ours), trajectory_error(ours, theirs)) / diag
    assert error < TOLERANCE, f"{who} differs from ours by {error:.3g} of the diagonal"
    return error


def keep_returns(monkeypatch, module, name: str) -> list:
    """Wrap ``module.name`` so that every value it returns is appended to the list given
    back (what a run made, for a test to look inside)."""
    real, got = getattr(module, name), []

    def keep(*args, **kwargs):
        got.append(real(*args, **kwargs))
        return got[-1]

    monkeypatch.setattr(module, name, keep)
    return got


def run_node(script: Path, *args: str) -> dict:
    """The JSON a tools/ script that needs only node prints (skips without node, fails on
    CI)."""
    if not shutil.which("node"):
        if os.environ.get("CI"):
            pytest.fail(f"{script.name} needs node")
        pytest.skip(f"{script.name} needs node")
    proc = subprocess.run(["node", str(script), *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def run_chromium(script: Path, *args: str) -> dict:
    """The JSON a tools/ script that drives headless Chromium prints (skips, or fails on CI,
    where node, the npm packages or Chromium are missing)."""
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    missing = [what for what, ok in [
        ("node", shutil.which("node")),
        ("npm packages (npm ci --prefix tools)",
         (ROOT / "tools" / "node_modules" / "three").is_dir()
         and (ROOT / "tools" / "node_modules" / "playwright-core").is_dir()),
        (f"Chromium at {chromium} (apt-get install chromium)", Path(chromium).is_file()),
    ] if not ok]
    if missing:
        message = f"{script.name} needs " + ", ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    proc = subprocess.run(["node", str(script), *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


SOURCES = {"blob.glb": "blob", "blob.usdc": "blob", "truck.glb": "truck",
           "blob_bones.glb": "blob", "truck_bones.glb": "truck",
           "blob_meshopt.glb": "blob", "truck_bones_meshopt.glb": "truck",
           "blob.html": "blob", "truck.html": "truck", "blob_bones.usdc": "blob"}


@pytest.fixture(scope="session")
def made(tmp_path_factory):
    """``made(name)``: `neurok animate` for 1 s of the blob (to ``blob.glb``, ``blob.usdc``) or
    of the milk truck (``truck.glb``; skips without the shared assets), each made once; a
    ``_bones`` name is written with the bones encoding, a ``_meshopt`` one compressed."""
    from neurok_cli.deform.animate import AnimateConfig, animate
    from neurok_cli.render.export import ExportOptions

    folder = tmp_path_factory.mktemp("interop")

    def make(name: str) -> Path:
        out = folder / name
        if not out.is_file():
            source = SOURCES[name]
            source = ROOT / "examples" / "blob.obj" if source == "blob" else asset_path(source)
            export = ExportOptions(encoding="bones" if "_bones" in name else "compact",
                                   meshopt="_meshopt" in name)
            animate(AnimateConfig(input=source, output=out, seconds=1.0, fps=FPS, export=export))
        return out

    return make
