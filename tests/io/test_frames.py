"""Per-frame OBJ/PLY sequences: written atomically, read back on the same topology."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.errors import InputError, UsageError
from neurok_cli.io.frames import frame_files, frame_info, read_frames, write_frames
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


def test_a_folder_records_its_frame_rate_and_up_axis(tmp_path):
    """OBJ and PLY carry neither: frames.json does, and preview, fit and info read it."""
    from neurok_cli.io.describe import describe, summary_rows
    from neurok_cli.render.export import export_motion
    from neurok_cli.render.preview import PreviewConfig, _load_motion

    teapot = load_mesh(asset_path("teapot"))  # STL: +Z up
    assert teapot.up == "z"
    frames = wobble(teapot.vertices, 3)
    export_motion(teapot, [frames], tmp_path / "seq", fps=24.0)
    assert frame_info(tmp_path / "seq") == {"fps": 24.0, "up": "z"}
    # preview turns the frames upright and plays them at 24 fps without being told
    _, told, fps, _ = _load_motion(PreviewConfig(tmp_path / "seq", tmp_path / "o.mp4", up="z",
                                                       fps=24.0))
    _, found, fps_found, _ = _load_motion(PreviewConfig(tmp_path / "seq", tmp_path / "o.mp4"))
    assert fps_found == fps == 24.0
    for a, b in zip(told, found):
        np.testing.assert_array_equal(a, b)
    # upright: the file's z is the height
    assert np.ptp(found[0][0][:, 1]) == pytest.approx(np.ptp(frames[0][:, 2]), rel=1e-6)
    info = describe(tmp_path / "seq")
    assert info["up"] == "z" and info["fps"] == 24.0 and info["frames"] == 3
    assert dict(summary_rows(info))["up axis"].startswith("z (as frames.json records")
    assert describe(tmp_path / "seq", up="y")["up"] == "y"  # --up still decides
    # a folder from elsewhere has none: the old defaults
    (tmp_path / "seq" / "frames.json").unlink()
    assert frame_info(tmp_path / "seq") == {}
    assert _load_motion(PreviewConfig(tmp_path / "seq", tmp_path / "o.mp4"))[2] == 30.0


@pytest.mark.parametrize("text, needle", [("{", "not valid JSON"), ('{"fps": -1}', "fps"),
                                          ('{"up": "x"}', "up"), ("[1]", "JSON object")])
def test_a_broken_frames_json_is_a_clear_error(tmp_path, text, needle):
    asset = load_mesh(asset_path("teapot"))
    write_frames(asset, wobble(asset.vertices, 2), tmp_path / "seq", fmt="ply")
    (tmp_path / "seq" / "frames.json").write_text(text)
    with pytest.raises(InputError, match=needle):
        frame_info(tmp_path / "seq")
