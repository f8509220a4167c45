"""Importers of external 4D data: glTF animations, OBJ/PLY frame folders, DeformingThings4D
.anime files; welding, units, and resumable writing into a dataset."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pytest
import trimesh

from neurok_cli.data.format import Header, load_sequence, read_header, write_header
from neurok_cli.data.imports import (
    find_sources,
    import_anime,
    import_frames,
    import_gltf,
    import_path,
    read_anime,
)
from neurok_cli.errors import InputError, UsageError
from neurok_cli.io.frames import write_frames
from neurok_cli.io.gltf import write_animated
from neurok_cli.io.mesh import load_mesh, weld
from tests.conftest import asset_path, wobble


# --- synthetic inputs -----------------------------------------------------------------------
def write_anime(path: Path, frames: np.ndarray, faces: np.ndarray) -> Path:
    """A DeformingThings4D file: header, frame 0, triangles, offsets of frames 1.. from 0."""
    nf, nv, _ = frames.shape
    offsets = frames[1:] - frames[:1]
    path.write_bytes(struct.pack("<3i", nf, nv, len(faces))
                     + frames[0].astype("<f4").tobytes() + faces.astype("<i4").tobytes()
                     + offsets.astype("<f4").tobytes())
    return path


def sphere_soup(tmp_path: Path, name: str = "ball") -> Path:
    """An icosphere OBJ with every triangle on its own vertices (240 file, 42 welded)."""
    m = trimesh.creation.icosphere(subdivisions=1, radius=0.5)
    v = m.vertices[m.faces.reshape(-1)]
    f = np.arange(len(v)).reshape(-1, 3) + 1
    text = "".join(f"v {x:.9f} {y:.9f} {z:.9f}\n" for x, y, z in v)
    text += "".join(f"f {a} {b} {c}\n" for a, b, c in f)
    path = tmp_path / f"{name}.obj"
    path.write_text(text)
    return path


def animated_glb(tmp_path: Path, src: Path, motions=((6, 0.05),), fps=12.0, name="anim"):
    asset = load_mesh(src)
    out = tmp_path / f"{name}.glb"
    write_animated(asset, [wobble(asset.vertices, t, a) for t, a in motions], out, fps=fps,
                   encoding="exact")
    return asset, out


def tet():
    v0 = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3]], np.float64)
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    frames = v0[None] + 0.1 * np.arange(5)[:, None, None] * np.array([1.0, 0.5, 0.25])
    return frames, faces


# --- .anime ---------------------------------------------------------------------------------
def test_anime_round_trip(tmp_path):
    frames, faces = tet()
    path = write_anime(tmp_path / "tet.anime", frames, faces)
    back, f = read_anime(path)
    np.testing.assert_allclose(back, frames, atol=1e-6)
    np.testing.assert_array_equal(f, faces)
    (seq,) = import_anime(path, fps=24)
    assert seq.frames.shape == (5, 4, 3) and seq.fps == 24
    order = weld(frames[0], faces).index  # welding orders vertices by position
    np.testing.assert_allclose(seq.rest_vertices[order], frames[0], atol=1e-6)
    np.testing.assert_allclose(seq.frames[:, order], frames, atol=1e-6)
    np.testing.assert_array_equal(order[faces], seq.faces)
    assert seq.meta["source"] == "import" and seq.meta["animation"] == "tet"


def test_anime_z_up_and_size(tmp_path):
    frames, faces = tet()
    path = write_anime(tmp_path / "tet.anime", frames, faces)
    (seq,) = import_anime(path, up="z", size=1.5)
    seq.frames = seq.frames[:, weld(frames[0], faces).index]
    turned = np.stack([frames[..., 0], frames[..., 2], -frames[..., 1]], axis=-1)  # (x, z, -y)
    scale = 1.5 / 3.0  # the rest's largest extent is z = 3, now y
    np.testing.assert_allclose(seq.frames, turned * scale, atol=1e-6)
    assert np.ptp(seq.rest_vertices, axis=0).max() == pytest.approx(1.5)
    assert np.ptp(seq.rest_vertices, axis=0)[1] == pytest.approx(1.5)  # tallest is now +Y
    assert seq.meta["scale"] == pytest.approx(scale)


def test_anime_duplicated_vertices_are_welded(tmp_path):
    frames, faces = tet()
    frames = np.concatenate([frames, frames[:, :1]], axis=1)  # vertex 4 = vertex 0
    faces = faces.copy()
    faces[1, 0] = 4
    (seq,) = import_anime(write_anime(tmp_path / "t.anime", frames, faces))
    assert seq.rest_vertices.shape == (4, 3) and len(seq.faces) == 4


@pytest.mark.parametrize("case, needle", [
    ("short", "truncated"), ("cut", "truncated"), ("extra", "extra bytes"),
    ("header", "corrupt .anime header"), ("faces", "triangle indices"), ("nan", "NaN"),
])
def test_bad_anime(tmp_path, case, needle):
    frames, faces = tet()
    path = write_anime(tmp_path / "bad.anime", frames, faces)
    data = path.read_bytes()
    if case == "short":
        data = data[:7]
    elif case == "cut":
        data = data[:-8]
    elif case == "extra":
        data += b"\0" * 4
    elif case == "header":
        data = struct.pack("<3i", 0, 4, 4) + data[12:]
    elif case == "faces":
        data = write_anime(path, frames, faces + 3).read_bytes()
    elif case == "nan":
        data = write_anime(path, frames * np.array([np.nan, 1, 1]), faces).read_bytes()
    path.write_bytes(data)
    with pytest.raises(InputError, match=needle) as e:
        import_anime(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)


# --- glTF -----------------------------------------------------------------------------------
def test_gltf_one_sequence_per_animation_on_the_welded_surface(tmp_path):
    asset, glb = animated_glb(tmp_path, sphere_soup(tmp_path), motions=((6, 0.05), (4, 0.1)))
    seqs = import_gltf(glb)
    assert len(seqs) == 2
    welded = load_mesh(glb).welded()  # the file's own (float32) positions welded
    assert len(asset.vertices) == 240 and len(welded.index) == 240
    assert len(welded.vertices) == 42
    _, rep = np.unique(welded.index, return_index=True)  # one file vertex per welded vertex
    for seq, (t, amp) in zip(seqs, ((6, 0.05), (4, 0.1))):
        assert seq.rest_vertices.shape == (42, 3) and seq.faces.shape == (80, 3)
        assert seq.fps == pytest.approx(12.0)  # evenly spaced keys
        np.testing.assert_allclose(seq.frames, wobble(asset.vertices, t, amp)[:, rep], atol=1e-5)
        assert "seam_gap" not in seq.meta
    assert [s.meta["animation_index"] for s in seqs] == [0, 1]


def test_gltf_fps_resamples(tmp_path):
    _, glb = animated_glb(tmp_path, sphere_soup(tmp_path), motions=((7, 0.05),), fps=12.0)
    (seq,) = import_gltf(glb, fps=24)
    assert seq.fps == 24 and len(seq.frames) == 13  # 0.5 s at 24 fps, both ends


def test_spot_seams_welded(tmp_path):
    asset, glb = animated_glb(tmp_path, asset_path("spot"), motions=((3, 0.05),))
    (seq,) = import_gltf(glb)
    welded = load_mesh(glb).welded()
    assert len(asset.vertices) > 2930 and seq.rest_vertices.shape == (2930, 3)
    np.testing.assert_array_equal(seq.faces, welded.faces)
    np.testing.assert_allclose(seq.rest_vertices, welded.vertices, atol=1e-6)
    _, rep = np.unique(welded.index, return_index=True)
    np.testing.assert_allclose(seq.frames, wobble(asset.vertices, 3, 0.05)[:, rep], atol=1e-5)


def test_gltf_without_animation(tmp_path):
    glb = tmp_path / "still.glb"
    trimesh.creation.icosphere(subdivisions=1).export(glb)
    with pytest.raises(InputError, match="no animations"):
        import_gltf(glb)


# --- frame folders --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["obj", "ply"])
def test_frames_z_up_size_and_weld(tmp_path, fmt):
    asset = load_mesh(sphere_soup(tmp_path))
    motion = wobble(asset.vertices, 4)
    write_frames(asset, motion, tmp_path / "seq", fmt=fmt)
    (seq,) = import_frames(tmp_path / "seq", fps=10, up="z", size=2.0)
    assert seq.frames.shape == (4, 42, 3) and seq.fps == 10
    first = weld(motion[0], asset.faces)  # the first frame is the rest
    _, rep = np.unique(first.index, return_index=True)
    want = motion[:, rep]
    want = np.stack([want[..., 0], want[..., 2], -want[..., 1]], axis=-1)  # (x, z, -y)
    scale = 2.0 / np.ptp(motion[0], axis=0).max()
    np.testing.assert_allclose(seq.frames, want * scale, atol=1e-5)
    np.testing.assert_allclose(seq.rest_vertices, want[0] * scale, atol=1e-5)
    assert np.ptp(seq.rest_vertices, axis=0).max() == pytest.approx(2.0, rel=1e-6)
    assert seq.meta["up"] == "z"


def test_our_frame_folders_bring_their_rate_and_up_axis(tmp_path):
    teapot = load_mesh(asset_path("teapot"))  # STL: +Z up; its frames stay in the file frame
    motion = wobble(teapot.vertices, 3)
    write_frames(teapot, motion, tmp_path / "seq", fmt="ply", fps=24.0)
    (seq,) = import_frames(tmp_path / "seq")
    assert seq.fps == 24.0 and seq.meta["up"] == "z"
    assert np.ptp(seq.rest_vertices[:, 1]) == pytest.approx(np.ptp(motion[0][:, 2]),
                                                            rel=1e-5)  # upright
    (told,) = import_frames(tmp_path / "seq", fps=10, up="y")  # options still decide
    assert told.fps == 10 and told.meta["up"] == "y"
    report = import_path(tmp_path / "seq", tmp_path / "ds")
    assert report.imported == 1
    (stored,) = (tmp_path / "ds" / "train").glob("*.npz")
    assert load_sequence(stored).fps == 24.0


def test_bad_options():
    with pytest.raises(UsageError, match="up"):
        import_frames("nowhere", up="x")
    with pytest.raises(UsageError, match="size"):
        import_anime("nowhere.anime", size=-1)
    with pytest.raises(UsageError, match="fps"):
        import_gltf("nowhere.glb", fps=0)


# --- import_path ----------------------------------------------------------------------------
def _mixed_source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    frames, faces = tet()
    write_anime(src / "a" / "walk.anime", frames, faces)
    write_anime(src / "b" / "walk.anime", frames * 2, faces)  # same stem, other folder
    animated_glb(src, sphere_soup(tmp_path), motions=((3, 0.05), (2, 0.1)), name="ball")
    asset = load_mesh(sphere_soup(tmp_path, "drop"))
    write_frames(asset, wobble(asset.vertices, 3), src / "b" / "drop", fmt="ply")
    (src / "notes.txt").write_text("not data")
    return src


def test_import_folder_names_meta_and_header(tmp_path):
    src = _mixed_source(tmp_path)
    assert [k for k, _ in find_sources(src)] == ["anime", "frames", "anime", "gltf"]
    out = tmp_path / "ds"
    report = import_path(src, out, split="val", category="creatures")
    assert report.imported == 5 and report.skipped == 0
    names = sorted(p.name for p in (out / "val").iterdir())
    assert names == ["a_walk.npz", "b_walk.npz", "ball_0.npz", "ball_1.npz", "drop.npz"]
    seq = load_sequence(out / "val" / "b_walk.npz")
    assert {"source": "import", "file": "b/walk.anime", "category": "creatures",
            "animation": "walk"}.items() <= seq.meta.items()
    assert seq.fps == 30
    assert load_sequence(out / "val" / "ball_1.npz").meta["animation"] == "neurok_1"
    header = read_header(out)
    assert header.counts == {"val": {"creatures": 5}}
    assert header.generator["command"] == "dataset import"
    assert report.sources["b/drop"] == {"imported": 1, "skipped": 0}


def test_reimport_skips_and_header_merges(tmp_path):
    src = _mixed_source(tmp_path)
    out = tmp_path / "ds"
    out.mkdir()
    write_header(out, Header(generator={"command": "dataset generate", "seed": 1},
                             counts={"train": {"cloth": 3}}, rejected={"exploded": 2}))
    assert import_path(src / "ball.glb", out, category="animals").imported == 2
    again = import_path(src, out, category="animals")
    assert again.imported == 3 and again.skipped == 2
    assert import_path(src, out, category="animals").imported == 0
    header = read_header(out)
    assert header.counts == {"train": {"cloth": 3, "animals": 5}}
    assert header.generator == {"command": "dataset generate", "seed": 1}
    assert header.rejected == {"exploded": 2}
    assert [r["imported"] for r in header.extra["imports"]] == [2, 3]


def test_interrupted_import_counts_what_it_wrote(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    frames, faces = tet()
    write_anime(src / "a.anime", frames, faces)
    (src / "b.anime").write_bytes(write_anime(src / "b.anime", frames, faces).read_bytes()[:-4])
    out = tmp_path / "ds"
    with pytest.raises(InputError, match="b.anime"):
        import_path(src, out)
    assert read_header(out).counts == {"train": {"imported": 1}}
    write_anime(src / "b.anime", frames, faces)
    report = import_path(src, out)
    assert (report.imported, report.skipped) == (1, 1)
    assert read_header(out).counts == {"train": {"imported": 2}}


def test_import_path_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="found no"):
        import_path(tmp_path / "empty", tmp_path / "ds")
    with pytest.raises(InputError, match="no such file"):
        import_path(tmp_path / "nope.anime", tmp_path / "ds")
    (tmp_path / "m.fbx").write_text("x")
    with pytest.raises(InputError, match="cannot import"):
        import_path(tmp_path / "m.fbx", tmp_path / "ds")
    with pytest.raises(UsageError, match="split"):
        import_path(tmp_path / "empty", tmp_path / "ds", split="dev")
    _, glb = animated_glb(tmp_path, sphere_soup(tmp_path))
    with pytest.raises(UsageError, match="glTF is metres"):
        import_path(glb, tmp_path / "ds", up="z")
    assert not (tmp_path / "ds").exists()


def _uneven_morph_gltf(path: Path) -> Path:
    """A triangle with one morph target, its weight keyed at uneven times 0, 0.1, 0.5 s."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "<f4")
    target = np.array([[0, 0, 1], [0, 0, 0], [0, 0, 0]], "<f4")
    idx = np.array([0, 1, 2, 0], "<u2")  # padded to 4 bytes
    times = np.array([0.0, 0.1, 0.5], "<f4")
    weights = np.array([0.0, 1.0, 0.0], "<f4")
    blobs = [pos, target, idx, times, weights]
    offsets = np.cumsum([0] + [b.nbytes for b in blobs])
    data = b"".join(b.tobytes() for b in blobs)
    views = [{"buffer": 0, "byteOffset": int(o), "byteLength": b.nbytes}
             for o, b in zip(offsets, blobs)]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 2,
                                    "targets": [{"POSITION": 1}]}], "weights": [0.0]}],
        "buffers": [{"byteLength": len(data), "uri": "data:application/octet-stream;base64,"
                     + base64.b64encode(data).decode()}],
        "bufferViews": views,
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0, 0, 0], "max": [0, 0, 1]},
            {"bufferView": 2, "componentType": 5123, "count": 3, "type": "SCALAR"},
            {"bufferView": 3, "componentType": 5126, "count": 3, "type": "SCALAR",
             "min": [0.0], "max": [0.5]},
            {"bufferView": 4, "componentType": 5126, "count": 3, "type": "SCALAR"},
        ],
        "animations": [{"name": "lift", "channels": [
            {"sampler": 0, "target": {"node": 0, "path": "weights"}}],
            "samplers": [{"input": 3, "output": 4, "interpolation": "LINEAR"}]}],
    }
    path.write_text(json.dumps(doc))
    return path


