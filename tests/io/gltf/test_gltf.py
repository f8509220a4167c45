"""Animated glTF export: round trips on real assets, scene preservation, validator-clean files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygltflib
import pytest

from neurok_cli.errors import UsageError
from neurok_cli.io.encoding import encode
from neurok_cli.io.gltf import read_animated, write_animated
from neurok_cli.io.gltf.anim import (
    animation_index,
    animation_names,
    animations_together,
    first_of_ours,
)
from neurok_cli.io.gltf.doc import GltfDocument, load_document
from neurok_cli.io.gltf.parts import find_riders
from neurok_cli.io.mesh import Z_UP_TO_Y_UP, load_mesh
from tests.conftest import assert_valid_gltf, asset_path, wobble

ROUND_TRIP = ["penguin", "spot", "chair", "teapot", "truck"]


def _ours(path) -> int:
    """Index of the animation the writer added (the first, ahead of a file's own)."""
    return first_of_ours(load_document(path))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Each round-trip asset written once per encoding: {(name, enc): (asset, frames, path)}."""
    out = {}
    folder = tmp_path_factory.mktemp("gltf")
    for name in ROUND_TRIP:
        asset = load_mesh(asset_path(name))
        frames = wobble(asset.vertices, frames=16)
        for enc in ("exact", "compact"):
            path = folder / f"{name}_{enc}.glb"
            report = write_animated(asset, [frames], path, fps=24, encoding=enc)
            out[name, enc] = (asset, frames, path, report)
    return out


@pytest.mark.parametrize("name", ROUND_TRIP)
@pytest.mark.parametrize("enc", ["exact", "compact"])
def test_round_trip_error(written, name, enc):
    asset, frames, path, report = written[name, enc]
    scene = read_animated(path, times=np.arange(16) / 24, animations=[_ours(path)])
    diag = np.linalg.norm(np.ptp(asset.vertices, axis=0))
    assert scene.frames.shape == frames.shape
    upright = frames @ (Z_UP_TO_Y_UP.T if asset.up == "z" else np.eye(3))  # the STL is Z-up
    # the truck's wheels ride on its body instead (tests/io/test_gltf_parts.py)
    body = np.ones(len(asset.vertices), bool)
    for rider in find_riders(asset):
        body[rider.rows] = False
    assert body.sum() > 0.5 * len(body)
    err = np.linalg.norm(scene.frames - upright, axis=-1)[:, body].max() / diag
    if enc == "exact":
        assert err <= 1e-6
        assert report.targets == 16
    else:
        assert err <= 1e-3 + 1e-6  # the default tolerance, plus float32 storage
        assert report.max_error <= 1e-3
        assert report.targets < 16


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_uvs_and_materials_survive(written, name):
    asset, _, path, _ = written[name, "compact"]
    back = load_mesh(path)
    assert len(back.parts) == len(asset.parts)
    for a, b in zip(asset.parts, back.parts):
        assert len(a.vertices) == len(b.vertices)
        assert (a.uvs is None) == (b.uvs is None)
        if a.uvs is not None:
            np.testing.assert_allclose(a.uvs, b.uvs, atol=1e-6)
        if a.material is not None and a.material.texture is not None:
            assert b.material.texture == a.material.texture  # the same encoded image bytes


def test_all_written_files_pass_the_khronos_validator(written):
    assert_valid_gltf(*[v[2] for v in written.values()])


def test_truck_keeps_hierarchy_materials_and_its_animation(written):
    src = load_document(asset_path("truck")).gltf
    out = load_document(written["truck", "exact"][2]).gltf
    # a node above each spinning wheel carries it with the body; the file's nodes keep their
    # indices, and each wheel node its place below its axle's node
    assert len(out.nodes) == len(src.nodes) + 2
    for axle, wheel in ((1, 2), (3, 4)):
        ride = out.nodes[axle].children
        assert len(ride) == 1 and out.nodes[ride[0]].children == [wheel]
    assert out.materials == src.materials
    assert len(out.animations) == len(src.animations) + 1
    assert out.animations[1].channels == src.animations[0].channels
    # the instanced wheel mesh stays one mesh: the wheels take no morph targets
    assert out.nodes[2].mesh == out.nodes[4].mesh == src.nodes[2].mesh
    assert not out.meshes[out.nodes[2].mesh].primitives[0].targets
    # the original wheel rotation plays alongside ours, and in ours
    targets = {(c.target.node, c.target.path) for c in out.animations[0].channels}
    assert {(2, "rotation"), (4, "rotation"), (0, "weights")} <= targets
    both = read_animated(written["truck", "exact"][2], times=np.array([0.0, 0.6]))
    assert not np.allclose(both.frames[0], both.frames[1])


def test_weight_tracks_are_in_unit_range_for_blender(written):
    for (_, enc), (_, _, path, _) in written.items():
        doc = load_document(path)
        anim = doc.gltf.animations[_ours(path)]
        for ch in anim.channels:
            if ch.target.path != "weights":
                continue
            w = doc.accessor(anim.samplers[ch.sampler].output)
            assert w.min() >= 0.0 and w.max() <= 1.0 + 1e-6, (path, enc)


def test_normals_follow_the_deformation(tmp_path):
    """A sheet folded by 90 degrees: the target normals turn with it."""
    asset = load_mesh(asset_path("mountain"))
    v = asset.vertices
    frames = np.stack([v, v @ np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0.0]]).T])  # rigid turn
    path = tmp_path / "turn.glb"
    write_animated(asset, [frames], path, fps=1, encoding="exact")
    doc = load_document(path)
    prim = doc.gltf.meshes[0].primitives[0]
    n0 = doc.accessor(prim.attributes.NORMAL)
    n1 = n0 + doc.accessor(prim.targets[1].NORMAL)
    rotated = n0 @ np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0.0]]).T
    cos = np.sum(n1 * rotated, axis=1) / np.linalg.norm(n1, axis=1)
    assert np.median(cos) > 0.999


def test_overwriting_the_motion_writes_the_same_file(tmp_path):
    """overwrite=True reuses a C-ordered motion's memory (its contents are lost) and writes
    what a copy would."""
    asset = load_mesh(asset_path("penguin"))
    motion = np.ascontiguousarray(wobble(asset.vertices, 9))
    kept = motion.copy()
    write_animated(asset, [motion], tmp_path / "copy.glb", fps=30)
    assert np.array_equal(motion, kept)  # not asked: left as it was
    write_animated(asset, [motion], tmp_path / "reused.glb", fps=30, overwrite=True)
    assert (tmp_path / "reused.glb").read_bytes() == (tmp_path / "copy.glb").read_bytes()


def test_several_motions_become_several_animations(tmp_path):
    asset = load_mesh(asset_path("penguin"))
    a, b = wobble(asset.vertices, 10), wobble(asset.vertices, 7, amplitude=-0.1)
    path = tmp_path / "two.glb"
    write_animated(asset, [a, b], path, fps=30, names=["first", "second"])
    names = [x.name for x in load_document(path).gltf.animations]
    assert names == ["first", "second"]
    back = read_animated(path, animations=[1])
    assert back.frames.shape == b.shape
    assert np.abs(back.frames - b).max() < 2e-3 * np.ptp(asset.vertices, axis=0).max()
    assert_valid_gltf(path)


@pytest.mark.parametrize("vertices", [50, 5])  # more coordinates than frames, and fewer
def test_compact_picks_the_fewest_targets_within_tolerance(vertices):
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(3, vertices, 3))
    disp = np.tensordot(rng.normal(size=(40, 3)), basis, axes=1)  # rank 3
    bases, weights, err = encode(disp, encoding="compact", tolerance=1e-9, max_targets=200)
    assert len(bases) == 3 and err < 1e-9
    _, _, err_capped = encode(disp, encoding="compact", tolerance=1e-9, max_targets=2)
    assert err_capped > 1e-9
    # the reported error is the real one: targets times weights give the frames back
    back = np.tensordot(weights, bases, axes=1)
    assert np.sqrt(((back - disp) ** 2).sum(-1)).max() == pytest.approx(err, abs=1e-12)


@pytest.mark.parametrize("up", ["z", "y"])
def test_z_up_files_stand_upright_in_gltf(tmp_path, up):
    """glTF is +Y up: the motion of a Z-up file (STL's default) gets a root node that turns it
    upright, its vertex data left in the file's frame; a Y-up one gets none."""
    asset = load_mesh(asset_path("teapot"), up=up)
    frames = wobble(asset.vertices, frames=4)
    path = tmp_path / "t.glb"
    write_animated(asset, [frames], path, fps=24)
    world = read_animated(path).frames
    turn = Z_UP_TO_Y_UP if up == "z" else np.eye(3)
    diag = np.linalg.norm(np.ptp(asset.vertices, axis=0))
    assert np.abs(world - frames @ turn.T).max() <= 1e-3 * diag
    assert (load_document(path).gltf.nodes[0].matrix is not None) == (up == "z")
    assert_valid_gltf(path)


def test_bad_motion_is_refused_and_leaves_no_file(tmp_path):
    asset = load_mesh(asset_path("penguin"))
    path = tmp_path / "x.glb"
    bad = wobble(asset.vertices, 4)
    bad[2, 5, 0] = np.nan
    with pytest.raises(UsageError, match="NaN"):
        write_animated(asset, [bad], path, fps=30)
    with pytest.raises(UsageError, match="vertices"):
        write_animated(asset, [bad[:, :10]], path, fps=30)
    with pytest.raises(UsageError, match="encoding"):
        write_animated(asset, [wobble(asset.vertices, 4)], path, fps=30, encoding="zip")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    from neurok_cli.io.gltf import doc as gltf_doc

    asset = load_mesh(asset_path("teapot"))
    path = tmp_path / "x.glb"
    path.write_bytes(b"previous")

    def boom(self):
        raise OSError("disk full")

    monkeypatch.setattr(gltf_doc.GltfDocument, "glb_head", boom)
    with pytest.raises(OSError):
        write_animated(asset, [wobble(asset.vertices, 3)], path, fps=30)
    assert path.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["x.glb"]


def test_reader_samples_third_party_morph_animation():
    scene = read_animated(asset_path("simplemorph"), fps=10)
    assert len(scene.times) == 41  # 4 s at 10 fps, both ends
    y = scene.frames[:, 2, 1]  # the moving vertex
    assert y.max() - y.min() > 0.5


def test_animations_that_drive_other_parts_play_together_and_alternatives_do_not():
    """A milk truck's wheel spin and a deformation added to it play at once; two motions of
    the same body (animate --samples) are alternatives: the first unless one is named."""
    def anim(name, *targets):
        return pygltflib.Animation(name=name, channels=[
            pygltflib.AnimationChannel(sampler=0, target=pygltflib.AnimationChannelTarget(
                node=n, path=p)) for n, p in targets])

    doc = GltfDocument(gltf=pygltflib.GLTF2(animations=[
        anim("wheels", (3, "rotation"), (4, "rotation")),
        anim("neurok_0", (0, "weights"), (1, "weights")),
        anim("neurok_1", (0, "weights"), (1, "weights")),
        anim(None, (0, "translation")),
    ]), path=Path("truck.glb"))
    assert animations_together(doc) == ([0, 1, 3], [2])
    assert animations_together(doc, animation_index(doc, "neurok_1")) == ([2, 0, 3], [1])
    assert animation_index(doc, "3") == 3 and animation_names(doc, [3, 1]) == "'#3', 'neurok_0'"
    with pytest.raises(UsageError, match="no animation 'neurok_2'; it has wheels, neurok_0"):
        animation_index(doc, "neurok_2")
    with pytest.raises(UsageError, match="no animation '4'"):
        animation_index(doc, "4")
    assert animations_together(GltfDocument(gltf=pygltflib.GLTF2())) == ([], [])


def test_a_files_own_morph_animation_plays_as_it_did(tmp_path):
    """SimpleMorph animates its own two targets; ours are added next to them, and the file's
    animation (and its rest) must come back as they were, however far our motion goes. Ours
    holds the file's own targets at their defaults: the motion is of the rest it started
    from, and the file's morph animation is not played under it."""
    asset = load_mesh(asset_path("simplemorph"))
    times = np.linspace(0.0, 3.9, 14)
    before = read_animated(asset_path("simplemorph"), times=times)
    moved = asset.vertices[None] + np.array([0.7, -0.4, 0.3]) * np.linspace(1, 2, 8)[:, None,
                                                                                    None]
    for enc in ("compact", "exact"):
        out = tmp_path / f"m_{enc}.glb"
        write_animated(asset, [moved], out, fps=8, encoding=enc)
        assert _ours(out) == 0
        after = read_animated(out, times=times, animations=[1])
        assert np.abs(after.frames - before.frames).max() < 1e-5, enc
        ours = read_animated(out, animations=[_ours(out)])
        assert np.abs(ours.frames[:8] - moved).max() < 1e-5, enc
        assert_valid_gltf(out)
        src, got = load_document(asset_path("simplemorph")), load_document(out)
        for m_src, m_got in zip(src.gltf.meshes, got.gltf.meshes):  # base data as it was
            for p_src, p_got in zip(m_src.primitives, m_got.primitives):
                for name, acc in vars(p_src.attributes).items():
                    if acc is not None:
                        assert np.array_equal(src.accessor(acc),
                                              got.accessor(getattr(p_got.attributes, name))), name


def test_ours_is_the_animation_to_show_when_the_file_has_its_own(tmp_path):
    asset = load_mesh(asset_path("simplemorph"))
    out = tmp_path / "m.glb"
    write_animated(asset, [asset.vertices[None] + np.zeros((3, 1, 3))], out, fps=8,
                   names=["neurok_wobble"])
    doc = load_document(out)
    assert first_of_ours(doc) == 0 and len(doc.gltf.animations) == 2
    assert first_of_ours(load_document(asset_path("simplemorph"))) is None
