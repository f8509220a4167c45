"""Articulated objects through the CLI: `neurok info` names their joints, `neurok animate`
and `neurok simulate` move the shipped chest and cabinet on them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.gltf.anim import first_of_ours
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.mesh import load_mesh
from neurok_cli.rig.animate import asset_pieces
from tests.conftest import assert_one_error_line, assert_valid_gltf, asset_path

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _turn(path: Path, src: Path) -> tuple[np.ndarray, np.ndarray]:
    """(T,) the moving part's turn (degrees) from its first frame, and (T,) the largest
    change of an edge inside a part."""
    doc = load_document(path)
    frames = read_animated(path, animations=[first_of_ours(doc)]).frames
    pieces = asset_pieces(load_mesh(src))
    piece = pieces.piece[pieces.index]
    a = frames[:, piece == 1] - frames[:, piece == 1].mean(axis=1, keepdims=True)
    turn = []
    for x in a:
        U, _, Vt = np.linalg.svd(a[0].T @ x)
        R = Vt.T @ np.diag([1, 1, np.sign(np.linalg.det(Vt.T @ U.T))]) @ U.T
        turn.append(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))
    d = np.linalg.norm(frames - frames[:, :1], axis=2)  # distances to vertex 0 (the base's)
    base = piece == 0
    return np.array(turn), np.abs(d[:, base] - d[:1, base]).max(axis=1)  # the base rigid


def test_info_names_the_hinge_as_joint_takes_it():
    result = runner.invoke(app, ["info", str(EXAMPLES / "chest.glb"), "--json"])
    assert result.exit_code == 0, result.output
    rig = json.loads(result.output)["rig"]
    assert [r["part"] for r in rig] == ["box", "lid"] and rig[0]["found"] == "base"
    lid = rig[1]["joint"]
    assert lid["kind"] == "hinge" and lid["axis"] == pytest.approx([-1, 0, 0], abs=1e-3)
    lo, hi = np.degrees(lid["limits"])
    assert lo == pytest.approx(-35, abs=5) and hi > 90  # the file has it 35 degrees open
    text = runner.invoke(app, ["info", str(EXAMPLES / "chest.glb")]).output
    assert "lid:hinge:-1,0,0@" in text and "hinge on 'box'" in text


@pytest.mark.parametrize("name,preset,turn", [("chest", "open", (100, 150)),
                                              ("cabinet", "close", (30, 41))])
def test_animate_turns_the_part_about_its_hinge_and_keeps_it_rigid(tmp_path, name, preset,
                                                                   turn):
    src, out = EXAMPLES / f"{name}.glb", tmp_path / "a.glb"
    result = runner.invoke(app, ["animate", str(src), "--preset", preset, "--seconds", "1.5",
                                 "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["category"] == "articulated" and report["preset"] == preset
    assert report["rig"][1]["joint"]["start_speed"] != 0
    assert_valid_gltf(out)
    turned, stretch = _turn(out, src)
    assert turn[0] < turned[-1] < turn[1]
    # rigid, to the compact encoding's tolerance (0.1 % of the diagonal)
    assert stretch.max() < 1e-3 * np.ptp(load_mesh(src).vertices, axis=0).max()


def test_simulate_moves_the_same_rig_in_the_engine(tmp_path):
    src = EXAMPLES / "cabinet.glb"
    runs = {}
    for cmd in ("animate", "simulate"):
        out = tmp_path / f"{cmd}.glb"
        result = runner.invoke(app, [cmd, str(src), "--preset", "open", "--seconds", "1",
                                     "-o", str(out), "--json"])
        assert result.exit_code == 0, result.output
        runs[cmd] = (json.loads(result.output), _turn(out, src)[0])
    assert runs["simulate"][0]["dof"] == "rigid" and runs["simulate"][0]["rig"][1]["joint"]
    assert np.abs(runs["animate"][1] - runs["simulate"][1]).max() < 5.0


def test_drop_lands_the_whole_object(tmp_path):
    out = tmp_path / "d.glb"
    result = runner.invoke(app, ["animate", str(EXAMPLES / "chest.glb"), "--material",
                                 "articulated", "--preset", "drop", "--seconds", "1", "-o",
                                 str(out), "--json"])
    assert result.exit_code == 0, result.output
    frames = read_animated(out, animations=[first_of_ours(load_document(out))]).frames
    low = frames[:, :, 1].min(axis=1)
    size = np.ptp(frames[0], axis=0).max()
    assert low[0] == pytest.approx(0.5 * size, rel=0.01) and abs(low[-1]) < 2e-3 * size


@pytest.mark.parametrize("args,needle", [
    (["--joint", "lid:turn:1,0,0"], "must be hinge or slide"),
    (["--joint", "door:hinge:0,1,0"], "no part named 'door'"),
    (["--preset", "open", "--pin", "top"], "--pin: not for an articulated object"),
    (["--preset", "open", "--samples", "2"], "--samples: not for an articulated object")])
def test_bad_articulated_options_fail_in_one_line_and_write_nothing(tmp_path, args, needle):
    out = tmp_path / "x.glb"
    result = runner.invoke(app, ["animate", str(EXAMPLES / "chest.glb"), *args, "-o",
                                 str(out)])
    assert_one_error_line(result, needle)
    assert not out.exists()


def test_an_object_of_one_piece_asks_for_a_joint(tmp_path):
    result = runner.invoke(app, ["animate", str(asset_path("penguin")), "--preset", "open",
                                 "-o", str(tmp_path / "x.glb")])
    assert_one_error_line(result, "found no joints")
    result = runner.invoke(app, ["simulate", str(asset_path("penguin")), "--preset", "open",
                                 "-o", str(tmp_path / "x.glb")])
    assert_one_error_line(result, "found no joints")


def test_fit_recovers_the_lids_angle_of_an_observed_pose(tmp_path):
    """The engine's chest at 0.3 s, as a mesh and as a point cloud of its vertices: the
    fitted lid angle is the engine's to within 3 degrees, and its Chamfer-L1 a fraction of
    the rest pose's."""
    import trimesh

    from neurok_cli.io.mesh import canonical_frame
    from neurok_cli.rig.animate import engine_bodies, place, rig_start
    from neurok_cli.sim.articulated import Motion, run_rig

    src = EXAMPLES / "chest.glb"
    rest = load_mesh(src)
    frame = canonical_frame(rest)
    at = place(rest, frame, preset="open", drop=None, ground_at=None)
    begin = rig_start(at.start, at.pieces.faces, at.pieces.piece, at.pieces.names, joints=[],
                      preset="open", density=None, gravity=(0, -9.81, 0), drop_m=0.0)
    rig, link = begin.rig, begin.link
    bodies = engine_bodies(begin, at.start, at.pieces.faces)
    speeds = [float(v) for co, v in zip(link.coords, begin.speeds) if co.parent >= 0]
    eng = run_rig(bodies, link.density, Motion(joint_speeds=speeds), seconds=0.3, fps=30)
    order = np.concatenate([np.flatnonzero(rig.owner == p) for p in range(len(rig.names))])
    posed = np.empty_like(at.start)
    posed[order] = eng.frames[-1]
    file_posed = frame.from_canonical((posed - [0.0, at.lift, 0.0]) / frame.size_m)
    mesh = tmp_path / "observed.obj"
    trimesh.Trimesh(file_posed[at.pieces.index], rest.faces, process=False).export(mesh)
    cloud = tmp_path / "observed.xyz"
    np.savetxt(cloud, file_posed)
    truth = np.degrees(eng.joints[-1, 0])
    assert 30 < truth < 120
    for obs in (mesh, cloud):
        out = tmp_path / f"{obs.suffix[1:]}.json"
        result = runner.invoke(app, ["fit", str(obs), "--rest", str(src), "--articulated",
                                     "-o", str(out)])
        assert result.exit_code == 0, result.output
        doc = json.loads(out.read_text())
        assert doc["mode"] == "joints" and doc["frames"] == 1
        assert np.degrees(doc["shapes"][0]["joints"]["lid"]) == pytest.approx(truth, abs=3)
        # a cloud of the 588 vertices alone is sparse: its Chamfer floor is higher
        share = 0.3 if obs.suffix == ".obj" else 0.5
        assert doc["chamfer_l1"]["mean"] < share * doc["rest_chamfer_l1"]
    result = runner.invoke(app, ["fit", str(mesh), "--rest", str(src), "--articulated",
                                 "-o", str(tmp_path / "x.json"), "--then-animate",
                                 str(tmp_path / "x.glb")])
    assert_one_error_line(result, "not for a joint fit")