def test_gltf_uneven_keys_sampled_at_30_fps(tmp_path):
    (seq,) = import_gltf(_uneven_morph_gltf(tmp_path / "tri.gltf"))
    assert seq.fps == 30 and len(seq.frames) == 16  # 0 .. 0.5 s at 30 fps
    assert seq.meta["animation"] == "lift"
    lifted = seq.frames[:, :, 2].max(axis=1)
    assert lifted[3] == pytest.approx(1.0, abs=1e-6)  # t = 0.1 s: the key at weight 1
    assert lifted[0] == 0 and lifted[-1] == pytest.approx(0.0, abs=1e-6)


def test_seams_that_open_in_motion_are_reported(tmp_path):
    asset = load_mesh(sphere_soup(tmp_path))
    rng = np.random.default_rng(0)
    motion = asset.vertices[None] + 0.05 * rng.standard_normal((3, *asset.vertices.shape))
    motion[0] = asset.vertices  # the written base mesh stays welded; later frames tear
    write_animated(asset, [motion], tmp_path / "torn.glb", fps=10, encoding="exact")
    report = import_path(tmp_path / "torn.glb", tmp_path / "ds")
    assert report.imported == 1 and "seams open" in report.warnings[0]
    assert load_sequence(tmp_path / "ds" / "train" / "torn.npz").meta["seam_gap"] > 0.01


def test_a_zero_frame_rate_is_refused_not_replaced(tmp_path):
    teapot = load_mesh(asset_path("teapot"))
    write_frames(teapot, wobble(teapot.vertices, 2), tmp_path / "seq", fmt="ply", fps=24.0)
    with pytest.raises(UsageError, match="fps"):
        import_frames(tmp_path / "seq", fps=0)
