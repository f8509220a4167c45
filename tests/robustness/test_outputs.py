"""Hostile outputs: no output option deletes or overwrites what the user did not name.

A frame folder goes only into a new or empty folder or one neurok wrote (its frames.json and
nothing else); ``-o ''`` and the current folder are refused; a missing, unwritable or
not-a-folder parent is one line. Every case runs in ``tmp_path`` as the current folder and
asserts exit 1, one line, and every file there unchanged.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from neurok_cli.cli import app
from neurok_cli.errors import OutputError, UsageError
from neurok_cli.io.atomic import atomic_path
from neurok_cli.io.frames import check_frame_folder, write_frames
from neurok_cli.io.mesh import load_mesh
from tests.robustness.test_options import run_hostile, runner, snapshot, workspace


def _ours(keep: Path, extra: str | None = None, info: bool = True) -> None:
    """A frame folder as neurok writes it, with ``extra`` (a user's file or folder) added."""
    ours = keep / "ours"
    ours.mkdir()
    (ours / "tetra_0000.obj").write_text("v 0 0 0\n")
    (ours / "tetra.mtl").write_text("newmtl m0\n")
    if info:
        (ours / "frames.json").write_text('{"up": "y"}\n')
    if extra == "file":
        (ours / "precious.txt").write_text("mine\n")
    elif extra == "folder":
        (ours / "notes").mkdir()
        (ours / "notes" / "a.txt").write_text("mine\n")


SETUPS = {
    "none": lambda keep: None,
    "ours+file": lambda keep: _ours(keep, "file"),
    "ours+folder": lambda keep: _ours(keep, "folder"),
    "frames without frames.json": lambda keep: _ours(keep, info=False),
    "folder named .glb": lambda keep: (keep / "dir.glb").mkdir(),
    "link to a folder": lambda keep: (keep / "link").symlink_to(keep),
}

M = "{mesh}"
CASES = [
    (["animate", M, "-o", ""], "none", "current folder"),
    (["animate", M, "-o", "."], "none", "current folder"),
    (["animate", M, "-o", ".."], "none", "current folder"),
    (["animate", M, "-o", "/"], "none", "current folder"),
    (["simulate", M, "-o", ""], "none", "current folder"),
    (["animate", M, "-o", "{keep}"], "none", "did not write"),
    (["animate", M, "-o", "{keep}", "--format", "ply"], "none", "did not write"),
    (["simulate", M, "-o", "{keep}"], "none", "did not write"),
    (["simulate", M, "-o", "{keep}", "--format", "obj"], "none", "did not write"),
    (["animate", M, "-o", "{tmp}"], "none", "current folder"),
    (["animate", M, "-o", "{keep}/.."], "none", "current folder"),
    (["fit", M, "-o", "{json}", "--then-animate", "{keep}"], "none", "did not write"),
    (["animate", M, "-o", "{keep}/ours"], "ours+file", "precious.txt"),
    (["simulate", M, "-o", "{keep}/ours"], "ours+file", "precious.txt"),
    (["animate", M, "-o", "{keep}/ours"], "ours+folder", "notes"),
    (["animate", M, "-o", "{keep}/ours"], "frames without frames.json", "no frames.json"),
    (["animate", M, "-o", "{keep}/link"], "link to a folder", "not a folder"),
    (["animate", M, "-o", "{keep}/dir.glb"], "folder named .glb", "is a folder"),
    (["preview", M, "-o", "{keep}/dir.glb"], "folder named .glb", "is a folder"),
    (["animate", M, "-o", "{keep}/precious.txt"], "none", "output format"),
    (["animate", M, "-o", "{keep}/precious.txt/x.glb"], "none", "is a file"),
    (["simulate", M, "-o", "{keep}/precious.txt/frames"], "none", "is a file"),
    (["animate", M, "-o", "{keep}/missing/x.glb"], "none", "does not exist"),
    (["animate", M, "-o", "{keep}/missing/frames"], "none", "does not exist"),
    (["simulate", M, "-o", "{keep}/missing/x.mp4"], "none", "does not exist"),
    (["preview", M, "-o", "{keep}/missing/x.mp4"], "none", "does not exist"),
    (["fit", M, "-o", "{keep}/missing/x.json"], "none", "does not exist"),
    (["fit", M, "-o", "{json}", "--then-animate", "{keep}/missing/a.glb"], "none",
     "does not exist"),
    (["eval", "--data", "{data}", "--json", "{keep}/missing/r.json"], "none", "does not exist"),
    (["eval", "--data", "{data}", "--plot", "{keep}/missing/r.png"], "none", "does not exist"),
    (["dataset", "generate", "{keep}/missing/ds"], "none", "does not exist"),
    (["dataset", "import", M, "{keep}/missing/ds"], "none", "does not exist"),
]
if sys.platform.startswith("linux") and Path("/proc/self").is_dir():  # unwritable for root too
    CASES += [
        (["animate", M, "-o", "/proc/neurok.glb"], "none", "cannot write"),
        (["simulate", M, "-o", "/proc/neurok_frames"], "none", "cannot write"),
        (["preview", M, "-o", "/proc/neurok.mp4"], "none", "cannot write"),
        (["fit", M, "-o", "/proc/neurok.json"], "none", "cannot write"),
    ]


@pytest.mark.parametrize("args, setup, needle", CASES,
                         ids=[f"{a[0]} {' '.join(a[2:])} ({s})" for a, s, _ in CASES])
def test_a_hostile_output_is_one_line_and_deletes_nothing(tmp_path, monkeypatch, args, setup,
                                                          needle):
    monkeypatch.chdir(tmp_path)
    run_hostile(tmp_path, args, needle, SETUPS[setup])
    assert (tmp_path / "keep" / "precious.txt").read_text() == "not yours\n"


# --- the library, under the command line -----------------------------------------------------

def _asset(tmp_path: Path):
    names = workspace(tmp_path)
    asset = load_mesh(names["mesh"])
    frames = np.repeat(asset.vertices[None], 3, axis=0)
    return asset, frames, Path(names["keep"])


def test_write_frames_never_replaces_a_users_folder(tmp_path):
    asset, frames, keep = _asset(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match="did not write"):
        write_frames(asset, frames, keep)
    assert snapshot(tmp_path) == before


def test_write_frames_rewrites_its_own_folder_and_an_empty_one(tmp_path):
    asset, frames, keep = _asset(tmp_path)
    (keep / "empty").mkdir()
    write_frames(asset, frames, keep / "empty")
    write_frames(asset, frames[:2], keep / "empty")  # ours now: replaced whole
    assert sorted(p.name for p in (keep / "empty").iterdir()) == [
        "frames.json", "tetra.mtl", "tetra_0000.obj", "tetra_0001.obj"]
    write_frames(asset, frames, keep / "new")
    assert len(list((keep / "new").glob("*.obj"))) == 3
    assert not [p for p in keep.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_the_current_folder_is_never_a_frame_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("", ".", "..", str(tmp_path), str(tmp_path.parent)):
        with pytest.raises(OutputError, match="current folder"):
            check_frame_folder(name)
    assert not [p for p in tmp_path.parent.iterdir() if p.name.endswith(".old")]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_an_atomic_write_where_nothing_can_be_written_is_an_output_error():
    with pytest.raises(OutputError, match="cannot write"):
        with atomic_path("/proc/neurok-test.json") as tmp:
            tmp.write_text("{}")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["r.json"]


# --- bounded work: sizes and integration steps --------------------------------------------------

def test_an_object_too_small_in_its_units_is_refused_before_integrating(tmp_path):
    """0.4 mm (a 0.4-unit file read in mm): one line naming the size and --size."""
    run_hostile(tmp_path, ["animate", "{mesh}", "-o", "{out}", "--units", "mm"], "0.0004 m")


def test_a_rollout_past_its_step_budget_is_one_line_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setattr("neurok_cli.model.dynamics.rollout.MAX_STEPS", 10)
    run_hostile(tmp_path, ["animate", "{mesh}", "-o", "{out}", "--seconds", "1", "--space",
                           "learned"], "integration steps")


def test_a_mesh_past_the_triangle_limit_is_refused_before_simulating(tmp_path, monkeypatch):
    monkeypatch.setattr("neurok_cli.limits.MAX_FACES", 3)
    run_hostile(tmp_path, ["simulate", "{mesh}", "-o", "{out}"], "4 triangles is more than")


def test_the_step_budget_refuses_a_nanometre_object_at_once():
    from neurok_cli.model.dynamics.rollout import _step_budget

    with pytest.raises(UsageError, match="too small or too stiff"):
        _step_budget(1.0 / 2e-18, 2e-18)  # a 1e-9 m mesh's step: 5e17 steps for a second


def test_frames_json_of_a_refused_folder_is_left_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = workspace(tmp_path)
    _ours(Path(names["keep"]), "file")
    info = Path(names["keep"]) / "ours" / "frames.json"
    result = runner.invoke(app, ["simulate", names["mesh"], "-o", str(info.parent),
                                 "--seconds", "0.1"])
    assert result.exit_code == 1 and json.loads(info.read_text()) == {"up": "y"}


def test_simulate_writes_into_an_empty_folder_then_rewrites_its_own(tmp_path):
    names = workspace(tmp_path)
    folder = Path(names["keep"]) / "frames"
    folder.mkdir()
    for seconds in ("0.1", "0.05"):
        result = runner.invoke(app, ["simulate", names["mesh"], "-o", str(folder), "--seconds",
                                     seconds, "--size", "0.4"])
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in folder.iterdir()) == [
        "frames.json", "tetra.mtl", "tetra_0000.obj", "tetra_0001.obj"]
    assert (Path(names["keep"]) / "precious.txt").is_file()


def test_a_write_killed_outright_leaves_no_temporary_file_past_the_next_write(tmp_path):
    """A run killed with SIGKILL while writing left .NAME.XXXX.part.glb (35-50 MB) beside
    the target for good; the next write of that target now removes it, and leaves alone
    one a live write holds."""
    import subprocess
    import sys

    from neurok_cli.io.atomic import _remove_stale, atomic_path, is_partial

    target = tmp_path / "clip.glb"
    code = ("import os, sys\nfrom neurok_cli.io.atomic import atomic_path\n"
            "with atomic_path(sys.argv[1]) as tmp:\n"
            "    tmp.write_bytes(b'x' * 1000)\n"
            "    os.kill(os.getpid(), 9)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(target)], timeout=60)
    assert proc.returncode == -9
    left = [p for p in tmp_path.iterdir() if is_partial(p)]
    assert len(left) == 1 and not target.exists()
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"glTF")
        _remove_stale(target)  # (another run's look, while this one writes)
        assert tmp.exists()
    assert target.read_bytes() == b"glTF"
    assert [p for p in tmp_path.iterdir() if is_partial(p)] == []
