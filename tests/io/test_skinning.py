"""Bones for a clip (io/skinning.py): the decomposition and linear blend skinning."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from neurok_cli.io.asset import weld
from neurok_cli.io.skinning import AUTO_MOST, decompose, motion_matrices, skinned


def _bar(n=12):
    """A bar along x whose two halves turn apart over the clip: (rest, frames, faces)."""
    box = trimesh.creation.box(extents=(2.0, 0.3, 0.3))
    for _ in range(3):
        box = box.subdivide()
    v, f = np.asarray(box.vertices), np.asarray(box.faces)
    frames = []
    for t in range(n):
        r = Rotation.from_rotvec([0.0, 0.0, 0.04 * t]).as_matrix()
        right = v[:, 0] > 0
        x = v.copy()
        x[right] = v[right] @ r.T + [0.01 * t, 0.0, 0.0]
        frames.append(x + [0.0, -0.02 * t, 0.0])
    return v, np.stack(frames), f


def test_two_rigid_halves_need_two_bones_and_get_them_exactly():
    rest, frames, faces = _bar()
    skin = decompose(rest, frames, faces, bones=2)
    assert skin.bones == 2
    assert skin.mean_error < 1e-6 and skin.max_error < 1e-3
    assert np.allclose(skin.positions(rest), frames, atol=1e-3 * 2.0)


def test_weights_are_four_non_negative_summing_to_one_and_rotations_are_unit():
    rest, frames, faces = _bar()
    skin = decompose(rest, frames, faces, bones=6)
    assert skin.joints.shape == skin.weights.shape == (len(rest), 4)
    assert skin.joints.dtype == np.uint8 and skin.weights.dtype == np.float32
    assert (skin.weights >= 0).all()
    assert np.abs(skin.weights.sum(axis=1, dtype=np.float64) - 1.0).max() < 1e-6
    assert (skin.joints[skin.weights == 0] == 0).all()  # unused influences point at joint 0
    assert np.allclose(np.linalg.norm(skin.rotations, axis=-1), 1.0, atol=1e-9)
    dots = np.einsum("tbi,tbi->tb", skin.rotations[1:], skin.rotations[:-1])
    assert (dots >= 0).all()  # each track on one hemisphere: players turn the short way


def test_split_copies_of_a_point_share_its_weights():
    """A UV seam's copies of one point are one point to the decomposition."""
    rest, frames, faces = _bar()
    copies = np.concatenate([rest, rest[:10]])  # ten vertices written twice
    frames2 = np.concatenate([frames, frames[:, :10]], axis=1)
    w = weld(copies, faces)
    skin = decompose(copies, frames2, w.faces, bones=4, index=w.index)
    assert np.array_equal(skin.weights[-10:], skin.weights[:10])
    assert np.array_equal(skin.joints[-10:], skin.joints[:10])


def test_the_default_adds_joints_while_the_clip_needs_them():
    """Twenty rigid pieces moving apart: 32 joints hold them; a single joint would not."""
    rng = np.random.default_rng(0)
    pieces, vs, fs, moves = 20, [], [], []
    for i in range(pieces):
        s = trimesh.creation.icosphere(subdivisions=1, radius=0.1)
        fs.append(np.asarray(s.faces) + sum(len(x) for x in vs))
        vs.append(np.asarray(s.vertices) + [0.3 * i, 0.0, 0.0])
        moves.append(rng.normal(size=3) * 0.05)
    rest, faces = np.concatenate(vs), np.concatenate(fs)
    steps = np.arange(8)[:, None, None]
    frames = rest + steps * np.repeat(np.asarray(moves), [len(x) for x in vs], axis=0)
    auto = decompose(rest, frames, faces)
    one = decompose(rest, frames, faces, bones=1)
    assert auto.mean_error < 0.2 * one.mean_error
    assert auto.bones <= AUTO_MOST


def test_skinning_by_identity_motions_is_the_rest_pose():
    rest, _, _ = _bar()
    q = np.tile([0.0, 0.0, 0.0, 1.0], (3, 2, 1))
    c = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    m = motion_matrices(q, np.tile(c, (3, 1, 1)), c)
    joints = np.zeros((len(rest), 4), np.uint8)
    weights = np.zeros((len(rest), 4), np.float32)
    weights[:, 0] = 1.0
    assert np.allclose(skinned(rest, joints, weights, m), rest[None], atol=1e-12)
    assert m.shape == (3, 2, 4, 4)


@pytest.mark.parametrize("bones", [1, 3])
def test_a_rigid_clip_is_exact_with_any_number_of_bones(bones):
    rest, _, faces = _bar()
    r = Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix()
    frames = np.stack([rest, rest @ r.T + [0.5, 0.0, 0.0]])
    skin = decompose(rest, frames, faces, bones=bones)
    assert skin.max_error < 1e-6
