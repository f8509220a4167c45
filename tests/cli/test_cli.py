"""The command line as a user meets it: help, results, and one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from tests.conftest import ROOT, asset_path

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize("cmd", [[], ["info"], ["preview"]])
def test_help(cmd):
    result = _run(*cmd, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.output


def test_version():
    result = _run("--version")
    assert result.exit_code == 0 and result.output.startswith("neurok ")


def test_info_table_and_json():
    path = asset_path("truck")
    result = _run("info", str(path))
    assert result.exit_code == 0
    assert "3,564 in file" in result.output and "animation 0" in result.output
    data = json.loads(_run("info", str(path), "--json").output)
    assert data["vertices"] == 3564 and len(data["parts"]) == 5
    assert data["animations"][0]["channels"] == {"rotation": 2}


def test_info_says_which_up_axis_and_how_to_change_it():
    """An STL is read +Z up; the table says so and how to say otherwise."""
    teapot = asset_path("teapot")
    assert "z (--up y if not" in _run("info", str(teapot)).output
    assert json.loads(_run("info", str(teapot), "--up", "y", "--json").output)["up"] == "y"


def test_preview_simple_morph_mp4(tmp_path):
    out = tmp_path / "p.mp4"
    result = _run("preview", str(asset_path("simplemorph")), "-o", str(out), "--fps", "10",
                  "--width", "160", "--height", "120")
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)
    assert frames.shape == (41, 120, 160, 3)
    diffs = np.abs(np.diff(frames.astype(int), axis=0)).mean(axis=(1, 2, 3))
    assert (diffs > 0.1).sum() > 20  # the triangle moves through most of the clip
    assert iio.immeta(out).get("codec") == "h264"


def test_preview_of_our_own_glb_and_a_frame_folder(tmp_path):
    flag = ROOT / "examples" / "flag.glb"
    out = tmp_path / "flag.gif"
    result = _run("preview", str(flag), "-o", str(out), "--width", "96", "--height", "72",
                  "--renderer", "numpy", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["frames"] == 48 and report["renderer"] == "numpy"
    assert iio.imread(out, index=None).shape[0] == 48


def test_preview_still_png_at_a_time(tmp_path):
    flag = ROOT / "examples" / "flag.glb"
    size = ["--width", "96", "--height", "72", "--renderer", "numpy"]
    video = tmp_path / "flag.gif"
    assert _run("preview", str(flag), "-o", str(video), "--fps", "24", *size).exit_code == 0
    frames = iio.imread(video, index=None)
    still = tmp_path / "flag.png"
    result = _run("preview", str(flag), "-o", str(still), "--at", "0.5", "--json", *size)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["still"] and report["frames"] == 1
    assert report["seconds"] == pytest.approx(0.5, abs=1e-4)
    image = iio.imread(still)
    assert image.shape == (72, 96, 3)
    # the GIF's frame 12 (0.5 s at 24 fps), up to its 256-colour palette
    assert np.abs(image.astype(int) - frames[12][..., :3].astype(int)).mean() < 4
    assert np.abs(image.astype(int) - frames[0][..., :3].astype(int)).mean() > \
        np.abs(image.astype(int) - frames[12][..., :3].astype(int)).mean()
    middle = tmp_path / "middle.png"
    result = _run("preview", str(flag), "-o", str(middle), "--json", *size)
    assert result.exit_code == 0 and json.loads(result.output)["seconds"] > 0.5
    for args, needle in ((["-o", str(tmp_path / "late.png"), "--at", "60"], "past the end"),
                         (["-o", str(tmp_path / "v.mp4"), "--at", "1"], ".png")):
        result = _run("preview", str(flag), *args, *size)
        assert result.exit_code == 1 and needle in result.stderr, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flag.gif", "flag.png", "middle.png"]


def _bad_inputs(tmp_path):
    (tmp_path / "empty.obj").write_text("")
    (tmp_path / "pts.obj").write_text("v 0 0 0\nv 1 0 0\n")
    (tmp_path / "nan.stl").write_text(
        "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex nan 0 0\n"
        "vertex 0 1 0\nendloop\nendfacet\nendsolid s\n")
    (tmp_path / "oob.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
    (tmp_path / "cut.glb").write_bytes(b"glTF\x02\x00\x00\x00\x00\x10\x00\x00")
    (tmp_path / "mesh.fbx").write_text("x")
    (tmp_path / "folder").mkdir()
    return {
        "missing": (tmp_path / "nope.glb", "no such file"),
        "folder": (tmp_path / "folder", "no numbered"),
        "empty": (tmp_path / "empty.obj", "empty"),
        "truncated": (tmp_path / "cut.glb", "truncated"),
        "unsupported": (tmp_path / "mesh.fbx", "unsupported file type"),
        "no faces": (tmp_path / "pts.obj", "no triangle faces"),
        "nan": (tmp_path / "nan.stl", "NaN"),
        "out of range": (tmp_path / "oob.obj", "vertex 9"),
    }


@pytest.mark.parametrize("cmd", ["info", "preview"])
def test_bad_input_one_line_no_traceback_no_output(tmp_path, cmd):
    for case, (path, needle) in _bad_inputs(tmp_path).items():
        out = tmp_path / "out.mp4"
        args = [cmd, str(path)] + (["-o", str(out)] if cmd == "preview" else [])
        result = _run(*args)
        assert result.exit_code == 1, (case, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (case, result.stderr)
        assert lines[0].startswith("neurok: error: ") and needle in lines[0], (case, lines)
        assert "Traceback" not in result.output
        assert not out.exists()
        assert not [p for p in tmp_path.iterdir() if ".part" in p.name]


def test_preview_rejects_unknown_output_and_renderer(tmp_path):
    src = str(asset_path("simplemorph"))
    result = _run("preview", src, "-o", str(tmp_path / "p.avi"))
    assert result.exit_code == 1 and ".mp4" in result.stderr
    result = _run("preview", src, "-o", str(tmp_path / "p.mp4"), "--renderer", "vulkan")
    assert result.exit_code == 1 and "auto" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_console_script_runs_as_a_process(tmp_path):
    """The installed entry point, not just the Typer app: exit codes and stderr."""
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", "info", str(tmp_path / "x.obj")],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"neurok: error: {tmp_path / 'x.obj'}: no such file"


def test_a_bug_is_one_line_and_exit_status_2_and_its_traceback_on_request(monkeypatch):
    import neurok_cli.deform.animate

    def broken(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(neurok_cli.deform.animate, "animate", broken)
    args = ["animate", str(asset_path("spot")), "-o", "x.glb"]
    result = _run(*args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == ["neurok: internal error: RuntimeError: boom second line (please report it; "
                     "NEUROK_TRACEBACK=1 shows where it happened)"]
    monkeypatch.setenv("NEUROK_TRACEBACK", "1")
    result = _run(*args)  # the traceback above the line, and still a bug's exit status
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and 'raise RuntimeError("boom' in result.stderr
