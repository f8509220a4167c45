"""The page `-o clip.html` writes plays the clip in Chromium, opened from file:// as a user
opens it: no errors, every vertex where our own reading of the same clip puts it, a clock that
runs, a picture that is not blank (tools/page_check.mjs)."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from neurok_cli.io.gltf import read_animated
from tests.conftest import ROOT
from tests.interop.conftest import FPS, FRAMES, assert_same_motion, run_chromium

SCRIPT = ROOT / "tools" / "page_check.mjs"
TIMES = [f / FPS for f in FRAMES] + [0.55]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["blob", "truck"])
def test_the_page_plays_the_clip_the_glb_holds(made, name, tmp_path):
    """The blob, and the milk truck with its textures and riding wheels."""
    page = made(f"{name}.html")
    assert page.stat().st_size < 5e6
    shot = tmp_path / "shot.png"
    result = run_chromium(SCRIPT, str(page), str(shot), *map(repr, TIMES))
    assert result["errors"] == []
    # the clip's 1 s, or the truck's own wheel channels' 1.25 s that ours plays along
    assert result["duration"] == pytest.approx(1.0 if name == "blob" else 1.25, abs=1e-6)
    assert 0.3 < result["played"] <= result["duration"]  # a second's play moved the clock on
    theirs = np.asarray(result["positions"], np.float64).reshape(len(TIMES), -1, 3)
    inside = tmp_path / "inside.glb"  # the page's own GLB, meshopt-compressed
    inside.write_bytes(base64.b64decode(
        re.search(r'id="neurok-model">([^<]*)<', page.read_text()).group(1)))
    ours = read_animated(inside, times=np.array(TIMES), animations=[0]).frames
    assert_same_motion(theirs, ours, "the page")
    plain = read_animated(made(f"{name}.glb"), times=np.array(TIMES), animations=[0]).frames
    diag = float(np.linalg.norm(np.ptp(plain[0], axis=0)))
    assert np.abs(ours - plain).max() / diag < 2e-4  # the same clip as `-o x.glb` writes
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB"), np.float64)
    assert pixels.std(axis=(0, 1)).max() > 10  # an object on a floor, not a blank canvas
