"""Locally rigid deformation (model/rigid.py) and the decoder's rigid head."""

from __future__ import annotations

import math

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model.rigid import (
    blend_vertices,
    infinitesimal_rotations,
    offset_error,
    quaternion,
    rotation_matrix,
)
from neurok_cli.model.skinning import Driven, point_neighbours, smooth_weights

from .conftest import randomize_zero_inits, sphere, tiny_model, train_steps

f64 = torch.float64


def test_rotation_matrix_is_the_exponential_of_the_rotation_vector():
    g = torch.Generator().manual_seed(0)
    omega = torch.randn(20, 3, generator=g, dtype=f64) * 1.5
    omega[0] = 0.0
    omega[1] = 1e-6  # the series branch
    K = torch.zeros(20, 3, 3, dtype=f64)
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -omega[:, 2], omega[:, 1], -omega[:, 0]
    K = K - K.transpose(1, 2)
    assert torch.allclose(rotation_matrix(omega), torch.linalg.matrix_exp(K), atol=1e-12)
    q = quaternion(omega)
    assert torch.allclose(q.norm(dim=-1), torch.ones(20, dtype=f64))
    assert (q[omega.norm(dim=-1) <= math.pi, 0] >= 0).all()  # up to half a turn


def test_the_rotation_is_differentiable_through_zero():
    omega = torch.zeros(3, dtype=f64, requires_grad=True)
    x = torch.tensor([0.0, 1.0, 0.0], dtype=f64)
    (rotation_matrix(omega) @ x)[0].backward()
    # d(R x)/d omega at 0 is -[x]x: the x component moves with -omega_z
    assert torch.allclose(omega.grad, torch.tensor([0.0, 0.0, -1.0], dtype=f64))


def _grid(n: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    points = torch.rand(n, 3, generator=g, dtype=f64)
    vertices = torch.rand(3 * n, 3, generator=g, dtype=f64)
    return points, vertices


def test_a_rigid_motion_of_all_points_moves_every_vertex_rigidly():
    points, vertices = _grid()
    R = rotation_matrix(torch.tensor([0.4, -1.1, 0.7], dtype=f64))
    c = torch.tensor([0.3, -2.0, 1.0], dtype=f64)
    shift = (points @ R.T + c - points)[None]
    omega = torch.tensor([0.4, -1.1, 0.7], dtype=f64).expand(1, len(points), 3)
    idx, w = smooth_weights(vertices, points)
    out = blend_vertices(vertices, points, shift, omega, idx, w)
    assert torch.allclose(out[0], vertices @ R.T + c, atol=1e-12)


def test_a_vertex_on_a_point_follows_its_transform():
    points, _ = _grid(6)
    g = torch.Generator().manual_seed(2)
    shift = torch.randn(2, 6, 3, generator=g, dtype=f64)
    omega = torch.randn(2, 6, 3, generator=g, dtype=f64)
    out = blend_vertices(points, points, shift, omega, torch.arange(6)[:, None],
                         torch.ones(6, 1, dtype=f64))
    assert torch.allclose(out, points + shift, atol=1e-12)


def test_a_twist_keeps_a_tubes_radius_where_a_linear_blend_thins_it():
    """Two points on an axis, turned +-60 degrees about it: a vertex half way between them,
    on the tube's surface, keeps its distance from the axis by dual quaternions; blending
    the two transforms as matrices pulls it to cos(60) = half of it."""
    points = torch.tensor([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]], dtype=f64)
    omega = torch.tensor([[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]], dtype=f64) * math.pi / 3
    vertex = torch.tensor([[0.0, 0.2, 0.0]], dtype=f64)
    idx, w = torch.tensor([[0, 1]]), torch.tensor([[0.5, 0.5]], dtype=f64)
    out = blend_vertices(vertex, points, torch.zeros(1, 2, 3, dtype=f64), omega, idx, w)
    assert float(out[0, 0, 1:].norm()) == pytest.approx(0.2, rel=1e-9)
    R = rotation_matrix(omega[0])
    linear = 0.5 * sum(R[i] @ (vertex[0] - points[i]) + points[i] for i in range(2))
    assert float(linear[1:].norm()) == pytest.approx(0.1, rel=1e-9)


def test_blend_checks_its_shapes():
    points, vertices = _grid(5)
    idx, w = smooth_weights(vertices, points)
    with pytest.raises(UsageError, match="shift and omega"):
        blend_vertices(vertices, points, torch.zeros(1, 5, 3, dtype=f64),
                       torch.zeros(1, 4, 3, dtype=f64), idx, w)


def test_offset_error_is_zero_for_the_neighbourhoods_own_rotation():
    rest = sphere(64)[None]
    omega = torch.tensor([0.3, 0.2, -0.5], dtype=f64)
    R = rotation_matrix(omega)
    target = rest @ R.T - rest + torch.tensor([0.1, 0.0, 0.0], dtype=f64)
    right = offset_error(rest, target, omega.expand(1, 64, 3), 6)
    wrong = offset_error(rest, target, torch.zeros(1, 64, 3, dtype=f64), 6)
    assert float(right) < 1e-20
    assert float(wrong) > 0.05


