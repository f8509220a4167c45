"""Hostile options: every number checked (finite, in range, whole where it counts), every
region, vector and push read strictly, and the work bounded (frames, size, steps).

Each case asserts what the README promises: exit 1, one ``neurok: error:`` line naming the
option, nothing written and nothing deleted (a ``precious.txt`` in an existing folder
survives). All fail before any model is loaded, so the file runs in seconds.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.cli._checks import TEXTS, rule

runner = CliRunner()

TETRA = """v 0 0 0
v 0.4 0 0
v 0 0.4 0
v 0 0 0.4
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
"""


def workspace(tmp_path: Path) -> dict[str, str]:
    """A tiny mesh, a folder holding a user's file, and the names outputs would take."""
    (tmp_path / "tetra.obj").write_text(TETRA)
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious.txt").write_text("not yours\n")
    return {"mesh": str(tmp_path / "tetra.obj"), "keep": str(keep),
            "out": str(keep / "out.glb"), "frames": str(keep / "frames"),
            "video": str(keep / "out.mp4"), "json": str(keep / "out.json"),
            "data": str(keep / "data"), "run": str(keep / "run"), "tmp": str(tmp_path)}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones too) with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def run_hostile(tmp_path: Path, args: list[str], needle: str,
                setup: Callable[[Path], object] | None = None) -> None:
    """Invoke ``neurok ARGS`` ({mesh}, {out}, ... filled in; ``setup(keep)`` adds to the
    workspace first) and assert the failure is handled as the README promises."""
    names = workspace(tmp_path)
    if setup is not None:
        setup(Path(names["keep"]))
    argv = [a.format(**names) for a in args]
    before = snapshot(tmp_path)
    result = runner.invoke(app, argv, env={"NEUROK_TRACEBACK": ""})
    assert result.exit_code == 1, (argv, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neurok: error: "), (argv, result.stderr)
    assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in result.output
    assert snapshot(tmp_path) == before, argv  # nothing written, nothing deleted


# --- the cases -------------------------------------------------------------------------------

A = ["animate", "{mesh}", "-o", "{out}"]
S = ["simulate", "{mesh}", "-o", "{out}"]
P = ["preview", "{mesh}", "-o", "{video}"]
F = ["fit", "{mesh}", "-o", "{json}"]
G = ["dataset", "generate", "{data}"]
T = ["train", "--out", "{run}"]
E = ["eval", "--data", "{data}"]

ANIMATE = [
    (["--seconds", "inf"], "--seconds"), (["--seconds", "nan"], "--seconds"),
    (["--seconds", "0"], "--seconds"), (["--seconds", "-1"], "--seconds"),
    (["--seconds", "1e7"], "--seconds"), (["--fps", "1e9"], "--fps"),
    (["--fps", "0"], "--fps"), (["--fps", "nan"], "--fps"), (["--fps", "-30"], "--fps"),
    (["--seconds", "3600", "--fps", "1000"], "20,000"),
    (["--seconds", "700", "--fps", "30"], "frames"),
    (["--stiffness", "inf"], "--stiffness"), (["--stiffness", "0"], "--stiffness"),
    (["--stiffness", "nan"], "--stiffness"), (["--stiffness", "-2"], "--stiffness"),
    (["--young", "-5"], "--young"), (["--young", "inf"], "--young"),
    (["--density", "0"], "--density"), (["--density", "nan"], "--density"),
    (["--damping", "-1"], "--damping"), (["--damping", "nan"], "--damping"),
    (["--strain-limit", "-0.1"], "--strain-limit"), (["--strain-limit", "nan"], "--strain-limit"),
    (["--size", "0"], "--size"), (["--size", "-1"], "--size"), (["--size", "nan"], "--size"),
    (["--size", "1e-9"], "--size"), (["--size", "1e12"], "--size"), (["--size", "inf"], "--size"),
    (["--drop", "nan"], "--drop"), (["--drop", "-1"], "--drop"), (["--drop", "inf"], "--drop"),
    (["--friction", "-1"], "--friction"), (["--friction", "nan"], "--friction"),
    (["--gust", "nan"], "--gust"), (["--gust", "2"], "--gust"), (["--gust", "-0.5"], "--gust"),
    (["--seed", "-1"], "--seed"), (["--seed", str(2**70)], "--seed"),
    (["--seed", "4294967296"], "--seed"),
    (["--samples", "0"], "--samples"), (["--samples", "65"], "--samples"),
    (["--pin", "-5"], "--pin"), (["--pin", "0-99999999999"], "--pin"),
    (["--pin", "y>1.2.3"], "--pin"), (["--pin", "1-"], "--pin"), (["--pin", "5-3"], "--pin"),
    (["--pin", ""], "--pin"), (["--pin", "y>nan"], "--pin"), (["--pin", "q>0.5"], "--pin"),
    (["--pin", ","], "--pin"), (["--pin", "y>1e999"], "--pin"), (["--pin", "top &"], "--pin"),
    (["--pin", "top", "--pin", "x<<1"], "--pin"), (["--pin", "y>-1"], "holds all"),
    (["--push", "top:1,2,3@nan"], "--push"), (["--push", "top:1,2,3@-1"], "--push"),
    (["--push", "top:1,2,3@inf"], "--push"), (["--push", "top:1,2,3@soon"], "--push"),
    (["--push", "top:nan,0,0"], "--push"), (["--push", "top:1,2"], "--push"),
    (["--push", "y>1.2.3:1,0,0"], "--push"), (["--push", "1-:1,0,0"], "--push"),
    (["--push", "top:1e9,0,0"], "--push"), (["--push", "top"], "--push"),
    (["--gravity", "nan,0,0"], "--gravity"), (["--gravity", "0,-1e300,0"], "--gravity"),
    (["--gravity", ""], "--gravity"), (["--velocity", "inf,0,0"], "--velocity"),
    (["--spin", "1,2"], "--spin"), (["--wind", "1e5,0,0"], "--wind"),
]
SIMULATE = [
    (["--fps", "1e7"], "--fps"), (["--seconds", "inf"], "--seconds"),
    (["--seconds", "100", "--fps", "1000"], "frames"),
    (["--max-vertices", "0"], "--max-vertices"), (["--max-vertices", "-3"], "--max-vertices"),
    (["--poisson", "0.5"], "--poisson"), (["--poisson", "nan"], "--poisson"),
    (["--thickness", "0"], "--thickness"), (["--thickness", "inf"], "--thickness"),
    (["--young", "0"], "--young"), (["--gust", "nan"], "--gust"), (["--pin", "-5"], "--pin"),
    (["--push", "top:1,2,3@nan"], "--push"), (["--drop", "nan"], "--drop"),
    (["--size", "1e-9"], "--size"), (["--friction", "inf"], "--friction"),
    (["--cells", "0,0,0"], "--cells"), (["--cells", "a,b,c"], "--cells"),
    (["--pin", "y>-1"], "holds all"),
]
PREVIEW = [
    (["--azimuth", "nan"], "--azimuth"), (["--azimuth", "inf"], "--azimuth"),
    (["--elevation", "91"], "--elevation"), (["--elevation", "nan"], "--elevation"),
    (["--width", "0"], "--width"), (["--height", "100000"], "--height"),
    (["--fps", "0"], "--fps"), (["--fps", "1e9"], "--fps"), (["--at", "nan"], "--at"),
    (["--at", "-1"], "--at"),
]
FIT = [
    (["--steps", "0"], "--steps"), (["--points", "0"], "--points"),
    (["--samples", "0"], "--samples"), (["--seed", "-1"], "--seed"),
    (["--seconds", "inf"], "--seconds"), (["--fps", "nan"], "--fps"),
    (["--stiffness", "nan"], "--stiffness"), (["--size", "0"], "--size"),
    (["--push", "top:0,0,1@-3"], "--push"),
]
GENERATE = [
    (["--count", "0"], "--count"), (["--count", "-5"], "--count"),
    (["--seconds", "inf"], "--seconds"), (["--fps", "1e9"], "--fps"),
    (["--seconds", "100", "--fps", "1000"], "frames"), (["--workers", "0"], "--workers"),
    (["--interior-pins", "2"], "--interior-pins"), (["--seed", "-1"], "--seed"),
]
TRAIN = [
    (["--lr", "nan"], "--lr"), (["--lr", "0"], "--lr"), (["--steps", "0"], "--steps"),
    (["--batch", "0"], "--batch"), (["--seed", str(2**70)], "--seed"),
    (["--val-every", "0"], "--val-every"), (["--workers", "-1"], "--workers"),
]
EVAL = [
    (["--seconds", "inf"], "--seconds"), (["--pairs", "0"], "--pairs"),
    (["--seed", "-1"], "--seed"), (["--rollouts", "-1"], "--rollouts"),
]
CASES = ([(A + a, n) for a, n in ANIMATE] + [(S + a, n) for a, n in SIMULATE]
         + [(P + a, n) for a, n in PREVIEW] + [(F + a, n) for a, n in FIT]
         + [(G + a, n) for a, n in GENERATE] + [(T + a, n) for a, n in TRAIN]
         + [(E + a, n) for a, n in EVAL])


@pytest.mark.parametrize("args, needle", CASES,
                         ids=[" ".join(a[:1] + a[4 if a[0] != "dataset" else 3:])
                              for a, _ in CASES])
def test_a_hostile_option_is_one_line_and_touches_nothing(tmp_path, args, needle):
    run_hostile(tmp_path, args, needle)


def test_there_are_enough_cases():
    assert len(CASES) >= 120


# --- every numeric option has a range ---------------------------------------------------------

def _commands(typer_app: typer.Typer):
    for info in typer_app.registered_commands:
        yield info.callback
    for group in typer_app.registered_groups:
        yield from _commands(group.typer_instance)


def _numeric(annotation) -> bool:
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated \
        else annotation
    kinds = set(typing.get_args(base)) or {base}
    return bool(kinds & {int, float}) and bool not in kinds


def test_every_numeric_option_of_every_command_has_a_range():
    """A new option cannot slip past the checks: each int or float parameter of each command
    has a rule in cli/_checks.py, and each text option holding numbers a parser there."""
    unchecked = []
    for fn in _commands(app):
        hints = typing.get_type_hints(inspect.unwrap(fn), include_extras=True)
        for name, annotation in hints.items():
            if name != "return" and _numeric(annotation) and rule(fn.__name__, name) is None:
                unchecked.append(f"{fn.__name__} --{name}")
    assert not unchecked, unchecked
    assert {"gravity", "velocity", "spin", "wind", "pin", "push"} <= set(TEXTS)


@pytest.mark.parametrize("command, limits", [
    ("animate", ["20,000 frames", "a whole number from 0 to 4,294,967,295", "below 5,000,000",
                 "up to 1,500,000 triangles"]),
    ("simulate", ["20,000 frames", "a whole number from 100 to 100,000"]),
    ("preview", ["a number from -90 to 90", "a whole number from 16 to 8,192"]),
    ("dataset generate", ["20,000 frames", "a number from 0 to 1"]),
])
def test_help_states_the_limits(command, limits):
    result = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.replace("│", " ").split())
    for words in limits:
        assert words in text, words


# --- a bug is exit 2, with or without its traceback -------------------------------------------

@pytest.mark.parametrize("traceback", ["", "1"])
def test_an_internal_error_exits_2_with_or_without_the_traceback(tmp_path, monkeypatch,
                                                                 traceback):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("neurok_cli.sim.generate.generate", broken)
    result = runner.invoke(app, ["dataset", "generate", str(tmp_path / "ds")],
                           env={"NEUROK_TRACEBACK": traceback})
    assert result.exit_code == 2, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("neurok: internal error: ZeroDivisionError: a bug")
    assert ("Traceback" in result.stderr) == bool(traceback)
