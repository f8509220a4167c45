"""``neurok simulate``: the full-order reference on real assets, in every output format."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.mesh import load_mesh
from tests.conftest import assert_valid_gltf, asset_path

runner = CliRunner()


def test_penguin_falls_and_settles_in_a_valid_glb(tmp_path):
    """Dropped from half its height (the drop preset, soft bodies' default, as in animate) it
    lands, tips over onto its side and comes to rest."""
    out = tmp_path / "p.glb"
    result = runner.invoke(app, ["simulate", str(asset_path("penguin")), "--seconds", "4",
                                 "-o", str(out), "--material", "soft", "--size", "0.5",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["rejected"] is None and report["frames"] == 121
    assert report["preset"] == "drop" and report["start_height_m"] == pytest.approx(0.25)
    assert_valid_gltf(out)
    ours = len(load_document(out).gltf.animations) - 1
    frames = read_animated(out, animations=[ours]).frames
    rest = load_mesh(asset_path("penguin")).vertices
    scale = np.ptp(rest, axis=0).max()
    low = frames[:, :, 1].min(axis=1)  # lowest point over time (file frame: y up)
    ground = rest[:, 1].min()  # where it stands in its file
    assert low[0] == pytest.approx(ground + 0.5 * scale, abs=2e-3 * scale)  # starts above it
    assert low[20] < low[0] - 0.2 * scale  # has fallen by its drop height
    assert np.abs(frames[-1] - frames[-5]).max() < 0.02 * scale  # and settled
    assert low.min() > ground - 0.01 * scale  # never below the ground


def _sheet_obj(path, n=12):
    u, w = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    lines = [f"v {a:.4f} 0 {b:.4f}" for a, b in zip(u.ravel(), w.ravel())]
    q = np.arange(n * n).reshape(n, n)[:-1, :-1].ravel() + 1
    lines += [f"f {a} {a + 1} {a + n + 1}\nf {a} {a + n + 1} {a + n}" for a in q]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cloth_with_pins_and_wind_to_frames_and_video(tmp_path):
    src = _sheet_obj(tmp_path / "sheet.obj")
    for out in (tmp_path / "frames", tmp_path / "m.gif"):
        result = runner.invoke(app, [
            "simulate", str(src), "-o", str(out), "--material", "cloth", "--size", "1",
            "--seconds", "0.2", "--fps", "10", "--pin", "x<0.02", "--wind", "0,0,3",
            "--renderer", "numpy"])
        assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "frames").glob("*.obj"))) == 3
    assert (tmp_path / "m.gif").stat().st_size > 0


@pytest.mark.parametrize("args, needle", [
    (["--material", "unobtainium"], "soft, cloth, beam"),
    (["--preset", "jump"], "choose one of drop, wobble"),
    (["--young", "-5"], "--young must be a number > 0"),
    (["--gravity", "0,-9.81"], "three numbers"),
    (["--pin", "z >> 3"], "cannot read"),
    (["--push", "top"], "REGION:X,Y,Z"),
    (["-o", "x.fbx"], "output format"),
    (["--cells", "2,2"], "X,Y,Z from 1 to 12"),
    (["--cells", "0,1,1"], "X,Y,Z from 1 to 12"),
    (["--cells", "a,b,c"], "three whole numbers"),
    (["--cells", "2,2,2", "--material", "cloth"], "cloth moves every vertex"),
    (["--cells", "2,2,2", "--dof", "tet"], "--dof tet moves every vertex"),
    (["--cells", "2,2,2", "--dof", "lattice"], "one whole number"),
    (["--cells", "40", "--dof", "lattice"], "from 2 to 16"),
])
def test_bad_options_fail_cleanly(tmp_path, args, needle):
    out = tmp_path / "o.glb"
    full = ["simulate", str(asset_path("teapot")), "-o", str(out), "--seconds", "0.1", *args]
    if "-o" in args:
        full = ["simulate", str(asset_path("teapot")), "--seconds", "0.1", *args]
    result = runner.invoke(app, full)
    assert result.exit_code == 1, result.output
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_cells_set_the_soft_bodys_resolution(tmp_path):
    """--cells reaches the engine: 2x2x2 trilinear cells are 27 nodes of 3 dofs each, where
    the teapot's proportions alone give fewer; the report says which were used."""
    reports = {}
    for cells in (None, "2,2,2"):
        out = tmp_path / f"t{cells is None}.glb"
        result = runner.invoke(app, ["simulate", str(asset_path("teapot")), "-o", str(out),
                                     "--seconds", "0.2", "--json"]
                               + ([] if cells is None else ["--cells", cells]))
        assert result.exit_code == 0, result.output
        reports[cells] = json.loads(result.output)
        assert "everyday size" in reports[cells]["size_from"]  # 63 units across
    assert reports["2,2,2"]["cells"] == [2, 2, 2] and reports["2,2,2"]["dofs"] == 81
    assert reports["2,2,2"]["dof"] == "trilinear"
    assert reports[None]["dofs"] == 3 * np.prod([c + 1 for c in reports[None]["cells"]])
    assert reports[None]["cells"] != [2, 2, 2]


def test_a_lattice_fills_the_solid(tmp_path):
    """--dof lattice: tetrahedra inside the surface move it (three dofs a node), pushed and
    dropped like any soft body, and the file holds every frame of the surface."""
    import trimesh

    src = tmp_path / "ball.obj"
    trimesh.creation.icosphere(subdivisions=2, radius=0.5).export(src)
    out = tmp_path / "b.glb"
    result = runner.invoke(app, ["simulate", str(src), "-o", str(out), "--seconds", "0.3",
                                 "--material", "soft", "--dof", "lattice", "--cells", "5",
                                 "--push", "top:1,0,0@0.1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["dof"] == "lattice" and report["cells"] == [5, 1, 1]
    assert report["dofs"] > 3 * 50 and report["dofs"] % 3 == 0  # the lattice's nodes
    assert out.stat().st_size > 0
