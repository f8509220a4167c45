"""The reduced model as data (deform/own/reduced_model.py, io/reduced.py): what it holds rebuilds
the step's own matrices, and its bytes read back as written."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from neurok_cli.deform.own.handles import basis_rows
from neurok_cli.deform.own.motion import handle_motion
from neurok_cli.errors import InputError
from neurok_cli.io.reduced import ReducedModel, pack, unpack
from neurok_cli.scenario.conditions import Impulse
from tests.deform.test_handles import _box, _config, _sheet


def _rows(model: ReducedModel, name: str, at: np.ndarray):
    a = model.arrays
    w = model.padded(name, (len(at), len(a["centres"])))
    return basis_rows(w.tocoo(), at, a["centres"]).toarray()


def pushed_box():
    v, f = _box(lift=0.3, subdivide=1)
    push = Impulse("y>0.9", (0.4, 0.0, 0.2), 0.2)
    return v, f, replace(_config("soft", seconds=0.6, impulses=[push]), still_air=True)


def flapping_sheet():
    v, f = _sheet(n=10)
    return v, f, _config("cloth", ground=False, seconds=0.5, pins=["x<0.05"],
                         wind=(0.0, 0.0, 4.0), gust=0.5)


def test_a_solid_s_model_holds_its_basis_contact_and_clip():
    v, f, cfg = pushed_box()
    motion = handle_motion(v, f, cfg, handles=8)
    m = motion.model
    a, vals = m.arrays, m.values
    H = vals["handles"]
    assert vals["solid"] and vals["law"]["kind"] == "neo-hookean" and H == 8
    assert a["rest"].shape == v.shape and a["free"].shape[0] == 4 * H
    assert a["mass_matrix"].shape == (4 * H, 4 * H)
    # the clip's coordinates rebuild its frames (float32 coordinates)
    rows = _rows(m, "skin", a["rest"])
    size = float(np.ptp(v, axis=0).max())
    for fi in (0, 9, len(a["clip_coords"]) - 1):
        x = a["rest"] + rows @ a["clip_coords"][fi].astype(np.float64)
        assert np.abs(x - motion.frames[0, fi]).max() < 1e-5 * size
    speed = rows @ a["clip_velocities"][9].astype(np.float64)  # frame 9's, from the steps
    assert np.abs(speed).max() > 0.1 and a["clip_velocities"].dtype == np.float32
    # the push, as a momentum at its time; the ground's points: the vertices, then more
    assert a["push_time"].tolist() == [0.2] and a["push_momentum"].shape == (1, 4 * H, 3)
    T = m.csr("touch")
    assert T.shape[1] == len(v) and np.array_equal(T[:len(v)].toarray(), np.eye(len(v)))
    assert len(a["touch_handles_index"]) == T.shape[0] - len(v)
    assert len(a["touch_stiffness"]) == T.shape[0] and "touch_dashpot" not in a
    assert "laplacian_data" not in a  # no bending in a solid
    assert vals["elements"] == "smooth" and a["elements_near"].shape == (len(a["elements_at"]), 11)
    assert a["material_rest"].shape[0] == len(a["point_mass"])


def test_a_sheet_s_model_holds_its_bending_pins_and_wind():
    v, f, cfg = flapping_sheet()
    m = handle_motion(v, f, cfg, handles=8).model
    a, vals = m.arrays, m.values
    assert not vals["solid"] and vals["law"]["kind"] == "membrane"
    assert 0 < vals["law"]["compression"] < 1 and vals["wind"] == [0.0, 0.0, 4.0]
    assert vals["gust"] == 0.5 and vals["bending"]["rigidity"] > 0
    L = m.csr("laplacian")
    assert L.shape == (len(v), len(v)) and np.allclose(L.sum(axis=1), 0.0)
    assert a["free"].shape[1] < a["free"].shape[0]  # the pins took directions away
    assert "touch_data" not in a  # no ground
    assert "material_rest" not in a  # (the vertices carry the mass: the skin's weights)
    assert vals["elements"] == "triangles" and a["elements_faces"].shape[1] == 3


def test_the_bytes_read_back_as_written():
    v, f, cfg = flapping_sheet()
    m = handle_motion(v, f, replace(cfg, seconds=0.1), handles=8).model
    data = pack(m)
    assert data[:4] == b"NRRM" and len(data) % 8 == 0
    back = unpack(data)
    assert back.values == m.values
    assert set(back.arrays) == set(m.arrays)
    for name, arr in m.arrays.items():
        assert back.arrays[name].dtype == arr.dtype and np.array_equal(back.arrays[name], arr)


def test_other_bytes_are_refused():
    with pytest.raises(InputError, match="not a reduced model"):
        unpack(b"glTF\x02\x00\x00\x00")
    v, f, cfg = flapping_sheet()
    m = handle_motion(v, f, replace(cfg, seconds=0.1), handles=8).model
    m.values["version"] = 99
    with pytest.raises(InputError, match="version 99"):
        unpack(pack(m))