def test_infinitesimal_rotations_of_a_small_turn_and_of_a_sheets_bend():
    rest = sphere(80)
    w = torch.tensor([0.01, -0.02, 0.03], dtype=f64)
    field = torch.cross(w.expand(80, 3), rest, dim=-1)[None] + 0.1
    got = infinitesimal_rotations(rest, field, point_neighbours(rest))
    assert torch.allclose(got[0], w.expand(80, 3), atol=1e-12)
    # a flat sheet bent up along x: its slope 2 a x turns it about -z by that much
    g = torch.Generator().manual_seed(3)
    flat = torch.rand(200, 3, generator=g, dtype=f64)
    flat[:, 1] = 0.0
    a = 1e-3
    bend = torch.zeros(1, 200, 3, dtype=f64)
    bend[0, :, 1] = a * flat[:, 0] ** 2
    got = infinitesimal_rotations(flat, bend, point_neighbours(flat))[0]
    inner = (flat[:, 0] > 0.2) & (flat[:, 0] < 0.8)
    # to first order: the curvature adds a * (the neighbours' spread) at most
    assert (got[inner, 2] - 2 * a * flat[inner, 0]).abs().max() < 2.5e-4
    assert got[inner][:, [0, 1]].abs().max() < 2.5e-4


def test_driven_blend_is_the_per_vertex_blend():
    points, vertices = _grid(30)
    driven = Driven.of(vertices, points, faces=torch.zeros(0, 3, dtype=torch.long).numpy())
    g = torch.Generator().manual_seed(6)
    moved = points + 0.05 * torch.randn(20, 30, 3, generator=g, dtype=f64)
    turns = 0.3 * torch.randn(20, 30, 3, generator=g, dtype=f64)
    # with a gradient to keep, the blend runs in torch; without, compiled
    want = blend_vertices(vertices, points, (moved - points).requires_grad_(), turns,
                          driven.idx, driven.w)
    assert want.requires_grad
    assert torch.allclose(driven.blend(moved, turns), want.detach(), atol=1e-12)


def test_driven_blend_with_no_rotation_is_a_smooth_average_of_the_points_motion():
    points, vertices = _grid(30)
    driven = Driven.of(vertices, points, faces=torch.zeros(0, 3, dtype=torch.long).numpy())
    moved = (points + torch.tensor([0.0, 0.2, 0.0], dtype=f64))[None]
    out = driven.blend(moved, torch.zeros_like(moved))
    assert torch.allclose(out[0], vertices + torch.tensor([0.0, 0.2, 0.0], dtype=f64))
    R = rotation_matrix(torch.tensor([0.0, 0.5, 0.0], dtype=f64))
    turned = driven.blend(moved, torch.zeros_like(moved), R[None], torch.ones(1, 3, dtype=f64))
    assert torch.allclose(turned[0], out[0] @ R.T + 1.0)


# --- the decoder's rigid head -------------------------------------------------------------


def _batch(B: int = 2, P: int = 256, Q: int = 128) -> dict:
    g = torch.Generator().manual_seed(4)
    return {"points": torch.randn(B, P, 3, generator=g),
            "normals": torch.randn(B, P, 3, generator=g),
            "delta_points": 0.01 * torch.randn(B, P, 3, generator=g),
            "query": torch.randn(B, Q, 3, generator=g),
            "delta_query": 0.01 * torch.randn(B, Q, 3, generator=g)}


def test_a_rigid_head_decodes_the_rest_exactly_at_the_prior_mean():
    model = randomize_zero_inits(tiny_model(rigid=True)).eval()
    b = _batch()
    prior = model.encode_prior(b["points"], b["normals"])
    d, turn = model.decode_rigid(prior.mu, prior, b["query"])
    assert torch.equal(d, torch.zeros_like(d)) and torch.equal(turn, torch.zeros_like(turn))
    z = prior.mu + 0.5
    d, turn = model.decode_rigid(z, prior, b["query"])
    assert turn.abs().max() > 0 and torch.equal(d, model.decode(z, prior, b["query"]))
    one = prior.__class__(prior.tokens[:1], prior.mu[:1])
    ds, ts = model.decode_samples_rigid(z[:1].repeat(3, 1), one, b["query"][:1])
    assert torch.allclose(ts[0], turn[0], atol=1e-6) and ds.shape == (3, 128, 3)


def test_a_displacement_head_has_no_rotations_to_give():
    model = tiny_model()
    b = _batch()
    prior = model.encode_prior(b["points"], b["normals"])
    with pytest.raises(UsageError, match="no rigid head"):
        model.decode_rigid(prior.mu, prior, b["query"])


def test_a_rigid_head_grown_from_a_displacement_model_starts_as_it():
    plain = randomize_zero_inits(tiny_model()).eval()
    rigid = tiny_model(rigid=True, seed=5)
    rigid.load_grown(plain.state_dict())
    rigid.eval()
    b = _batch()
    prior = rigid.encode_prior(b["points"], b["normals"])
    z = prior.mu + 0.3
    d, turn = rigid.decode_rigid(z, prior, b["query"])
    assert torch.allclose(d, plain.decode(z, plain.encode_prior(b["points"], b["normals"]),
                                          b["query"]), atol=1e-6)
    assert torch.equal(turn, torch.zeros_like(turn))


def test_the_rigid_heads_loss_trains_its_rotations():
    model = randomize_zero_inits(tiny_model(rigid=True))
    b = _batch()
    _, stats = model.loss(b)
    assert "turn" in stats and stats["turn"] > 0
    first = stats["turn"]
    stats = train_steps(model, b, 40)
    assert stats["turn"] < 0.9 * first
