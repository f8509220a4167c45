"""Shared fixtures: the third-party assets in ../shared/assets and the glTF validator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"
VALIDATOR = ROOT / "tools" / "validate_gltf.mjs"

# name -> path below ASSETS, for the round-trip and loader tests
ASSET_FILES = {
    "penguin": "penguin.obj",
    "spot": "spot/spot_triangulated.obj",
    "chair": "chair_model.obj",
    "teapot": "teapot.stl",
    "capsule": "capsule/capsule.obj",
    "truck": "CesiumMilkTruck.glb",
    "mountain": "mountain.obj",
    "sword": "sword.obj",
    "cat": "cat-low-resolution.obj",
    "human": "human_woman.obj",
    "scorpion": "scorpion_low_resolution.obj",
    "simplemorph": "SimpleMorph.gltf",
}


NO_ASSETS = "../shared/assets not found (third-party test assets; see README)"


def _no_assets() -> None:
    """Skip the current test for want of the shared assets (counted in the summary)."""
    pytest.skip(NO_ASSETS)


def asset_path(name: str) -> Path:
    """Path of a shared asset; skips the test when the shared folder is absent."""
    path = ASSETS / ASSET_FILES[name]
    if not ASSETS.is_dir():
        _no_assets()
    if not path.is_file():
        pytest.skip(f"shared asset {path} is not available")
    return path


def pytest_terminal_summary(terminalreporter) -> None:
    """Say once, above the final counts, why tests skipped for want of the shared assets."""
    n = sum(1 for rep in terminalreporter.stats.get("skipped", [])
            if isinstance(rep.longrepr, tuple) and NO_ASSETS in str(rep.longrepr[-1]))
    if n:
        terminalreporter.write_line(f"{n} test{'s' if n != 1 else ''} skipped: {NO_ASSETS}",
                                    yellow=True)


def validate_gltf(*paths: Path) -> list[dict]:
    """Khronos validator reports for the files. Skips locally without node/npm packages, but
    fails in CI, where .ci/run installs them."""
    ready = shutil.which("node") and (ROOT / "tools" / "node_modules" / "gltf-validator").is_dir()
    if not ready:
        if os.environ.get("CI"):
            pytest.fail("gltf-validator is not installed (npm ci --prefix tools)")
        pytest.skip("gltf-validator not installed: run `npm ci --prefix tools`")
    proc = subprocess.run(["node", str(VALIDATOR), *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=300)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def assert_valid_gltf(*paths: Path) -> None:
    """0 errors and 0 warnings from the Khronos validator for every file."""
    for report in validate_gltf(*paths):
        bad = [m for m in report["messages"] if m["severity"] <= 1]
        assert report["numErrors"] == 0 and report["numWarnings"] == 0, (report["file"], bad)


def assert_one_error_line(result, needle: str) -> None:
    """A CLI failure as users must see it: exit 1, one ``neurok: error:`` line naming the
    problem on stderr, no traceback."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neurok: error: "), result.stderr
    assert needle in lines[0], lines[0]
    assert "Traceback" not in result.output


def wobble(vertices: np.ndarray, frames: int = 12, amplitude: float = 0.05) -> np.ndarray:
    """A smooth synthetic deformation (T, N, 3) of ``vertices``: a bending wave over time.

    A function of position only, so coincident (seam) vertices move together.
    """
    v = np.asarray(vertices, np.float64)
    lo, ext = v.min(axis=0), np.ptp(v, axis=0).max()
    rel = (v - lo) / ext
    t = np.linspace(0.0, 1.0, frames)[:, None, None]
    shape = np.stack([np.sin(3 * rel[:, 1]) * rel[:, 1], 0.5 * np.cos(2 * rel[:, 0]) * rel[:, 2],
                      rel[:, 1] ** 2], axis=-1)
    return v[None] + amplitude * ext * np.sin(2 * np.pi * t + rel[None, :, :1]) * shape[None]


@pytest.fixture(autouse=True, scope="session")
def own_cache(tmp_path_factory):
    """The shape-space cache in a folder of the test run's own, not the user's: every run
    builds what it reads (child processes inherit it)."""
    previous = os.environ.get("NEUROK_CACHE")
    os.environ["NEUROK_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("NEUROK_CACHE", None)
    else:
        os.environ["NEUROK_CACHE"] = previous


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tests run tiny models: one torch thread is faster than two fighting over a busy CPU,
    and keeps results independent of the machine's core count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def assets_dir() -> Path:
    if not ASSETS.is_dir():
        _no_assets()
    return ASSETS
