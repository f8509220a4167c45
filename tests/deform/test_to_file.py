"""Frames back in the file's frame (deform/to_file.py), compiled or not."""

from __future__ import annotations

import numpy as np

from neurok_cli.deform import to_file as to_file_module
from neurok_cli.io.mesh import canonical_frame, load_mesh
from tests.conftest import ROOT


def test_the_compiled_and_the_numpy_pass_give_the_same_frames(monkeypatch):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    frame = canonical_frame(asset, size=1.3, units=None)
    welded = asset.welded()
    rng = np.random.default_rng(1)
    frames = (welded.vertices[None] + rng.normal(0, 0.01, (5, len(welded.vertices), 3))
              ).astype(np.float32)
    got = {}
    for compiled in (False, True):
        monkeypatch.setattr(to_file_module, "COMPILED_FROM", 0 if compiled else 10**12)
        got[compiled] = to_file_module.to_file(frames, frame, 0.2, welded.index)
    assert got[False].dtype == got[True].dtype == np.float64
    assert got[False].flags.c_contiguous and got[False].shape == (5, len(asset.vertices), 3)
    assert np.allclose(got[False], got[True], rtol=0, atol=1e-12)
