"""Install anywhere: a wheel built from the sources, installed (not editable) into a fresh
virtual environment, animates a mesh from a folder far from the checkout with the weights
it carries; and without the optional extras it still animates to glTF and MP4, while USD
output asks for its extra in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest
import trimesh

from tests.conftest import ROOT

# a module run at start-up (through a .pth line) that makes the top-level packages named in
# NEUROK_TEST_HIDE unimportable, as if the extras that bring them were not installed
HIDE_MODULE = '''"""Hide the packages named in NEUROK_TEST_HIDE (comma-separated) from imports."""
import os
import sys


class _Hidden:
    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


_names = {n for n in os.environ.get("NEUROK_TEST_HIDE", "").split(",") if n}
if _names:
    sys.meta_path.insert(0, _Hidden(_names))
'''
EXTRA_MODULES = "mujoco,pxr,moderngl,matplotlib"  # the extras sim, usd, gl and plots


@dataclass
class Installed:
    env_dir: Path
    neurok: Path


def _sources(dest: Path) -> Path:
    """The files a wheel is built from, copied (so the build leaves nothing in the checkout).
    The weights are copied as files, whatever links lead to them."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "neurok_cli", dest / "neurok_cli", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The wheel, built once, in a fresh environment that borrows this one's packages
    (torch, ...) but not its neurok, and hides the extras' packages on request."""
    tmp = tmp_path_factory.mktemp("install")
    src = _sources(tmp / "src")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(dist), str(src)], check=True, timeout=600)
    (wheel,) = dist.glob("neurok_cli-*.whl")

    env_dir = tmp / "env"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True
                          ).stdout.strip()
    # a path line (not a .pth of this environment): its editable-install hook stays out
    Path(site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    Path(site, "neurok_test_hide.py").write_text(HIDE_MODULE)
    Path(site, "neurok_test_hide.pth").write_text("import neurok_test_hide\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--quiet", str(wheel)], check=True, timeout=600)
    return Installed(env_dir, env_dir / "bin" / "neurok")


def _run(inst: Installed, args: list[str], cwd: Path, hide: str = ""
         ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NEUROK_WEIGHTS")}
    env.update(OMP_NUM_THREADS="1", NEUROK_TEST_HIDE=hide)
    return subprocess.run([str(inst.neurok), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_a_wheel_installed_elsewhere_animates(installed, tmp_path):
    far = tmp_path / "elsewhere"
    far.mkdir()
    trimesh.creation.icosphere(subdivisions=1, radius=0.3).export(far / "ball.obj")
    proc = _run(installed, ["animate", "ball.obj", "--seconds", "0.2", "--json"], far)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["space"] == "handles"  # the default: no weights needed
    assert (far / "ball_animated.glb").is_file()
    proc = _run(installed, ["animate", "ball.obj", "--seconds", "0.2", "--json", "--space",
                            "learned"], far)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    weights = Path(report["weights"]).resolve()
    assert weights.is_relative_to(installed.env_dir.resolve()), weights  # the wheel's own
    assert not weights.is_relative_to(ROOT.resolve())


@pytest.mark.slow
def test_the_core_install_animates_to_gltf_and_mp4_and_names_the_usd_extra(installed,
                                                                          tmp_path):
    blob = ROOT / "examples" / "blob.obj"
    probe = subprocess.run([str(installed.env_dir / "bin" / "python"), "-c", "import pxr"],
                           env={**os.environ, "NEUROK_TEST_HIDE": EXTRA_MODULES},
                           capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'pxr'" in probe.stderr  # truly hidden

    for name in ("b.glb", "b.mp4"):
        proc = _run(installed, ["animate", str(blob), "-o", name, "--seconds", "0.2"],
                    tmp_path, EXTRA_MODULES)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / name).stat().st_size > 0

    proc = _run(installed, ["animate", str(blob), "-o", "b.usd", "--seconds", "0.2"], tmp_path,
                EXTRA_MODULES)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        'neurok: error: USD output (.usd, .usda, .usdc) needs Pixar\'s usd-core: '
        'pip install "neurok-cli[usd]"']
    assert not (tmp_path / "b.usd").exists()
