"""A careless or hostile user's mistakes that once went through (docs/commands.md): each one
line, ``neurok: error: ...``, exit status 1, before any work and with nothing written."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app

from .test_options import TETRA

runner = CliRunner()


def _tetra(tmp_path: Path, name: str = "tetra.obj") -> Path:
    path = tmp_path / name
    path.write_text(TETRA)
    return path


def _one_line(result, *starts: str) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("neurok: error: "), lines[0]
    for text in starts:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args, says", [
    (["--samples", "2.5"], "--samples"),
    (["--bones", "2.5"], "--bones"),
    (["--bogus"], "No such option: --bogus"),
])
def test_the_command_line_s_own_mistakes_are_one_line_and_exit_1(tmp_path, args, says):
    """Typer's six-line box with exit 2 was what README calls a bug."""
    result = runner.invoke(app, ["animate", str(_tetra(tmp_path)), *args,
                                 "-o", str(tmp_path / "out.glb")])
    line = _one_line(result, says)
    assert "neurok animate -h" in line
    assert not (tmp_path / "out.glb").exists()


def test_a_bare_command_shows_its_help_and_a_missing_argument_is_one_line(tmp_path):
    result = runner.invoke(app, [])
    assert result.exit_code == 0 and "animate" in result.output
    _one_line(runner.invoke(app, ["animate"]), "Missing argument")


def test_a_format_the_output_s_name_contradicts_is_refused(tmp_path):
    """--format html -o x.glb wrote a page into a .glb."""
    out = tmp_path / "x.glb"
    result = runner.invoke(app, ["animate", str(_tetra(tmp_path)), "--format", "html",
                                 "-o", str(out)])
    _one_line(result, "x.glb", "--format")
    assert not out.exists()


@pytest.mark.parametrize("args, says", [
    (["--device", "foo"], "unknown device 'foo' (--device)"),
    (["--method", "foo"], "unknown --method 'foo'"),
    (["--weights", "/nowhere"], "--weights /nowhere: no such bundle folder"),
])
def test_options_of_the_learned_space_are_checked_whatever_the_space(tmp_path, args, says):
    """The own space ignored them silently; --method foo failed only after the learned
    model's kernels compiled. Now refused before any work (well within a second)."""
    start = time.perf_counter()
    result = runner.invoke(app, ["animate", str(_tetra(tmp_path)), *args,
                                 "-o", str(tmp_path / "out.glb")])
    _one_line(result, says)
    assert time.perf_counter() - start < 10.0
    if args[0] != "--method":  # (fit has no integrator)
        fit = runner.invoke(app, ["fit", str(_tetra(tmp_path)), *args,
                                  "-o", str(tmp_path / "state.json")])
        _one_line(fit, says)


