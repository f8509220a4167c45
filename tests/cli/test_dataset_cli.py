"""``neurok dataset import`` and ``neurok dataset info`` as a user meets them."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from tests.conftest import assert_one_error_line

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, list(args))


def _anime(path, frames: int = 4):
    """A tetrahedron moving along x: frames (T, 4, 3) as a DeformingThings4D file."""
    v0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], "<f4")
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], "<i4")
    offsets = np.zeros((frames - 1, 4, 3), "<f4")
    offsets[..., 0] = 0.1 * np.arange(1, frames)[:, None]
    path.write_bytes(struct.pack("<3i", frames, 4, 4) + v0.tobytes() + faces.tobytes()
                     + offsets.tobytes())
    return path


@pytest.mark.parametrize("cmd", [["dataset"], ["dataset", "import"], ["dataset", "info"]])
def test_help(cmd):
    result = _run(*cmd, "--help")
    assert result.exit_code == 0 and "Usage" in result.output


def test_import_then_info_table_and_json(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _anime(src / "hop.anime", 4)
    _anime(src / "run.anime", 6)
    ds = tmp_path / "ds"
    result = _run("dataset", "import", str(src), str(ds), "--category", "animals",
                  "--fps", "24", "--size", "2")
    assert result.exit_code == 0, result.output
    assert "imported 2 sequences" in result.stdout
    again = _run("dataset", "import", str(src), str(ds), "--json", "--category", "animals")
    assert json.loads(again.stdout)["skipped"] == 2

    result = _run("dataset", "info", str(ds))
    assert result.exit_code == 0, result.output
    assert "animals" in result.stdout and "Sequences" in result.stdout
    assert "made by `dataset import`" in result.stdout
    data = json.loads(_run("dataset", "info", str(ds), "--json", "--no-validate").stdout)
    assert data["counts"] == {"train": {"animals": 2}}
    assert data["frames"] == {"min": 4, "mean": 5, "max": 6} and data["fps"] == {"24": 2}
    assert data["validated"] is False


def test_info_fails_on_invalid_files(tmp_path):
    src = _anime(tmp_path / "hop.anime")
    ds = tmp_path / "ds"
    assert _run("dataset", "import", str(src), str(ds)).exit_code == 0
    seq = ds / "train" / "hop.npz"
    seq.write_bytes(seq.read_bytes()[:100])
    result = _run("dataset", "info", str(ds))
    assert_one_error_line(result, "1 of 1 sequence files are invalid")
    assert "hop.npz" in result.stdout and "Invalid files" in result.stdout
    result = _run("dataset", "info", str(ds), "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["invalid"][0]["file"] == (
        "train/hop.npz")


def test_bad_input_one_line_no_traceback(tmp_path):
    cut = _anime(tmp_path / "cut.anime")
    cut.write_bytes(cut.read_bytes()[:-6])
    ds = str(tmp_path / "ds")
    cases = [
        (["import", str(tmp_path / "nope.anime"), ds], "no such file"),
        (["import", str(cut), ds], "truncated"),
        (["import", str(cut), ds, "--up", "x"], "--up must be one of y, z"),
        (["import", str(cut), ds, "--split", "dev"], "--split must be one of train"),
        (["info", str(tmp_path)], "not a 4D dataset"),
    ]
    for args, needle in cases:
        assert_one_error_line(_run("dataset", *args), needle)
    assert not (tmp_path / "ds" / "train").exists() or not any((tmp_path / "ds" / "train")
                                                               .iterdir())
