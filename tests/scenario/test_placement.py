"""The ground where the asset stands in its file (or at --ground-at): a drop starts above it
and lands back there, in ``neurok simulate`` and ``neurok animate``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.frames import read_frames
from neurok_cli.io.mesh import canonical_frame, load_mesh
from neurok_cli.scenario.placement import physics_offsets, place_ground
from tests.conftest import assert_one_error_line, asset_path

runner = CliRunner()


def box_obj(path: Path, low: tuple[float, float, float], size: tuple[float, float, float]
            ) -> Path:
    """A closed box with its lowest corner at ``low``, as an OBJ."""
    corners = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], float)
    v = np.asarray(low) + corners * np.asarray(size)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in v.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}\nf {a + 1} {c + 1} {d + 1}" for a, b, c, d in quads]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(*args) -> tuple[dict, np.ndarray]:
    """Run a command to a frame folder with --json; its report and (T, N, 3) file frames."""
    result = runner.invoke(app, [*map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    out = Path(args[args.index("-o") + 1])
    return json.loads(result.output), read_frames(out)[1]


def test_the_ground_is_the_lowest_point_or_the_given_height_in_file_units(tmp_path):
    src = box_obj(tmp_path / "b.obj", (1.0, 2.0, 3.0), (0.4, 0.6, 0.2))
    frame = canonical_frame(load_mesh(src), size=3.0)  # 3 m across: 5 m per file unit
    surface = frame.to_canonical(load_mesh(src).welded().vertices) * frame.size_m
    lowest = place_ground(frame, surface)
    assert lowest.at == pytest.approx(2.0) and lowest.axis == "y"
    assert lowest.height_m == pytest.approx(surface[:, 1].min())
    given = place_ground(frame, surface, 1.5)  # half a file unit below: 2.5 m in metres
    assert given.height_m == pytest.approx(surface[:, 1].min() - 2.5)
    lift, back = physics_offsets(surface, given, 0.7, has_ground=True)
    assert (surface[:, 1] + lift).min() == pytest.approx(0.7)  # 0.7 m over the physics ground
    assert -back == pytest.approx(given.height_m)  # whose y = 0 goes back to the user's ground
    lift, back = physics_offsets(surface, given, 0.7, has_ground=False)
    assert lift == back  # no ground: the frames go back to where the asset stands
    # a Z-up file's ground is along its z
    frame_z = canonical_frame(load_mesh(src, up="z"), size=3.0)
    surface_z = frame_z.to_canonical(load_mesh(src).welded().vertices) * frame_z.size_m
    assert place_ground(frame_z, surface_z).at == pytest.approx(3.0)
    assert place_ground(frame_z, surface_z, 2.0).height_m == pytest.approx(
        surface_z[:, 1].min() - 5.0)


def test_a_dropped_box_lands_where_it_stands_in_its_file(tmp_path):
    src = box_obj(tmp_path / "b.obj", (0.3, -1.2, 0.1), (0.5, 0.3, 0.4))
    report, frames = run("simulate", src, "-o", tmp_path / "f", "--seconds", "1.5",
                         "--units", "m")
    size = 0.5
    low = frames[:, :, 1].min(axis=1)
    assert report["ground"] == {"axis": "y", "at": pytest.approx(-1.2), "from":
                                "its lowest point", "start_above_m": pytest.approx(0.25)}
    assert low[0] == pytest.approx(-1.2 + 0.5 * size, abs=1e-6)  # dropped from half its size
    assert np.abs(frames[-1] - frames[-2]).max() < 0.01 * size  # settled ...
    assert abs(low[-1] - -1.2) < 0.01 * size  # ... on its file's floor within 1 % of its size
    # seen from above it lands where it was (squashed a little): only the height changed
    rest = load_mesh(src).vertices
    assert np.abs(frames[-1][:, [0, 2]] - rest[:, [0, 2]]).max() < 0.03 * size


def test_ground_at_in_a_z_up_files_units_and_axis(tmp_path):
    """--ground-at is read as the file's own numbers along its up axis: --units scales the
    physics, not where the ground is."""
    src = box_obj(tmp_path / "b.obj", (0.0, 0.0, 40.0), (30.0, 20.0, 10.0))  # cm, z up
    report, frames = run("simulate", src, "-o", tmp_path / "f", "--seconds", "1.5",
                         "--up", "z", "--units", "cm", "--ground-at", "25", "--drop", "0.1")
    assert report["ground"]["axis"] == "z" and report["ground"]["at"] == 25.0
    assert report["ground"]["from"] == "--ground-at"
    low = frames[:, :, 2].min(axis=1)
    assert low[0] == pytest.approx(25 + 0.1 * 30, abs=1e-4)  # --drop sizes above the ground
    assert abs(low[-1] - 25.0) < 0.01 * 30  # lands on it, 15 cm below where the file had it


def test_without_a_ground_the_motion_starts_in_place(tmp_path):
    src = box_obj(tmp_path / "b.obj", (0.0, 2.0, 0.0), (0.5, 0.3, 0.4))
    report, frames = run("simulate", src, "-o", tmp_path / "f", "--seconds", "0.1",
                         "--units", "m", "--no-ground")
    assert report["ground"] is None
    np.testing.assert_allclose(frames[0], load_mesh(src).vertices, atol=1e-6)


def test_the_teapot_rests_on_its_files_floor(tmp_path):
    """A shared Z-up STL, 63 units across, read as an everyday 0.5 m object."""
    src = asset_path("teapot")
    report, frames = run("simulate", src, "-o", tmp_path / "f", "--seconds", "2")
    rest = load_mesh(src).vertices
    floor, scale = rest[:, 2].min(), np.ptp(rest, axis=0).max()
    assert report["ground"]["axis"] == "z" and report["ground"]["at"] == pytest.approx(floor)
    low = frames[:, :, 2].min(axis=1)
    assert low[0] > floor + 0.25 * scale
    assert abs(low[-1] - floor) < 0.01 * scale


def test_animate_drops_onto_the_given_ground_and_says_where_it_is(tmp_path):
    src = box_obj(tmp_path / "b.obj", (0.0, 1.0, 0.0), (0.4, 0.3, 0.35))
    out = tmp_path / "f"
    result = runner.invoke(app, ["animate", str(src), "-o", str(out), "--seconds", "2",
                                 "--units", "m", "--ground-at", "0.8"])
    assert result.exit_code == 0, result.output
    assert "y = 0.8 in the file (--ground-at); starts 0.2 m above" in " ".join(
        result.output.split())
    frames = read_frames(out)[1]
    low = frames[:, :, 1].min(axis=1)
    assert low[0] == pytest.approx(0.8 + 0.5 * 0.4, abs=1e-4)
    assert abs(low[-1] - 0.8) < 0.01 * 0.4


@pytest.mark.parametrize("value", ["nan", "1e9"])
def test_a_ground_at_no_height_is_one_line(tmp_path, value):
    src = box_obj(tmp_path / "b.obj", (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    for command in ("simulate", "animate"):
        result = runner.invoke(app, [command, str(src), "-o", str(tmp_path / "o.glb"),
                                     "--ground-at", value])
        assert_one_error_line(result, "--ground-at")
        assert not (tmp_path / "o.glb").exists()