def test_cuda_is_refused_where_there_is_none(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = runner.invoke(app, ["animate", str(_tetra(tmp_path)), "--device", "cuda",
                                 "-o", str(tmp_path / "out.glb")])
    _one_line(result, "CUDA is not available")


def test_a_name_with_script_markup_keeps_the_page_s_json_out_of_html(tmp_path):
    """A file named 'x<!--<script>y.obj' put '<!--<script>' into the page's inline JSON,
    which a standards HTML parser reads as one unterminated script: a blank page."""
    source = _tetra(tmp_path, "x<!--<script>y.obj")
    page = tmp_path / "x.html"
    result = runner.invoke(app, ["animate", str(source), "--seconds", "0.2", "-o", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", text, flags=re.S)
    assert len(scripts) >= 3  # the config, the model and the module each closed
    config = next(body for attrs, body in scripts if 'id="neurok-config"' in attrs)
    assert "<" not in config
    assert "x<!--<script>y.obj" in json.loads(config)["caption"]
    for attrs, body in scripts:
        assert "<!--" not in body and "<script" not in body.lower(), attrs


def test_convert_refuses_a_clip_too_long_for_one_run_and_a_format_it_cannot_write(tmp_path):
    """A clip whose last key time is 1e4 s exited 2 with a MemoryError (4 GiB of frames);
    -o o.txt suggested formats convert cannot write."""
    import numpy as np
    import pygltflib

    clip = tmp_path / "clip.glb"
    made = runner.invoke(app, ["animate", str(_tetra(tmp_path)), "--seconds", "0.2",
                               "-o", str(clip)])
    assert made.exit_code == 0, made.output
    gltf = pygltflib.GLTF2().load(str(clip))
    blob = bytearray(gltf.binary_blob())
    for sampler in gltf.animations[0].samplers:  # every key time x 5e4: the last at 1e4 s
        acc = gltf.accessors[sampler.input]
        view = gltf.bufferViews[acc.bufferView]
        start = (view.byteOffset or 0) + (acc.byteOffset or 0)
        times = np.frombuffer(bytes(blob[start:start + 4 * acc.count]), np.float32) * 5e4
        blob[start:start + 4 * acc.count] = times.astype(np.float32).tobytes()
        acc.min, acc.max = [float(times.min())], [float(times.max())]
    gltf.set_binary_blob(bytes(blob))
    long = tmp_path / "long.glb"
    gltf.save(str(long))
    out = tmp_path / "out.glb"
    _one_line(runner.invoke(app, ["convert", str(long), "-o", str(out)]), "frames", "fps")
    assert not out.exists()
    _one_line(runner.invoke(app, ["convert", str(clip), "-o", str(tmp_path / "o.txt")]),
              "convert writes glTF")


def test_two_runs_at_once_never_take_the_same_default_output(tmp_path):
    """Both printed X_animated.glb and one overwrote the other: the free name is now chosen
    and created in one step."""
    import subprocess
    import sys

    source = _tetra(tmp_path)
    cmd = [sys.executable, "-m", "neurok_cli", "animate", str(source), "--seconds", "0.2",
           "--json"]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outs
    names = [json.loads(out)["output"] for out, _ in outs]
    assert len(set(names)) == 2, names
    assert all(Path(n).stat().st_size > 0 for n in names)


def test_a_run_that_fails_after_choosing_its_default_name_leaves_nothing(tmp_path,
                                                                          monkeypatch):
    from neurok_cli.cli import _names
    from neurok_cli.errors import InputError

    def fails(*args, **kwargs):
        raise InputError("the motion diverged at 0.1 s")

    monkeypatch.setattr("neurok_cli.deform.animate.animate", fails)
    source = _tetra(tmp_path)
    _one_line(runner.invoke(app, ["animate", str(source)]), "diverged")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tetra.obj"]
    first = _names.free_name(tmp_path, "x", ".glb", reserve=True)
    second = _names.free_name(tmp_path, "x", ".glb", reserve=True)
    assert first != second and first.exists() and second.exists()
    _names.release_unused()
    assert not first.exists() and not second.exists()


@pytest.mark.parametrize("command", ["preview", "convert"])
def test_not_a_number_in_an_animation_is_one_line_naming_the_file(tmp_path, command):
    """NaN in a clip: preview wrote a blank PNG and exited 0; convert and the GIF renderer
    printed RuntimeWarnings first."""
    import numpy as np
    import pygltflib

    clip = tmp_path / "clip.glb"
    made = runner.invoke(app, ["animate", str(_tetra(tmp_path)), "--seconds", "0.2",
                               "--encoding", "exact", "-o", str(clip)])
    assert made.exit_code == 0, made.output
    gltf = pygltflib.GLTF2().load(str(clip))
    blob = bytearray(gltf.binary_blob())
    acc = gltf.accessors[gltf.animations[0].samplers[0].output]
    view = gltf.bufferViews[acc.bufferView]
    start = (view.byteOffset or 0) + (acc.byteOffset or 0)
    blob[start:start + 4] = np.float32(np.nan).tobytes()
    gltf.set_binary_blob(bytes(blob))
    bad = tmp_path / "bad.glb"
    gltf.save(str(bad))
    out = tmp_path / ("out.png" if command == "preview" else "out.glb")
    result = runner.invoke(app, [command, str(bad), "-o", str(out)])
    _one_line(result, "bad.glb", "not finite")
    assert not out.exists()


@pytest.mark.parametrize("args, says", [
    (["--bones", "8"], "--bones sets the bones encoding's joints"),
    (["--encoding", "bones", "--max-targets", "20"], "--max-targets bounds"),
])
def test_an_encoding_s_option_given_for_another_is_refused(tmp_path, args, says):
    """--bones with the compact encoding and --max-targets with bones were ignored."""
    out = tmp_path / "out.glb"
    _one_line(runner.invoke(app, ["animate", str(_tetra(tmp_path)), *args, "-o", str(out)]),
              says)
    assert not out.exists()
