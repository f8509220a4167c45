"""``neurok convert`` and the bones encoding from the command line."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated, write_animated
from neurok_cli.io.mesh import load_mesh
from tests.conftest import ROOT, assert_one_error_line, assert_valid_gltf, wobble

runner = CliRunner()


def _clip(tmp_path, encoding="compact"):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    path = tmp_path / f"clip_{encoding}.glb"
    write_animated(asset, [wobble(asset.vertices, frames=12)], path, fps=30, encoding=encoding)
    return path


def test_convert_morph_targets_to_bones_and_back(tmp_path):
    clip = _clip(tmp_path)
    out = tmp_path / "bones.glb"
    result = runner.invoke(app, ["convert", str(clip), "-o", str(out), "--bones", "12",
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["encoding"] == "bones" and data["bones"] == 12 and data["mean_error"] < 0.005
    assert_valid_gltf(out)
    before = read_animated(clip, fps=30).frames
    after = read_animated(out, fps=30).frames
    diag = float(np.linalg.norm(np.ptp(before[0], axis=0)))
    assert np.linalg.norm(after - before, axis=2).mean() / diag < 0.005
    info = json.loads(runner.invoke(app, ["info", str(out), "--json"]).output)
    assert info["skins"] == [{"index": 0, "name": info["skins"][0]["name"], "joints": 12,
                              "weights_per_vertex": 4}]
    assert info["morph_targets"] == 0
    back = tmp_path / "targets.glb"
    result = runner.invoke(app, ["convert", str(out), "-o", str(back), "--encoding", "compact"])
    assert_one_error_line(result, "already skinned")
    assert not back.exists()


def test_max_targets_caps_the_compact_encoding(tmp_path):
    clip = _clip(tmp_path, "exact")
    out = tmp_path / "two.glb"
    result = runner.invoke(app, ["convert", str(clip), "-o", str(out), "--encoding", "compact",
                                 "--max-targets", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["targets"] <= 3  # two, and the base's offset


def test_convert_refuses_what_it_cannot_write_in_one_line(tmp_path):
    clip = _clip(tmp_path)
    cases = [(["convert", str(ROOT / "examples" / "blob.obj")], "animated glTF"),
             (["convert", str(clip), "-o", str(tmp_path / "x.mp4")], "use .glb or .gltf"),
             (["convert", str(clip), "--bones", "0"], "--bones"),
             (["convert", str(clip), "--encoding", "joints"], "--encoding"),
             (["convert", str(tmp_path / "none.glb")], "no such file")]
    for args, needle in cases:
        assert_one_error_line(runner.invoke(app, args), needle)


def test_meshopt_compresses_a_conversion_and_info_says_so(tmp_path):
    clip = _clip(tmp_path, "exact")
    out = tmp_path / "small.glb"
    result = runner.invoke(app, ["convert", str(clip), "-o", str(out), "--encoding", "exact",
                                 "--meshopt"])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size < 0.8 * clip.stat().st_size
    assert_valid_gltf(out)
    info = json.loads(runner.invoke(app, ["info", str(out), "--json"]).output)
    assert info["meshopt_views"] > 0
    assert json.loads(runner.invoke(app, ["info", str(clip), "--json"]).output)[
        "meshopt_views"] == 0
    shown = runner.invoke(app, ["info", str(out)]).output
    assert "EXT_meshopt_compression" in shown


def test_meshopt_is_refused_for_output_that_is_not_gltf(tmp_path):
    blob = str(ROOT / "examples" / "blob.obj")
    for out in ("x.mp4", "x.usdc", "frames"):
        result = runner.invoke(app, ["animate", blob, "-o", str(tmp_path / out), "--meshopt"])
        assert_one_error_line(result, "--meshopt compresses glTF output")
        assert not (tmp_path / out).exists()
