"""Install anywhere: a wheel built from the sources, installed (not editable) into a fresh
virtual environment, animates a mesh from a folder far from the checkout with the weights
it carries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
import trimesh

from tests.conftest import ROOT


def _sources(dest: Path) -> Path:
    """The files a wheel is built from, copied (so the build leaves nothing in the checkout).
    The weights are copied as files, whatever links lead to them."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "neurok_cli", dest / "neurok_cli", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.mark.slow
def test_a_wheel_installed_elsewhere_animates(tmp_path):
    src = _sources(tmp_path / "src")
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(dist), str(src)], check=True, timeout=600)
    (wheel,) = dist.glob("neurok_cli-*.whl")

    # a fresh environment that borrows this one's packages (torch, ...) but not its neurok
    env_dir = tmp_path / "env"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True
                          ).stdout.strip()
    # a path line (not a .pth of this environment): its editable-install hook stays out
    Path(site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--quiet", str(wheel)], check=True, timeout=600)

    far = tmp_path / "elsewhere"
    far.mkdir()
    trimesh.creation.icosphere(subdivisions=1, radius=0.3).export(far / "ball.obj")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NEUROK_WEIGHTS")}
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run([str(env_dir / "bin" / "neurok"), "animate", "ball.obj",
                           "--seconds", "0.2", "--json"], cwd=far, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (far / "ball_animated.glb").is_file()
    weights = Path(report["weights"]).resolve()
    assert weights.is_relative_to(env_dir.resolve()), weights  # the wheel's own weights
    assert not weights.is_relative_to(ROOT.resolve())
