"""Real assets dropped at animate's defaults land and finish, with nothing on stderr."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ..conftest import asset_path


def test_the_sword_lands_at_its_defaults_without_a_warning(tmp_path):
    """A light, soft, thin blade (10 g at the default soft material) diverged at 0.517 s
    after eleven RuntimeWarnings: its landing's line search gave up after 12 halvings
    (friction's curvature asked for shorter steps), the step was left at the inertial
    guess, and the blade fell through the ground."""
    from neurok_cli.io.gltf import read_animated

    out = tmp_path / "sword.glb"
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", "animate",
                           str(asset_path("sword")), "--seconds", "1", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == ""
    import trimesh

    frames = read_animated(out).frames
    assert np.isfinite(frames).all()
    rest = trimesh.load(asset_path("sword"), process=False).vertices
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    ground = float(rest[:, 1].min())  # (the file's lowest point: animate's ground)
    assert frames[-1][:, 1].min() < frames[0][:, 1].min() - 0.2 * size  # it fell
    assert frames[-1][:, 1].min() > ground - 0.02 * size  # and lies on the ground
