"""Inverse kinematics without correspondences: Chamfer, rotations and the surface fit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation

from neurok_cli.data.metrics import chamfer_l1 as chamfer_np
from neurok_cli.errors import UsageError
from neurok_cli.model.inverse import (
    QueryField,
    chamfer_l1,
    fit_displacement,
    fit_surface,
    rotation_matrix,
)

from .conftest import make_batch, randomize_zero_inits, tiny_model


def test_rotation_matrix_is_rodrigues_and_smooth_at_zero():
    w = torch.tensor([[0.3, -1.2, 0.7], [1e-9, 0.0, 0.0], [0.0, 0.0, 0.0]],
                     dtype=torch.float64)
    R = rotation_matrix(w)
    want = Rotation.from_rotvec(w.numpy()).as_matrix()
    assert np.allclose(R.numpy(), want, atol=1e-12)
    w0 = torch.zeros(1, 3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(rotation_matrix(w0)[0, 2, 1], w0)
    assert torch.isfinite(g).all() and torch.allclose(g, torch.tensor([[1.0, 0, 0]],
                                                                      dtype=torch.float64))


def test_chamfer_matches_the_metric_and_is_differentiable():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(300, 3)), rng.normal(size=(500, 3)) + 0.1
    ta = torch.as_tensor(a)[None].requires_grad_(True)
    got = chamfer_l1(ta, torch.as_tensor(b)[None])
    value = float(got.detach())
    diag = np.linalg.norm(np.ptp(b, axis=0))
    assert value == pytest.approx(chamfer_np(a, b) * diag, rel=1e-9)
    (g,) = torch.autograd.grad(got.sum(), ta)
    assert torch.isfinite(g).all() and g.abs().sum() > 0


def _setup():
    model = randomize_zero_inits(tiny_model("cpu", torch.float64)).eval()
    batch = make_batch(1, 256, 24, dtype=torch.float64)
    with torch.no_grad():
        prior = model.encode_prior(batch["points"], batch["normals"])
    # an ellipsoid with three different axes: every rotation changes it
    u = torch.randn(400, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    surface = u / u.norm(dim=1, keepdim=True) * torch.tensor([0.5, 0.3, 0.15],
                                                              dtype=torch.float64)
    return model, prior, surface


def test_rigid_fit_recovers_a_rotation_and_translation():
    model, prior, surface = _setup()
    R = torch.as_tensor(Rotation.from_rotvec([0.0, 0.35, 0.1]).as_matrix())
    t = torch.tensor([0.05, -0.02, 0.03], dtype=torch.float64)
    target = surface @ R.T + t
    fit = fit_surface(model, prior, surface, target, prior.mu, steps=300, latent=False)
    assert fit.loss < 2e-3
    assert torch.allclose(fit.rotation, R, atol=0.02)
    assert torch.allclose(fit.translation, t, atol=0.01)


def test_latent_fit_recovers_a_decoded_shape_better_than_its_start():
    model, prior, surface = _setup()
    gen = torch.Generator().manual_seed(3)
    z_true = prior.mu + torch.randn(prior.mu.shape, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        target = (surface[None] + model.decode(z_true, prior, surface[None]))[0]
        start = chamfer_l1(surface[None] + model.decode(prior.mu, prior, surface[None]),
                           target[None])
    fit = fit_surface(model, prior, surface, target, prior.mu, steps=200, rigid=False)
    assert fit.loss < 0.2 * float(start)
    assert torch.equal(fit.rotation, torch.eye(3, dtype=torch.float64))


def test_fit_surface_rejects_bad_shapes():
    model, prior, surface = _setup()
    with pytest.raises(UsageError, match="one object"):
        fit_surface(model, prior.repeat(2), surface, surface, prior.mu)
    with pytest.raises(UsageError, match="nothing to fit"):
        fit_surface(model, prior, surface, surface, prior.mu, rigid=False, latent=False)


def test_query_field_is_decode_with_f_mu_kept_and_its_jacobian_is_the_models():
    model, prior, surface = _setup()
    field = QueryField(model, prior, surface)
    gen = torch.Generator().manual_seed(4)
    z = prior.mu + torch.randn((3, prior.mu.shape[1]), generator=gen, dtype=torch.float64)
    z[1] = prior.mu[0]
    with torch.no_grad():
        want = model.decode(z, prior.repeat(3), surface[None].expand(3, -1, -1))
    got = field(z)
    assert torch.allclose(got, want, atol=1e-12) and torch.equal(got[1], torch.zeros_like(got[1]))
    value, J = field.jacobian(z[0])
    assert torch.allclose(value, want[0], atol=1e-12)
    ref = model.jacobian(z[:1], prior, surface[None])[0]  # (P, 3, k)
    assert torch.allclose(J, ref, atol=1e-10)


def test_displacement_fit_recovers_a_decoded_latent_from_the_better_start():
    model, prior, surface = _setup()
    field = QueryField(model, prior, surface)
    gen = torch.Generator().manual_seed(5)
    z_true = prior.mu[0] + torch.randn(prior.mu.shape[1], generator=gen, dtype=torch.float64)
    target = field(z_true[None])[0]
    far = prior.mu[0] - 3 * (z_true - prior.mu[0])
    start_err = float((field(prior.mu) - target).pow(2).mean())
    z, err = fit_displacement(field, target, torch.stack([far, prior.mu[0]]), steps=40)
    assert float((field(z[None])[0] - target).pow(2).mean()) < 1e-4 * start_err
    assert err == pytest.approx(float((field(z[None])[0] - target).pow(2).mean())
                                / model.cfg.delta_scale ** 2, rel=1e-9)
