"""The command line as a new user meets it: help that reads well, outputs that need no -o or
--out and never overwrite, a summary in a user's words, progress frame by frame, and
weights found by name."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest
import trimesh
import typer
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.cli._names import beside, free_name, new_run
from tests.conftest import assert_one_error_line

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
PANELS = ["Input", "Motion", "Material", "Forces and pins", "Output", "Model and numerics"]


def _run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def _commands(typer_app: typer.Typer, prefix=()):
    for info in typer_app.registered_commands:
        yield [*prefix, info.name or info.callback.__name__], info.callback
    for group in typer_app.registered_groups:
        yield from _commands(group.typer_instance, (*prefix, group.name))


def _text(result) -> str:
    return " ".join(result.output.replace("│", " ").split())


# --- help -------------------------------------------------------------------------------------

def test_animate_help_groups_options_names_values_and_shows_every_default():
    result = _run("animate", "--help", env=WIDE)
    assert result.exit_code == 0, result.output
    for panel in PANELS:
        assert f"─ {panel} ─" in result.output, panel
    text = _text(result)
    for metavar in ("FILE", "SECONDS", "METRES", "X,Y,Z", "REGION", "REGION:X,Y,Z[@T]",
                    "NAME|PATH", "[drop|wobble|poke|sway|flutter|free|open|close|swing]",
                    "[m|cm|mm|in|ft]"):
        assert f" {metavar} " in text, metavar
    for raw in ("<str>", "<float>", "<int>", "<list[str]>", "{file}"):
        assert raw not in text, raw
    assert "--output -o FILE" in text and text.count("[required]") == 1  # FILE alone
    for default in ("[default: 4.0]", "[default: (by the material)]", "[default: (0.8)]",
                    "[default: (0,-9.81,0)]", "[default: (beside FILE, a new name)]",
                    "[default: neurok-base]"):
        assert default in text, default


@pytest.mark.parametrize("cmd", ["animate", "simulate", "preview"])
def test_every_value_option_shows_a_default(cmd):
    """Each option that takes a value says what it is when not given."""
    command = typer.main.get_command(app).commands[cmd]
    bare = [p.name for p in command.params
            if p.param_type_name == "option" and not p.is_flag and p.default is None
            and not isinstance(p.show_default, str)]
    assert not bare, bare


def test_every_command_has_a_short_summary_and_an_example():
    for words, fn in _commands(app):
        first = inspect.cleandoc(fn.__doc__).split("\n\n")[0]
        assert "\n" not in first and len(first) <= 66, (words, first)
        result = _run(*words, "--help", env=WIDE)
        assert result.exit_code == 0 and "Example" in result.output, words
    summary = _run("--help", env={"COLUMNS": "80"}).output
    commands = summary[summary.index("Commands"):]
    rows = [line.split("│")[1].split() for line in commands.splitlines()
            if line.startswith("│ ")]
    names = {words[0] for words, _ in _commands(app)} | {"dataset"}
    assert all(row[0] in names for row in rows), rows  # one line each: nothing wraps


def test_defaults_the_help_shows_are_the_library_defaults():
    from neurok_cli.cli.animate import PRESETS as SHOWN
    from neurok_cli.cli.fit import FIT_STEPS
    from neurok_cli.cli.train import TRAIN_DEFAULTS
    from neurok_cli.deform.fit import FitConfig
    from neurok_cli.scenario.presets import PRESETS
    from neurok_cli.train import TrainConfig

    assert SHOWN == PRESETS
    assert FIT_STEPS == FitConfig.steps
    assert f"[default: {FitConfig.steps}]" in _text(_run("fit", "--help", env=WIDE))
    fields = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    assert {k: fields[k] for k in TRAIN_DEFAULTS} == TRAIN_DEFAULTS


# --- default names ----------------------------------------------------------------------------

def test_default_names_sit_beside_the_input_and_never_overwrite(tmp_path):
    chair = tmp_path / "chair.glb"
    chair.write_bytes(b"x")
    assert beside(chair, "_animated") == tmp_path / "chair_animated.glb"
    (tmp_path / "chair_animated.glb").write_bytes(b"y")
    assert beside(chair, "_animated") == tmp_path / "chair_animated_2.glb"
    assert beside(chair, "_animated", "obj") == tmp_path / "chair_animated"
    assert beside(chair, "_simulated", "mp4") == tmp_path / "chair_simulated.mp4"
    assert beside(tmp_path / "out.glb", "") == tmp_path / "out.mp4"
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"z")  # a preview of clip.mp4 itself would be clip_2.mp4, not clip.mp4
    assert free_name(tmp_path, "clip", ".mp4", avoid=video) == tmp_path / "clip_2.mp4"
    frames = tmp_path / "frames"
    frames.mkdir()
    assert beside(frames, "") == tmp_path / "frames.mp4"


def test_a_new_run_folder_per_training(tmp_path):
    data = tmp_path / "4d dataset"
    data.mkdir()
    root = tmp_path / "runs"
    assert new_run(data, root) == root / "4d-dataset-1"
    (root / "4d-dataset-1").mkdir(parents=True)
    assert new_run(data, root) == root / "4d-dataset-2"


# --- the commands as typed ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def ball(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("assets")
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
    mesh.export(folder / "ball.obj")
    return folder / "ball.obj"


def test_animate_and_preview_as_typed_without_o(ball):
    before = ball.read_bytes()
    first = _run("animate", ball, "--seconds", "0.2")
    assert first.exit_code == 0, first.output
    out = ball.parent / "ball_animated.glb"
    assert out.is_file() and ball.read_bytes() == before
    text = first.stdout
    for label in ("animated", "size", "mass", "material", "preset", "frames", "output",
                  "took"):
        assert label in text, label
    assert str(out) in text.replace("\n", "")
    assert "the object's own" in text  # the shape space it moved in, in words
    assert "BDF2" not in text and "cubature" not in text  # the research figures: --verbose
    again = _run("animate", ball, "--seconds", "0.2", "--verbose")
    assert again.exit_code == 0, again.output
    assert (ball.parent / "ball_animated_2.glb").is_file()
    assert "BDF2 steps" in again.stdout and "cubature" in again.stdout
    result = _run("preview", out, "--width", "64", "--height", "48", "--renderer", "numpy")
    assert result.exit_code == 0, result.output
    assert (ball.parent / "ball_animated.mp4").is_file()
    assert "ball_animated.mp4" in result.stdout


def test_the_summary_fits_in_100_columns(ball, tmp_path):
    from neurok_cli.deform.report import AnimateReport, report_rows

    result = _run("animate", ball, "--seconds", "0.2", "-o", tmp_path / "b.glb", "--json",
                  "--pin", "y>0.4", "--preset", "sway")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"latent_dims", "steps", "fit_residual", "energy", "timings"} <= set(data)
    rep = AnimateReport(**data)
    rows = report_rows(rep, verbose=True)
    width = max(len(label) for label, _ in rows) + 2
    long = [(label, value) for label, value in rows
            if width + len(value) > 100 and label not in ("animated", "output", "weights")]
    assert not long, long


@pytest.mark.parametrize("space", ["handles", "learned"])
def test_progress_follows_every_frame(ball, tmp_path, space):
    from neurok_cli.deform.animate import AnimateConfig, animate
    from neurok_cli.model.dynamics import kernel

    kernel.warm()  # compiled and cached: the "moving" stage does not announce a compile
    frames, stages = [], []
    rep = animate(AnimateConfig(input=ball, output=tmp_path / "p.glb", seconds=0.2,
                                space=space),
                  progress=stages.append, on_frame=lambda done, total: frames.append(
                      (done, total)))
    assert stages == ["loading", "moving", "writing"]
    if space == "handles":  # frame 0 is the rest pose: each frame after it, as it comes
        assert frames == [(i, rep.frames - 1) for i in range(1, rep.frames)]
    else:  # the learned space's rollout counts its frames from the start state
        assert frames == [(i, rep.frames) for i in range(1, rep.frames + 1)]


def test_progress_follows_the_decoding_block_by_block(ball, tmp_path):
    from neurok_cli.deform.animate import AnimateConfig, animate
    from neurok_cli.deform.learned.decode import DECODE_FRAMES

    blocks = []
    rep = animate(AnimateConfig(input=ball, output=tmp_path / "p.glb", seconds=1.0,
                                space="learned"),  # the handle space decodes nothing
                  on_decode=lambda done, total: blocks.append((done, total)))
    ends = [*range(DECODE_FRAMES, rep.frames, DECODE_FRAMES), rep.frames]
    assert blocks == [(end, rep.frames) for end in ends] and len(blocks) > 1


def test_train_as_typed_makes_a_new_run_folder(tmp_path, monkeypatch):
    from tests.train.synth import TINY_MODEL, make_dataset

    data = make_dataset(tmp_path / "4d_dataset", train=1, val=1, frames=4)
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps({"size": TINY_MODEL, "warmup": 1, "val_pairs": 2,
                                  "val_ik_steps": 1, "log_every": 1, "steps": 1, "batch": 2,
                                  "device": "cpu"}))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = _run("train", "--data", data, "--config", config)
    assert result.exit_code == 0, result.output
    run = Path("runs") / "4d_dataset-1"
    assert (work / run / "bundle" / "config.json").is_file()
    assert f"run folder: {run}" in result.stdout
    assert_one_error_line(_run("train", "--resume"), "--out RUN")


# --- weights by name --------------------------------------------------------------------------

def test_weights_by_name_from_the_environment(tmp_path, monkeypatch):
    from neurok_cli.deform.learned.weights import SHIPPED_WEIGHTS, resolve_weights

    assert resolve_weights("neurok-base") == SHIPPED_WEIGHTS / "neurok-base"
    (tmp_path / "mine").symlink_to(SHIPPED_WEIGHTS / "neurok-base", target_is_directory=True)
    monkeypatch.setenv("NEUROK_WEIGHTS", str(tmp_path))
    assert resolve_weights("mine") == tmp_path / "mine"
    with pytest.raises(Exception, match="mine, neurok-base"):
        resolve_weights("theirs")


def test_simulate_as_typed_without_o(ball):
    result = _run("simulate", ball, "--seconds", "0.1")
    assert result.exit_code == 0, result.output
    assert (ball.parent / "ball_simulated.glb").is_file()


@pytest.mark.parametrize("cmd", ["animate", "simulate", "preview"])
def test_an_output_that_is_the_input_is_refused(ball, cmd):
    before = ball.read_bytes()
    assert_one_error_line(_run(cmd, ball, "-o", ball.parent / "." / ball.name),
                          "is the input itself")
    assert ball.read_bytes() == before
