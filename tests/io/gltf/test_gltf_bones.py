"""The bones encoding (io/gltf/bones.py, io/gltf/write.py): a skin that plays our frames."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.io.gltf import (
    animations_together,
    first_of_ours,
    load_document,
    read_animated,
    write_animated,
)
from neurok_cli.io.mesh import load_mesh
from tests.conftest import ROOT, assert_valid_gltf, asset_path, wobble
from tests.interop.conftest import trajectory_error


def _diag(x: np.ndarray) -> float:
    return float(np.linalg.norm(np.ptp(x, axis=0)))


def _played(path, frames: int) -> np.ndarray:
    return read_animated(path, fps=30, animations=[0]).frames[:frames]


def _together(path, frames: int) -> np.ndarray:
    """What a player shows: ours with the animations that play at once with it."""
    doc = load_document(path)
    chosen, _ = animations_together(doc, first_of_ours(doc))
    return read_animated(path, fps=30, animations=chosen).frames[:frames]


def test_a_mesh_file_as_bones_plays_within_the_decompositions_error(tmp_path):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    motion = wobble(asset.vertices, frames=16)
    out = tmp_path / "blob.glb"
    rep = write_animated(asset, [motion], out, fps=30, encoding="bones", bones=8)
    assert rep.encoding == "bones" and rep.bones == 8 and rep.targets == 0
    assert rep.mean_error < 0.005
    assert_valid_gltf(out)
    played = _played(out, 16)
    error = np.linalg.norm(played - motion, axis=2) / _diag(asset.vertices)
    assert error.mean() == pytest.approx(rep.mean_error, abs=1e-6)  # float32 in the file
    gltf = load_document(out).gltf
    assert not any(p.targets for m in gltf.meshes for p in m.primitives)
    skin = gltf.skins[0]
    assert len(skin.joints) == 8
    joints = [gltf.nodes[j] for j in skin.joints]
    assert all(not n.children and n.scale is None and n.mesh is None for n in joints)
    skinned = [i for i, n in enumerate(gltf.nodes) if n.skin is not None]
    assert skinned and all(i in gltf.scenes[0].nodes for i in skinned)
    channels = {(c.target.node, c.target.path) for c in gltf.animations[0].channels}
    assert channels == {(j, p) for j in skin.joints for p in ("translation", "rotation")}


def test_a_z_up_file_plays_as_its_morph_targets_do(tmp_path):
    """The joints hang below the root that turns the file's frame to glTF's."""
    asset = load_mesh(asset_path("teapot"))
    motion = wobble(asset.vertices, frames=8)
    write_animated(asset, [motion], tmp_path / "b.glb", fps=30, encoding="bones")
    write_animated(asset, [motion], tmp_path / "e.glb", fps=30, encoding="exact")
    bones, exact = _played(tmp_path / "b.glb", 8), _played(tmp_path / "e.glb", 8)
    error = np.linalg.norm(bones - exact, axis=2) / _diag(exact[0])
    assert error.mean() < 0.005
    assert_valid_gltf(tmp_path / "b.glb")


@pytest.mark.parametrize("name", ["truck", "flag"])
def test_a_gltf_input_keeps_its_scene_and_its_own_motion(tmp_path, name):
    """The truck's wheels ride on the body and spin by the file's channels; the flag's own
    morph wave is not played under the motion (its targets held at their defaults, the
    rest the motion started from). Either way the clip matches its exact encoding."""
    src = asset_path("truck") if name == "truck" else ROOT / "examples" / "flag.glb"
    asset = load_mesh(src)
    motion = wobble(asset.vertices, frames=10, amplitude=0.02)
    write_animated(asset, [motion], tmp_path / "b.glb", fps=30, encoding="bones")
    write_animated(asset, [motion], tmp_path / "e.glb", fps=30, encoding="exact")
    bones, exact = _together(tmp_path / "b.glb", 10), _together(tmp_path / "e.glb", 10)
    error = max(trajectory_error(bones, exact), trajectory_error(exact, bones))
    assert error / _diag(exact[0]) < 0.03
    assert_valid_gltf(tmp_path / "b.glb")
    before, after = load_document(src).gltf, load_document(tmp_path / "b.glb").gltf
    assert len(after.materials) == len(before.materials)
    assert len(after.textures) == len(before.textures)
    names = [a.name for a in after.animations]
    assert names[0] == "neurok" and names[1:] == [a.name for a in before.animations]


def test_two_motions_share_one_skin(tmp_path):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    a, b = wobble(asset.vertices, frames=6), wobble(asset.vertices, frames=9, amplitude=0.1)
    out = tmp_path / "two.glb"
    write_animated(asset, [a, b], out, fps=30, encoding="bones", bones=8,
                   names=["first", "second"])
    gltf = load_document(out).gltf
    assert [x.name for x in gltf.animations] == ["first", "second"] and len(gltf.skins) == 1
    second = read_animated(out, fps=30, animations=[1]).frames[:9]
    assert np.linalg.norm(second - b, axis=2).mean() / _diag(b[0]) < 0.005


def test_a_track_keeps_the_keys_interpolation_needs():
    from neurok_cli.io.gltf.bones import needed_keys

    t = np.arange(40, dtype=np.float64)
    still = np.stack([t * 0.0 + 1.0, 2.0 * t], axis=1)  # constant and linear: two keys
    assert needed_keys(still, 1e-9).tolist() == [0, 39]
    curve = np.stack([np.sin(t / 5.0), np.cos(t / 7.0)], axis=1)
    keys = needed_keys(curve, 0.03)
    assert keys[0] == 0 and keys[-1] == 39 and 2 < len(keys) < 40
    played = np.stack([np.interp(t, keys, curve[keys, c]) for c in range(2)], axis=1)
    assert np.abs(played - curve).max() <= 0.03


def test_a_skinned_input_warns_where_its_joints_are_left_still_and_only_there(tmp_path):
    """Reading a skinned file (info, preview) shows it as players do; `animate` and
    `simulate` move its mesh without its joints, and say so."""
    from neurok_cli.scenario.placement import load_placed

    asset = load_mesh(ROOT / "examples" / "blob.obj")
    out = tmp_path / "blob.glb"
    write_animated(asset, [wobble(asset.vertices, frames=8)], out, fps=30, encoding="bones",
                   bones=4)
    assert not any("skinned" in w for w in load_mesh(out).warnings)
    placed, _ = load_placed(out, up=None, size=None, units=None)
    node = next(i for i, n in enumerate(load_document(out).gltf.nodes) if n.skin is not None)
    assert [w for w in placed.warnings if "skinned" in w] == [
        f"node {node} is skinned: read in its default pose, and its joints do not move with "
        "the motion"]
