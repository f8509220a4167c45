"""three.js in headless Chromium plays our GLB as we wrote it: its vertices match our frames.

tools/three_frames.mjs loads the file with GLTFLoader, plays the first clip (what most
viewers play) or every clip together (three.js's examples) with an AnimationMixer, and reads
the vertices three.js computes on the CPU (morph targets, skins, node matrices). They are compared
with ``read_animated`` of the same animations. Needs node, ``npm ci --prefix tools`` and a
Chromium (``$CHROMIUM``, default /usr/bin/chromium; .ci/run installs Debian's); without them
the tests skip locally and fail in CI.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neurok_cli.io.gltf import read_animated
from tests.conftest import ROOT
from tests.interop.conftest import FPS, FRAMES, assert_same_motion, run_chromium

SCRIPT = ROOT / "tools" / "three_frames.mjs"
# key times, and ones between keys where both sides interpolate
TIMES = [f / FPS for f in FRAMES] + [0.05, 0.55, 0.99]

pytestmark = pytest.mark.slow


def three_positions(path: Path, mode: str, times: list[float] = TIMES) -> np.ndarray:
    """(T, N, 3) world positions three.js computes when playing the file (``mode`` first|all)."""
    result = run_chromium(SCRIPT, str(path), mode, *map(repr, times))
    assert result["times"] == times
    return np.asarray(result["positions"], np.float64).reshape(len(times), -1, 3)


@pytest.mark.parametrize("mode", ["first", "all"])
@pytest.mark.parametrize("name", ["blob.glb", "truck.glb", "blob_bones.glb", "truck_bones.glb",
                                  "blob_meshopt.glb", "truck_bones_meshopt.glb"])
def test_threejs_plays_our_animations(made, name, mode):
    """The truck's wheels ride on the deforming body whether one clip plays or all do, as
    morph targets or as a skin, compressed or not (three.js decodes meshopt as we do)."""
    path = made(name)
    ours = read_animated(path, times=np.array(TIMES), animations=[0] if mode == "first" else None)
    assert_same_motion(three_positions(path, mode), ours.frames, f"three.js ({mode} clip(s))")
