"""Per-frame OBJ/PLY sequences: written atomically, read back on the same topology."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.errors import InputError, UsageError
from neurok_cli.io.frames import frame_files, read_frames, write_frames
from neurok_cli.io.mesh import load_mesh
from tests.conftest import asset_path, wobble


@pytest.mark.parametrize("fmt", ["obj", "ply"])
def test_round_trip(tmp_path, fmt):
    asset = load_mesh(asset_path("capsule"))
    frames = wobble(asset.vertices, 4)
    files = write_frames(asset, frames, tmp_path / "seq", fmt=fmt)
    assert [f.name for f in files] == [f"capsule_{i:04d}.{fmt}" for i in range(4)]
    first, back = read_frames(tmp_path / "seq")
    assert back.shape == frames.shape
    scale = np.ptp(asset.vertices, axis=0).max()
    assert np.abs(back - frames).max() <= 1e-6 * scale
    if fmt == "obj":  # UVs, material and texture come along
        assert first.parts[0].uvs is not None
        np.testing.assert_allclose(first.parts[0].uvs, asset.parts[0].uvs, atol=1e-6)
        assert first.parts[0].material.texture == asset.parts[0].material.texture


def test_multi_part_obj_frames_keep_parts(tmp_path):
    asset = load_mesh(asset_path("chair"))
    write_frames(asset, wobble(asset.vertices, 2), tmp_path / "chair")
    first, _ = read_frames(tmp_path / "chair")
    assert [len(p.faces) for p in first.parts] == [len(p.faces) for p in asset.parts]


def test_frames_sort_numerically(tmp_path):
    asset = load_mesh(asset_path("teapot"))
    frames = wobble(asset.vertices, 12)
    write_frames(asset, frames, tmp_path / "t", fmt="ply")
    names = [f.name for f in frame_files(tmp_path / "t")]
    assert names[-1] == "teapot_0011.ply" and names[1] == "teapot_0001.ply"


def test_errors(tmp_path):
    asset = load_mesh(asset_path("teapot"))
    with pytest.raises(UsageError, match="obj, ply"):
        write_frames(asset, wobble(asset.vertices, 2), tmp_path / "x", fmt="fbx")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no numbered"):
        read_frames(tmp_path / "empty")
    write_frames(asset, wobble(asset.vertices, 2), tmp_path / "mixed", fmt="ply")
    other = load_mesh(asset_path("penguin"))
    write_frames(other, wobble(other.vertices, 1), tmp_path / "p", fmt="ply")
    (tmp_path / "p" / "penguin_0000.ply").rename(tmp_path / "mixed" / "teapot_0002.ply")
    with pytest.raises(InputError, match="one topology"):
        read_frames(tmp_path / "mixed")


def test_failed_write_keeps_the_old_folder(tmp_path):
    asset = load_mesh(asset_path("teapot"))
    write_frames(asset, wobble(asset.vertices, 2), tmp_path / "seq", fmt="ply")

    def boom(i):
        if i == 2:
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_frames(asset, wobble(asset.vertices, 5), tmp_path / "seq", fmt="ply",
                     progress=boom)
    assert len(frame_files(tmp_path / "seq")) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seq"]
