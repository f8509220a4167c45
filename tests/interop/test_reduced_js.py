"""The page's own steps (render/web/reduced.js and its modules, run by node through
tools/reduced_run.mjs) integrate the reduced model as `neurok animate` does
(deform/own/motion.py): from the model's bytes alone, the same frames to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.deform.own.motion import handle_motion
from neurok_cli.io.reduced import pack
from tests.conftest import ROOT
from tests.deform.test_reduced_model import flapping_sheet, pushed_box
from tests.interop.conftest import keep_returns, run_node

SCRIPT = ROOT / "tools" / "reduced_run.mjs"


@pytest.mark.parametrize("case", [pushed_box, flapping_sheet])
def test_the_page_s_steps_are_animate_s(case, tmp_path):
    """A soft box pushed as it drops (contact, friction, a push, still air) and a sheet held
    by its edge in a gusty wind (membrane, bending, pins, wind)."""
    v, f, cfg = case()
    motion = handle_motion(v, f, cfg, handles=8)
    model = tmp_path / "model.bin"
    model.write_bytes(pack(motion.model))
    out = tmp_path / "frames.bin"
    report = run_node(SCRIPT, str(model), repr(cfg.seconds), str(out))
    ours = motion.frames[0]
    theirs = np.fromfile(out).reshape(ours.shape)
    assert report["steps"] == motion.stats["steps"]
    assert report["iterations"] == pytest.approx(motion.stats["iterations"], rel=0.05)
    size = float(np.ptp(v, axis=0).max())
    assert np.abs(theirs - ours).max() < 1e-7 * size
    assert np.abs(ours[-1] - ours[0]).max() > 0.05 * size  # (it moved)


@pytest.mark.parametrize("name", ["blob.obj"])
def test_the_examples_move_alike_in_the_page_s_steps(name, tmp_path, monkeypatch):
    """`neurok animate`'s defaults for the shipped examples on handles (the blob's drop),
    2 s: the page's steps give its frames to 1e-9 of the size (measured: 1e-13). The flag is
    cloth: test_cloth_js.py."""
    from neurok_cli.deform.animate import AnimateConfig, animate
    from neurok_cli.deform.own import motion as hm

    got = keep_returns(monkeypatch, hm, "handle_motion")
    animate(AnimateConfig(input=ROOT / "examples" / name, output=tmp_path / "x.glb",
                          seconds=2.0))
    motion = got[0]
    model = tmp_path / "model.bin"
    model.write_bytes(pack(motion.model))
    out = tmp_path / "frames.bin"
    run_node(SCRIPT, str(model), "2", str(out))
    ours = motion.frames[0]
    theirs = np.fromfile(out).reshape(ours.shape)
    size = float(np.ptp(ours[0], axis=0).max())
    error = np.abs(theirs - ours).max() / size
    assert error < 1e-9, error