def test_closed_parts_on_a_hinge_are_found_without_asking(tmp_path):
    """The chest with defaults is articulated (lid thrown open); asked for as a soft body,
    or with an option only a soft body takes, it is one; the flag on its pole (a cloth, not
    a closed part) stays a cloth."""
    def category(src, *args):
        out = tmp_path / "x.glb"
        result = runner.invoke(app, ["animate", str(src), "--seconds", "0.2", "-o", str(out),
                                     "--json", *args])
        assert result.exit_code == 0, result.output
        out.unlink()
        report = json.loads(result.output)
        return report["category"], report["preset"]

    chest = EXAMPLES / "chest.glb"
    assert category(chest) == ("articulated", "open")
    assert category(chest, "--preset", "drop") == ("articulated", "drop")
    assert category(chest, "--material", "soft") == ("soft", "drop")
    assert category(chest, "--pin", "bottom")[0] == "soft"
    assert category(EXAMPLES / "flag.glb")[0] == "cloth"
    result = runner.invoke(app, ["simulate", str(chest), "--seconds", "0.2", "-o",
                                 str(tmp_path / "s.glb"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["material"] == "articulated"


def test_a_push_turns_the_part_as_the_engine_turns_it(tmp_path):
    """The cabinet left alone, its door (the front fifth: the door alone, standing open)
    pushed forward at 0.3 s: it swings open in both, within 5 degrees of each other;
    nothing moves before the push."""
    src = EXAMPLES / "cabinet.glb"
    turns = {}
    for cmd in ("animate", "simulate"):
        out = tmp_path / f"{cmd}.glb"
        result = runner.invoke(app, [cmd, str(src), "--material", "articulated", "--preset",
                                     "free", "--push", "z>0.8:0,0,1@0.3", "--seconds", "1.5",
                                     "-o", str(out)])
        assert result.exit_code == 0, result.output
        turns[cmd] = _turn(out, src)[0]
    assert turns["animate"][:9].max() < 0.5  # before the kick
    assert turns["animate"][-1] > 30
    assert np.abs(turns["animate"] - turns["simulate"]).max() < 5.0


def test_drawers_slide_in_and_out_as_the_engine_slides_them(tmp_path):
    """A generated chest of drawers (two out, one shut) as a GLB of a node per part: info
    lists two sliders with their runs in the file's units; thrown shut, each goes in most
    of the way it was out, in animate as in the engine."""
    from neurok_cli.io.asset import Asset, Part
    from neurok_cli.io.gltf.build import build_document
    from neurok_cli.sim.articulated import Motion, make_articulated, run_articulated

    obj = make_articulated("drawers", np.random.default_rng(0))
    _, f, owner = obj.mesh()
    v = run_articulated(obj, Motion(), seconds=0, fps=30).frames[0]
    parts = []
    for p, part in enumerate(obj.parts):
        sel = np.flatnonzero(owner == p)
        remap = np.full(len(v), -1)
        remap[sel] = np.arange(len(sel))
        parts.append(Part(name=part.name, vertices=v[sel],
                          faces=remap[f[(owner[f] == p).all(axis=1)]]))
    src = tmp_path / "drawers.glb"
    build_document(Asset(path=src, format="glb", parts=parts))[0].save_glb(src)
    out = {j["part"]: j["q0"] for j in obj.layout()}
    rig = json.loads(runner.invoke(app, ["info", str(src), "--json"]).output)["rig"]
    slides = {r["part"]: r["joint"] for r in rig if r.get("joint")}
    assert sorted(slides) == ["drawer1", "drawer2"]  # the third is shut: one with it
    for name, j in slides.items():
        assert j["kind"] == "slide" and j["axis"] == pytest.approx([0, 0, 1])
        assert -j["limits"][0] == pytest.approx(out[name], abs=0.005)
    ends = {}
    for cmd in ("animate", "simulate"):
        result = runner.invoke(app, [cmd, str(src), "--preset", "close", "--seconds", "1.5",
                                     "-o", str(tmp_path / f"{cmd}.glb"), "--json"])
        assert result.exit_code == 0, result.output
        ends[cmd] = {r["part"]: r["joint"]["end"] for r in json.loads(result.output)["rig"]
                     if r.get("joint")}
    for name in slides:  # in most of the way (the carcass recoils a little), as the engine's
        assert ends["animate"][name] < 0.8 * slides[name]["limits"][0]
        assert ends["simulate"][name] == pytest.approx(ends["animate"][name], abs=0.01)
