"""Decoder Jacobians and the active subspace, against finite differences in float64."""

from __future__ import annotations

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model import Prior, active_subspace

from .conftest import DEVICES, make_batch, randomize_zero_inits, tiny_model


def _setup(device: str = "cpu", B: int = 1):
    model = randomize_zero_inits(tiny_model(device, torch.float64)).eval()
    batch = make_batch(B, 64, 24, device=device, dtype=torch.float64)
    with torch.no_grad():
        prior = model.encode_prior(batch["points"], batch["normals"])
    return model, prior, batch["query"]


def _finite_difference_jacobian(model, prior, query, z, h=1e-6):
    """d decode / d z by central differences -> (B, Q, 3, k)."""
    cols = []
    with torch.no_grad():
        for i in range(z.shape[-1]):
            e = torch.zeros_like(z)
            e[:, i] = h
            plus, minus = model.decode(z + e, prior, query), model.decode(z - e, prior, query)
            cols.append((plus - minus) / (2 * h))
    return torch.stack(cols, dim=-1)


@pytest.mark.parametrize("device", DEVICES)
def test_jacobian_matches_finite_differences(device):
    model, prior, query = _setup(device, B=2)
    z = prior.mu + 0.3 * torch.randn(prior.mu.shape, generator=torch.Generator().manual_seed(0),
                                     dtype=torch.float64).to(device)
    jac = model.jacobian(z, prior, query)
    fd = _finite_difference_jacobian(model, prior, query, z)
    assert jac.shape == fd.shape == (2, 24, 3, model.cfg.latent_dim)
    assert (jac - fd).norm() / fd.norm() < 1e-3


def test_jacobian_can_stay_differentiable():
    model, prior, query = _setup()
    z = prior.mu.clone().requires_grad_(True)
    jac = model.jacobian(z, prior, query, create_graph=True)
    (grad,) = torch.autograd.grad(jac.pow(2).sum(), z)  # d |J|^2 / d z, as the metric needs
    assert grad.shape == z.shape and torch.isfinite(grad).all() and grad.abs().max() > 0


@pytest.mark.parametrize("device", DEVICES)
def test_active_subspace_is_orthonormal_and_spans_the_largest_motions(device):
    model, prior, query = _setup(device)
    k = model.cfg.latent_dim
    sub = active_subspace(model, prior, query, 3)
    assert sub.basis.shape == (k, 3) and sub.origin.shape == (k,)
    assert sub.singular_values.shape == (3,)
    eye = torch.eye(3, dtype=torch.float64, device=device)
    torch.testing.assert_close(sub.basis.T @ sub.basis, eye, atol=1e-10, rtol=0)
    assert (sub.singular_values[:-1] >= sub.singular_values[1:]).all()
    torch.testing.assert_close(sub.origin, prior.mu[0])
    # the basis against the finite-difference Jacobian: |J b_i| = s_i, and J's top directions
    fd = _finite_difference_jacobian(model, prior, query, prior.mu).reshape(-1, k)
    torch.testing.assert_close((fd @ sub.basis).norm(dim=0), sub.singular_values, rtol=1e-3,
                               atol=0)
    s_all = torch.linalg.svdvals(fd)
    torch.testing.assert_close(sub.singular_values, s_all[:3], rtol=1e-3, atol=0)
    # reduced coordinates round-trip
    q = torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64, device=device)
    torch.testing.assert_close(sub.to_reduced(sub.to_latent(q)), q)


def test_active_subspace_at_another_latent_and_deterministic():
    model, prior, query = _setup()
    at = prior.mu[0] + 0.5
    a = active_subspace(model, prior, query, 2, at=at)
    b = active_subspace(model, prior, query, 2, at=at[None])
    torch.testing.assert_close(a.origin, at)
    assert torch.equal(a.basis, b.basis)


def test_active_subspace_errors():
    model, prior, query = _setup(B=2)
    with pytest.raises(UsageError, match="B = 1"):
        active_subspace(model, prior, query, 2)
    one = Prior(prior.tokens[:1], prior.mu[:1])
    with pytest.raises(UsageError, match=r"k_q must be in \[1, 8\]"):
        active_subspace(model, one, query[:1], 9)
