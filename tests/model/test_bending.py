"""A sheet's bending modes: out of its plane, smooth, free of rigid moves, and, with their
second-order terms, bending without stretching."""

import numpy as np
import torch

from neurok_cli.deform.learned.body import knn_edges
from neurok_cli.model.bending import AMPLITUDE, bending_derivatives, bending_modes
from neurok_cli.model.reduced import ReducedShape


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


def _strain(x: np.ndarray, points: np.ndarray, edges: np.ndarray) -> float:
    rest = np.linalg.norm(points[edges[:, 0]] - points[edges[:, 1]], axis=1)
    now = np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1)
    return float(np.abs(now / rest - 1.0).mean())


def _bent(points, modes, pull, q):
    rest, q = torch.as_tensor(points), torch.tensor([q], dtype=torch.float64)
    linear = ReducedShape(rest, modes, torch.zeros_like(pull)).positions(q)[0].numpy()
    return linear, ReducedShape(rest, modes, pull).positions(q)[0].numpy()


def test_second_order_terms_keep_a_rolled_sheets_edges_at_length():
    """A sheet rolled into a cylinder (a bend that needs no stretch) whose edges rise 1/8
    of its size: along the normal alone its edges stretch 2.2 % on average; with the
    second-order pull, 0.1 %, the remainder of fourth order."""
    points, normals, _ = _sheet()
    edges = knn_edges(points, 8)
    roll = (points[:, 0] - 0.5) ** 2
    modes = torch.as_tensor(normals[:, :, None] * roll[:, None, None])
    pull = bending_derivatives(points, modes, edges)
    linear, second = _bent(points, modes, pull, [0.5])
    assert _strain(second, points, edges) < 0.1 * _strain(linear, points, edges)
    linear, second = _bent(points, modes, pull, [1.0])  # twice as far: 4x, not 16x, better
    assert _strain(second, points, edges) < 0.25 * _strain(linear, points, edges)


def test_second_order_terms_of_the_sheets_own_modes():
    """The first modes mix bends that no sheet makes without stretching (a twist); the pull
    still takes most of the stretch of a moderate bend away."""
    points, normals, mass = _sheet()
    edges = knn_edges(points, 8)
    modes = bending_modes(points, normals, mass, 6)
    pull = bending_derivatives(points, modes, edges)
    assert pull.shape == (len(points), 3, 6, 6)
    torch.testing.assert_close(pull, pull.transpose(2, 3))
    for q in ([0.5, 0, 0, 0, 0, 0], [0.5, -0.5, 0, 0.3, 0, 0]):
        linear, second = _bent(points, modes, pull, q)
        assert _strain(second, points, edges) < 0.5 * _strain(linear, points, edges)
