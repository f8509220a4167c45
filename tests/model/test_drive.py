"""Driving points: k-nearest inverse-distance weights and farthest-point sampling."""

from __future__ import annotations

import importlib

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model import drive, farthest_point_sample, knn_weights

from .conftest import DEVICES, sphere

# the package re-exports the function drive under the submodule's name
drive_module = importlib.import_module("neurok_cli.model.drive")


def _cloud(n: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, 3, generator=torch.Generator().manual_seed(seed)) - 0.5


@pytest.mark.parametrize("device", DEVICES)
def test_knn_weights_exact_at_driving_points_and_partition_of_unity(device):
    driving = _cloud(40, 1).to(device)
    vertices = torch.cat([_cloud(200, 2).to(device), driving])  # the last 40 coincide
    idx, w = knn_weights(vertices, driving, k=4)
    assert idx.shape == (240, 4) and idx.dtype == torch.long and w.shape == (240, 4)
    torch.testing.assert_close(w.sum(dim=1), torch.ones(240, device=device))
    assert (w >= 0).all()
    values = torch.randn(2, 40, 3, device=device)  # (B, Q, 3)
    out = drive(values, idx, w)
    assert out.shape == (2, 240, 3)
    assert torch.equal(out[:, 200:], values)  # exact, not approximately
    # a constant field stays constant
    const = torch.ones(1, 40, 3, device=device) * 0.7
    torch.testing.assert_close(drive(const, idx, w), torch.full((1, 240, 3), 0.7, device=device))


def test_knn_weights_prefer_nearer_points_and_clamp_k():
    driving = torch.tensor([[0.0, 0, 0], [1.0, 0, 0]])
    idx, w = knn_weights(torch.tensor([[0.25, 0, 0]]), driving, k=8)
    assert idx.shape == (1, 2)  # k clamped to the 2 driving points
    assert idx[0, 0] == 0
    torch.testing.assert_close(w[0], torch.tensor([0.75, 0.25]))  # 1/d normalised


def test_knn_weights_in_chunks_match(monkeypatch):
    driving, vertices = _cloud(30, 3), _cloud(100, 4)
    whole = knn_weights(vertices, driving, k=3)
    monkeypatch.setattr(drive_module, "_CHUNK", 7)
    parts = knn_weights(vertices, driving, k=3)
    assert torch.equal(whole[0], parts[0]) and torch.allclose(whole[1], parts[1])


def test_drive_unbatched_and_trailing_dims():
    driving, vertices = _cloud(10, 5), _cloud(20, 6)
    idx, w = knn_weights(vertices, driving)
    values = torch.randn(10, 3)
    torch.testing.assert_close(drive(values, idx, w), drive(values[None], idx, w)[0])
    jac = torch.randn(2, 10, 3, 5)  # (B, Q, 3, k) Jacobians drive the same way
    out = drive(jac, idx, w)
    assert out.shape == (2, 20, 3, 5)
    torch.testing.assert_close(out[..., 2], drive(jac[..., 2], idx, w))


def test_knn_weights_errors():
    with pytest.raises(UsageError, match="vertices"):
        knn_weights(torch.zeros(5, 2), torch.zeros(3, 3))
    with pytest.raises(UsageError, match="k must be"):
        knn_weights(torch.zeros(5, 3), torch.zeros(3, 3), k=0)


def test_farthest_point_sample_deterministic_distinct_and_spread():
    points = sphere(500).float()
    a = farthest_point_sample(points, 32, 7)
    assert a.shape == (32,) and a.dtype == torch.long
    assert torch.equal(a, farthest_point_sample(points, 32, 7))
    assert torch.equal(a, farthest_point_sample(points, 32, torch.Generator().manual_seed(7)))
    assert len(set(a.tolist())) == 32
    # coverage: every point is closer to an FPS sample than to a random subset's
    rand = torch.randperm(500, generator=torch.Generator().manual_seed(0))[:32]
    cover_fps = torch.cdist(points, points[a]).min(dim=1).values.max()
    cover_rand = torch.cdist(points, points[rand]).min(dim=1).values.max()
    assert cover_fps < 0.8 * cover_rand
    # spacing: no two samples closer than half the ideal spacing of 32 points on the sphere
    d = torch.cdist(points[a], points[a]) + torch.eye(32) * 9
    assert d.min() > 0.5 * (4 * torch.pi * 0.25 / 32) ** 0.5


def test_farthest_point_sample_errors():
    with pytest.raises(UsageError, match=r"\[1, 10\]"):
        farthest_point_sample(torch.zeros(10, 3), 11)
