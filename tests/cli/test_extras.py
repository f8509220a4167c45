"""The optional extras: a command that needs a package the core install lacks fails in one
line naming the extra to install (exit 1), before its work where it can; ``--renderer auto``
falls back to the NumPy renderer without moderngl. A module set to None in ``sys.modules``
stands for one that is not installed (its import raises ImportError)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.errors import DependencyError
from neurok_cli.extras import EXTRAS, install_hint, require
from neurok_cli.render import renderer
from tests.conftest import ROOT, assert_one_error_line

runner = CliRunner()
BLOB = ROOT / "examples" / "blob.obj"
FLAG = ROOT / "examples" / "flag.glb"


def _hide(monkeypatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _fails_naming(result, extra: str) -> str:
    assert_one_error_line(result, f'pip install "neurok-cli[{extra}]"')
    return result.stderr.strip()


@pytest.fixture
def no_gl(monkeypatch):
    """moderngl hidden, and no GL context made before it was."""
    _hide(monkeypatch, "moderngl")
    monkeypatch.setattr(renderer, "_GL", None)
    monkeypatch.setattr(renderer, "_GL_ERROR", None)


def test_the_hint_names_the_extra_and_what_needs_it(monkeypatch):
    _hide(monkeypatch, "pxr")
    with pytest.raises(DependencyError) as e:
        require("pxr.Usd", "usd", "writing a stage")
    assert str(e.value) == install_hint("usd", "writing a stage") \
        == "writing a stage needs Pixar's usd-core: pip install \"neurok-cli[usd]\""


def test_pyproject_declares_the_extras_the_errors_name():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert extras["all"] == [f"neurok-cli[{','.join(EXTRAS)}]"]
    assert extras["sim"] == ["mujoco==4.0.0"]


@pytest.mark.parametrize("command", ["animate", "simulate"])
def test_usd_output_without_usd_core_fails_at_the_output_check(command, monkeypatch, tmp_path):
    _hide(monkeypatch, "pxr")
    # the check comes before the mesh is read: a missing input would otherwise be the error
    out = tmp_path / "x.usd"
    result = runner.invoke(app, [command, str(tmp_path / "absent.obj"), "-o", str(out)])
    line = _fails_naming(result, "usd")
    assert line == ('neurok: error: USD output (.usd, .usda, .usdc) needs Pixar\'s usd-core: '
                    'pip install "neurok-cli[usd]"')
    assert list(tmp_path.iterdir()) == []


def test_simulate_without_mujoco_names_sim(monkeypatch, tmp_path):
    _hide(monkeypatch, "mujoco")
    out = tmp_path / "s.glb"
    result = runner.invoke(app, ["simulate", str(BLOB), "-o", str(out), "--seconds", "0.2"])
    assert "needs MuJoCo" in _fails_naming(result, "sim")
    assert not out.exists()


def test_articulated_simulate_without_mujoco_names_sim(monkeypatch, tmp_path):
    _hide(monkeypatch, "mujoco")
    out = tmp_path / "s.glb"
    result = runner.invoke(app, ["simulate", str(ROOT / "examples" / "chest.glb"), "-o",
                                 str(out), "--seconds", "0.2"])
    assert "needs MuJoCo" in _fails_naming(result, "sim")
    assert not out.exists()


def test_auto_renderer_without_moderngl_uses_numpy(no_gl, tmp_path):
    assert renderer.available_backends() == ["numpy"]
    out = tmp_path / "still.png"
    result = runner.invoke(app, ["preview", str(FLAG), "-o", str(out), "--width", "64",
                                 "--height", "48", "--json"])
    assert result.exit_code == 0, result.output
    assert '"renderer": "numpy"' in result.stdout and out.is_file()


def test_gl_renderer_without_moderngl_names_gl(no_gl, tmp_path, monkeypatch):
    import neurok_cli.render.preview as preview

    def no_loading(*args, **kwargs):
        raise AssertionError("the renderer is checked before the file is read")

    monkeypatch.setattr(preview, "_load_motion", no_loading)
    out = tmp_path / "still.png"
    result = runner.invoke(app, ["preview", str(FLAG), "-o", str(out), "--renderer", "gl"])
    assert _fails_naming(result, "gl") == ('neurok: error: --renderer gl needs moderngl: '
                                           'pip install "neurok-cli[gl]"')
    assert not out.exists()


def test_a_video_output_checks_the_named_renderer(no_gl, tmp_path):
    from neurok_cli.render.export import check_output

    assert check_output(tmp_path / "v.mp4", renderer="auto") == "mp4"
    with pytest.raises(DependencyError, match=r'neurok-cli\[gl\]'):
        check_output(tmp_path / "v.mp4", renderer="gl")


def test_eval_plot_without_matplotlib_names_plots(monkeypatch, tmp_path):
    import neurok_cli.evaluate.run as run

    _hide(monkeypatch, "matplotlib", "matplotlib.pyplot")
    monkeypatch.setattr(run, "evaluate", lambda *a, **k: {"weights": "w"})  # no measuring
    plot = tmp_path / "r.png"
    result = runner.invoke(app, ["eval", "--data", str(tmp_path), "--plot", str(plot)])
    assert _fails_naming(result, "plots") == ('neurok: error: neurok eval --plot needs '
                                              'matplotlib: pip install "neurok-cli[plots]"')
    assert not plot.exists()


def test_training_curves_without_matplotlib_name_plots(monkeypatch, tmp_path):
    from neurok_cli.train.checkpoint import plot_curves

    _hide(monkeypatch, "matplotlib", "matplotlib.figure")
    with pytest.raises(DependencyError, match=r'plotting the training curves needs matplotlib'):
        plot_curves([], Path(tmp_path) / "loss.png")
