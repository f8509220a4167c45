"""A sheet's bending modes: out of its plane, smooth, and free of rigid moves."""

import numpy as np

from neurok_cli.model.bending import AMPLITUDE, bending_modes


def _sheet(n: int = 12):
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    points = np.stack([x, np.zeros_like(x), z], -1).reshape(-1, 3)
    normals = np.tile([0.0, 1.0, 0.0], (len(points), 1))
    return points, normals, np.full(len(points), 1.0 / len(points))


def test_modes_bend_a_flat_sheet_out_of_its_plane():
    points, normals, mass = _sheet()
    modes = bending_modes(points, normals, mass, 6).numpy()  # (Q, 3, 6)
    assert modes.shape == (len(points), 3, 6)
    np.testing.assert_allclose(modes[:, [0, 2]], 0.0, atol=1e-12)  # along the normal only
    np.testing.assert_allclose(np.abs(modes[:, 1]).max(axis=0), AMPLITUDE * 1.0)
    w = modes[:, 1]  # (Q, 6)
    rigid = np.concatenate([np.ones((len(points), 1)), points[:, [0, 2]]], axis=1)
    np.testing.assert_allclose(rigid.T @ (mass[:, None] * w), 0.0, atol=1e-12)


def test_the_first_modes_are_the_smoothest():
    """Neighbouring points move alike in the first mode far more than in the last."""
    points, normals, mass = _sheet()
    w = bending_modes(points, normals, mass, 8).numpy()[:, 1]
    d = np.linalg.norm(points[:, None] - points[None], axis=-1)
    near = (d > 0) & (d < 0.1)
    rough = [np.abs(w[:, j][:, None] - w[:, j][None])[near].mean() for j in (0, 7)]
    assert rough[0] < rough[1]
