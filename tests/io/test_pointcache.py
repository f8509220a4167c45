"""MDD and PC2 point caches: the bytes as the formats define them, read back exactly, in the
vertex order an importer gives the input file."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.errors import InputError
from neurok_cli.io.frames import read_frames
from neurok_cli.io.mesh import load_mesh
from neurok_cli.io.pointcache import cache_order, read_mdd, read_pc2, write_mdd, write_pc2
from neurok_cli.render.export import ExportOptions, export_motion
from tests.conftest import assert_one_error_line, asset_path, wobble

runner = CliRunner()


def seamed_obj(path):
    """A UV-mapped square pyramid whose base is a separate UV island: 5 'v' records, more
    render vertices (the loader splits them at the seams), and an unused last record."""
    path.write_text(
        "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nv 0.5 1 0.5\nv 9 9 9\n"
        "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\nvt 0.2 0.2\nvt 0.8 0.2\n"
        "f 1/1 3/3 2/2\nf 1/1 4/4 3/3\n"
        "f 1/6 2/7 5/5\nf 2/6 3/7 5/5\nf 3/6 4/7 5/5\nf 4/6 1/7 5/5\n")
    return path


def test_mdd_bytes_are_big_endian_frames_points_times_then_positions(tmp_path):
    frames = np.random.default_rng(0).normal(size=(4, 7, 3)) * 100
    write_mdd(frames, tmp_path / "a.mdd", fps=24)
    data = (tmp_path / "a.mdd").read_bytes()
    assert len(data) == 8 + 4 * 4 + 4 * 7 * 3 * 4
    assert struct.unpack(">ii", data[:8]) == (4, 7)
    assert struct.unpack(">4f", data[8:24]) == pytest.approx([0, 1 / 24, 2 / 24, 3 / 24])
    np.testing.assert_array_equal(np.frombuffer(data[24:], ">f4").reshape(4, 7, 3),
                                  frames.astype(np.float32))
    times, back = read_mdd(tmp_path / "a.mdd")
    np.testing.assert_array_equal(back, frames.astype(np.float32))
    np.testing.assert_array_equal(times, (np.arange(4) / 24).astype(np.float32))


def test_pc2_bytes_are_little_endian_with_the_pointcache2_header(tmp_path):
    frames = np.random.default_rng(1).normal(size=(5, 3, 3))
    write_pc2(frames, tmp_path / "a.pc2")
    data = (tmp_path / "a.pc2").read_bytes()
    assert data[:12] == b"POINTCACHE2\0"  # what Blender's Mesh Cache and 3ds Max look for
    assert struct.unpack("<iiffi", data[12:32]) == (1, 3, 0.0, 1.0, 5)
    assert len(data) == 32 + 5 * 3 * 3 * 4
    np.testing.assert_array_equal(np.frombuffer(data[32:], "<f4").reshape(5, 3, 3),
                                  frames.astype(np.float32))
    start, rate, back = read_pc2(tmp_path / "a.pc2")
    assert (start, rate) == (0.0, 1.0)
    np.testing.assert_array_equal(back, frames.astype(np.float32))


def test_a_cut_or_foreign_file_is_refused(tmp_path):
    write_pc2(np.zeros((2, 3, 3)), tmp_path / "a.pc2")
    write_mdd(np.zeros((2, 3, 3)), tmp_path / "a.mdd", fps=30)
    for name, read in (("a.pc2", read_pc2), ("a.mdd", read_mdd)):
        cut = tmp_path / f"cut_{name}"
        cut.write_bytes((tmp_path / name).read_bytes()[:-5])
        with pytest.raises(InputError, match="not a complete point cache"):
            read(cut)
    (tmp_path / "x.pc2").write_bytes(b"POINTCACHE3\0" + bytes(40))
    with pytest.raises(InputError, match="not a PC2"):
        read_pc2(tmp_path / "x.pc2")


def test_a_failed_write_leaves_no_file(tmp_path):
    bad = np.array([[["1", "2", "x"]]], dtype=object)  # fails after the header is written
    for write, name in ((lambda p: write_pc2(bad, p), "b.pc2"),
                        (lambda p: write_mdd(bad, p, fps=30), "b.mdd")):
        with pytest.raises(ValueError):
            write(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_an_obj_cache_follows_the_files_v_records_not_its_seams(tmp_path):
    asset = load_mesh(seamed_obj(tmp_path / "p.obj"))
    assert len(asset.vertices) > 5  # split at the seams
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1], [0.5, 1, 0.5]], float)
    frames = wobble(asset.vertices, frames=6)  # a function of position: seams move together
    for fmt in ("mdd", "pc2"):
        out = export_motion(asset, [frames], tmp_path / f"p.{fmt}", fps=30,
                            options=ExportOptions())
        assert out.details == {"frames": 6, "points": 5}
        back = (read_mdd if fmt == "mdd" else read_pc2)(tmp_path / f"p.{fmt}")[-1]
        np.testing.assert_array_equal(back, wobble(v, frames=6).astype(np.float32))


def test_an_stl_cache_has_its_distinct_corners_in_first_seen_order():
    asset = load_mesh(asset_path("teapot"))
    order = cache_order(asset)
    corners = asset.vertices
    seen = {}
    for i, c in enumerate(map(tuple, corners)):
        seen.setdefault(c, i)
    assert order.tolist() == list(seen.values())
    assert len(order) < len(corners)  # STL repeats a corner for every triangle


def test_other_files_keep_the_assets_own_order():
    asset = load_mesh(asset_path("truck"))
    np.testing.assert_array_equal(cache_order(asset), np.arange(len(asset.vertices)))


def test_simulate_writes_caches_equal_to_its_frames(tmp_path):
    src = seamed_obj(tmp_path / "p.obj")
    base = ["simulate", str(src), "--seconds", "0.3", "--units", "m", "--material", "soft"]
    for out in ("f", "c.mdd", "c.pc2"):
        result = runner.invoke(app, [*base, "-o", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
    asset, frames = read_frames(tmp_path / "f")  # frame 0's OBJ holds the render vertices
    times, mdd = read_mdd(tmp_path / "c.mdd")
    _, _, pc2 = read_pc2(tmp_path / "c.pc2")
    np.testing.assert_array_equal(mdd, pc2)  # the engine is deterministic
    assert mdd.shape == (10, 5, 3) and times[-1] == pytest.approx(9 / 30)
    order = cache_order(load_mesh(src))
    np.testing.assert_allclose(mdd, frames[:, order], atol=1e-5)
    assert "mdd, " in result.output or "pc2, " in result.output


def test_a_cache_in_a_missing_folder_is_one_line(tmp_path):
    src = seamed_obj(tmp_path / "p.obj")
    result = runner.invoke(app, ["simulate", str(src), "-o", str(tmp_path / "no" / "c.pc2")])
    assert_one_error_line(result, "does not exist")
