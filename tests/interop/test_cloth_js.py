"""The page's cloth steps (render/web/cloth.js and its modules, run by node through
tools/reduced_run.mjs) integrate a cloth's model as Python's ClothStep does without a
contact object (deform/own/cloth_step.py): from the model's bytes alone, the same frames to
rounding, carried to the welded surface as cloth_motion carries them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from neurok_cli.deform.own import cloth_motion as cm
from neurok_cli.deform.own.cloth_step import ClothStep
from neurok_cli.deform.own.fabric import Fabric
from neurok_cli.io.reduced import ReducedModel, pack, unpack
from neurok_cli.meshing.proxy import Proxy
from tests.conftest import ROOT
from tests.deform.test_cloth import _cfg, _grid, _strain
from tests.interop.conftest import keep_returns, run_node

SCRIPT = ROOT / "tools" / "reduced_run.mjs"


def contact_free_stepper(model: ReducedModel) -> ClothStep:
    """Python's stepper for the cloth ``model`` describes, without a contact object (the
    page's: the floor alone, where there is one)."""
    a, v = model.arrays, model.values
    fabric = Fabric(rest=a["sim_rest"], faces=a["sim_faces"].astype(np.int64),
                    G=model.csr("stretch"), stretch_weight=a["stretch_weight"],
                    lo=v["strain_limit"][0], hi=v["strain_limit"][1], L=model.csr("laplacian"),
                    bend_weight=a["bend_weight"], rest_curvature=a["rest_curvature"],
                    rest_normals=a["rest_normals"])
    pinned = np.zeros(len(a["mass"]), bool)
    pinned[a["held"]] = True
    return ClothStep(fabric, a["mass"], pinned, v["step"], gravity=v["gravity"], wind=v["wind"],
                     gust=v["gust"], air=v["air"], friction=v["friction"],
                     floor=bool(v["ground"]), iterations=v["iterations"])


def python_frames(model: ReducedModel, seconds: float) -> np.ndarray:
    """(T, N, 3) the welded surface as Python's contact-free steps move it from the model's
    start, carried as cloth_motion carries the simulation mesh."""
    a, v = model.arrays, model.values
    stepper = contact_free_stepper(model)
    x, vel = a["sim_rest"].copy(), a["start_velocity"].copy()
    sim = [x]
    for fi in range(1, int(np.floor(seconds * v["fps"] + 1e-9)) + 1):
        for s in range(v["substeps"]):
            x, vel, _ = stepper.step(x, vel, ((fi - 1) * v["substeps"] + s) * v["step"])
        sim.append(x)
    sim = np.asarray(sim)
    if v["proxy"]:
        proxy = Proxy(vertices=a["sim_rest"], faces=a["sim_faces"], neighbours=a["carry_index"],
                      weights=a["carry_weight"], ring=a["ring_index"],
                      ring_weights=a["ring_weight"])
        sim = proxy.carry(sim, a["cloth_rest"])
    out = np.broadcast_to(a["rest"], (len(sim), *a["rest"].shape)).copy()
    cloth = a["cloth_vertex"]
    out[:, cloth >= 0] = sim[:, cloth[cloth >= 0]]
    return out


def _node_frames(motion, seconds, tmp_path):
    model = tmp_path / "model.bin"
    model.write_bytes(pack(motion.model))
    out = tmp_path / "frames.bin"
    report = run_node(SCRIPT, str(model), repr(seconds), str(out))
    model = unpack(model.read_bytes())
    frames = np.fromfile(out).reshape(-1, model.values["vertices"], 3)
    return model, frames, report


def _flag(cols=10, rows=7):
    v, f = _grid(cols, rows, 1.0, 0.6, height=0.0)
    return v[:, [0, 2, 1]] + [0.0, 1.0, 0.0], f  # upright, in the x-y plane, from 1 m up
    # (Python's contact-free step keeps a floor at y = 0 though the ground is off: the page
    # has none there, so the two part only if the sheet goes below it)


@pytest.mark.parametrize("proxy", [False, True])
def test_the_page_s_cloth_steps_are_python_s(proxy, tmp_path, monkeypatch):
    """A sheet pinned by its edge in a gusty wind, the ground off, 1 s: the page's steps
    give Python's contact-free steps to 1e-9 of its size (measured: 3e-11; 2e-11 carried by
    a proxy of 20 simulation vertices)."""
    if proxy:
        monkeypatch.setattr(cm, "SIM_VERTICES", 20)
    v, f = _flag()
    cfg = _cfg("cotton", seconds=1.0, ground=False, pins=["x<0.02"], wind=(3.0, 0.0, 1.0),
               gust=0.5)
    motion = cm.cloth_motion(v, f, cfg)
    model, theirs, report = _node_frames(motion, cfg.seconds, tmp_path)
    assert model.values["kind"] == "cloth" and model.values["proxy"] == proxy
    ours = python_frames(model, cfg.seconds)
    assert report["steps"] == (len(ours) - 1) * model.values["substeps"]
    size = float(np.ptp(v, axis=0).max())
    error = np.abs(theirs - ours).max() / size
    assert error < 1e-9, error
    assert np.abs(ours[-1] - ours[0]).max() > 0.05 * size  # (it moved)
    if not proxy:  # (and kept its length; a proxy of 20 vertices carries it less closely)
        assert _strain(theirs, f).mean(axis=1).max() < 0.03


def test_a_sheet_the_page_drops_lands_on_the_floor_and_stays_above_it(tmp_path):
    """A free sheet dropped from 0.3 m, 1.5 s: it lands (the floor y = 0 holds it) and no
    vertex passes below the floor; the landing, friction and all, is Python's to 1e-8 of
    its size (measured: 2e-10: the landing's clamp and friction amplify rounding)."""
    v, f = _grid(8, 8, 0.5, 0.5, height=0.3)
    cfg = replace(_cfg("cotton", seconds=1.5), still_air=False)
    motion = cm.cloth_motion(v, f, cfg)
    model, theirs, _ = _node_frames(motion, cfg.seconds, tmp_path)
    assert model.values["ground"]
    assert theirs[:, :, 1].min() >= 0.0
    assert theirs[-1, :, 1].max() < 0.02  # it lies on the floor
    error = np.abs(theirs - python_frames(model, cfg.seconds)).max() / 0.5
    assert error < 1e-8, error


def test_the_example_flag_s_cloth_steps_are_python_s(tmp_path, monkeypatch):
    """`neurok animate`'s defaults for the shipped flag, 0.5 s of its flutter: the page's
    steps give Python's contact-free ones to 1e-9 of its size (measured: 1e-11; its flutter
    amplifies rounding about twentyfold every 10 frames, 4e-6 after 2 s)."""
    from neurok_cli.deform.animate import AnimateConfig, animate

    got = keep_returns(monkeypatch, cm, "cloth_motion")
    animate(AnimateConfig(input=ROOT / "examples" / "flag.glb", output=tmp_path / "x.glb",
                          seconds=0.5))
    model, theirs, _ = _node_frames(got[0], 0.5, tmp_path)
    ours = python_frames(model, 0.5)
    size = float(np.ptp(ours[0], axis=0).max())
    assert np.abs(theirs - ours).max() / size < 1e-9
    assert np.abs(ours[-1] - ours[0]).max() > 0.01 * size
