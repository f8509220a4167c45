"""The decoder's smooth head: polynomial fields, their rotation, and models grown into it."""

from __future__ import annotations

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model import model_config
from neurok_cli.model.smooth import SmoothField, exponents, monomials

from .conftest import randomize_zero_inits, tiny_model, train_steps


def _batch(B: int = 2, P: int = 256, Q: int = 128) -> dict:
    g = torch.Generator().manual_seed(4)
    return {"points": torch.rand(B, P, 3, generator=g) - 0.5,
            "normals": torch.randn(B, P, 3, generator=g),
            "delta_points": 0.01 * torch.randn(B, P, 3, generator=g),
            "query": torch.rand(B, Q, 3, generator=g) - 0.5,
            "delta_query": 0.01 * torch.randn(B, Q, 3, generator=g)}


def test_the_monomials_of_a_degree_are_all_there_once():
    assert len(exponents(1)) == 4 and len(exponents(3)) == 20
    assert exponents(3)[0] == (0, 0, 0) and len(set(exponents(3))) == 20
    assert all(sum(e) <= 3 for e in exponents(3))


def test_monomial_gradients_are_the_derivatives():
    x = (torch.rand(5, 7, 3, dtype=torch.float64) - 0.5).requires_grad_(True)
    powers = torch.tensor(exponents(3))
    values, grads = monomials(x, powers)
    for m in range(len(powers)):
        (g,) = torch.autograd.grad(values[..., m].sum(), x, retain_graph=True)
        assert torch.allclose(grads[..., m, :], g, atol=1e-12)


def test_the_rotation_of_a_turning_field_is_its_angle():
    """u = w x (x - c), a small rotation about c, drawn by the linear monomials: the
    field's rotation vector is w at every point."""
    field = SmoothField(1, cond_dim=4, width=8).double()
    w, c, scale = torch.tensor([0.01, -0.02, 0.03]), torch.tensor([0.1, 0.0, -0.2]), 0.05
    cross = torch.tensor([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    powers = exponents(1)  # 1, then one of x, y, z each
    coef = torch.zeros(3, len(powers), dtype=torch.float64)
    for j, p in enumerate(powers):
        if sum(p) == 1:
            coef[:, j] = cross[:, p.index(1)] / 2  # monomials of s = 2x
    coef[:, powers.index((0, 0, 0))] = -cross @ c
    coef = coef / scale
    with torch.no_grad():
        field.out.bias.copy_(coef.reshape(-1))
    x = torch.rand(1, 50, 3, dtype=torch.float64) - 0.5
    u, turn = field(torch.zeros(1, 1, 4, dtype=torch.float64),
                    torch.zeros(1, 3, 8, dtype=torch.float64), x, scale)
    assert torch.allclose(u * scale, (x - c) @ cross.T.double(), atol=1e-12)
    assert torch.allclose(turn, w.double().expand_as(turn), atol=1e-12)


def test_a_smooth_head_keeps_the_rest_exact_and_gives_per_point_jacobians():
    model = randomize_zero_inits(tiny_model(rigid=True, smooth_degree=3)).eval()
    with torch.no_grad():
        model.decoder.smooth.out.weight.normal_(0, 0.5)
    b = _batch()
    prior = model.encode_prior(b["points"], b["normals"])
    d, turn = model.decode_rigid(prior.mu, prior, b["query"])
    assert torch.equal(d, torch.zeros_like(d)) and torch.equal(turn, torch.zeros_like(turn))
    z = prior.mu + 0.3
    d = model.decode(z, prior, b["query"])
    J = model.jacobian(z, prior, b["query"])  # (B, Q, 3, k)
    eps = 1e-3
    dz = torch.zeros_like(z)
    dz[:, 2] = eps
    with torch.no_grad():
        step = (model.decode(z + dz, prior, b["query"]) - d) / eps
    assert torch.allclose(J[..., 2], step, atol=2e-2 * float(step.abs().max()))


def test_a_model_grown_into_more_latent_dims_and_a_smooth_head_decodes_as_before():
    small = randomize_zero_inits(tiny_model(rigid=True)).eval()
    big = tiny_model(rigid=True, latent_dim=12, smooth_degree=3, seed=5)
    big.load_grown(small.state_dict())
    big.eval()
    b = _batch()
    with torch.no_grad():
        p0 = small.encode_prior(b["points"], b["normals"])
        p = big.encode_prior(b["points"], b["normals"])
        assert torch.equal(p.mu[:, :8], p0.mu) and torch.equal(p.mu[:, 8:], torch.zeros(2, 4))
        z0, _ = small.encode_posterior(b["points"], b["normals"], b["delta_points"], p0)
        z, _ = big.encode_posterior(b["points"], b["normals"], b["delta_points"], p)
        assert torch.allclose(z[:, :8], z0, atol=1e-6)
        assert z[:, 8:].abs().max() > 0  # the new dims read the deformation
        same = torch.cat([z0, p.mu[:, 8:]], dim=1)
        assert torch.allclose(big.relative(same, p, b["query"]),
                              small.relative(z0, p0, b["query"]), atol=1e-6)


def test_a_model_grows_from_a_bundle_read_onto_another_device():
    """Training loads the bundle on the CPU and grows it into a model already on the GPU;
    the meta device stands in for the GPU (mixing it with the CPU fails as CUDA does)."""
    small = tiny_model(rigid=True)
    big = tiny_model(rigid=True, latent_dim=12, smooth_degree=3).to("meta")
    big.load_grown(small.state_dict())
    assert all(p.device.type == "meta" for p in big.parameters())


def test_a_latent_cannot_shrink_nor_a_smooth_head_change_or_exceed_degree_four():
    big = tiny_model(latent_dim=12)
    with pytest.raises(UsageError, match="cannot grow"):
        tiny_model().load_grown(big.state_dict())
    with pytest.raises(UsageError, match="smooth_degree"):
        model_config("tiny", smooth_degree=5)
    cubic = tiny_model(smooth_degree=3)
    with pytest.raises(UsageError, match="cannot grow these parameters.*smooth"):
        tiny_model(smooth_degree=2).load_grown(cubic.state_dict())
    with pytest.raises(UsageError, match="cannot grow these parameters.*smooth"):
        tiny_model().load_grown(cubic.state_dict())


def test_the_smooth_term_fits_the_heads_field_alone_to_the_target():
    model = randomize_zero_inits(tiny_model(rigid=True, smooth_degree=2, smooth_weight=1.0))
    model.eval()  # z = the posterior mean: one object's code, not a draw
    b = _batch()
    x = b["query"]  # a smooth target: a bend the head can draw exactly
    b["delta_query"] = 0.02 * torch.stack([x[..., 1]**2, -x[..., 0] * x[..., 1],
                                           torch.zeros_like(x[..., 0])], -1)
    _, stats = model.loss(b)
    first = stats["smooth"]
    stats = train_steps(model, b, 60)
    assert stats["smooth"] < 0.5 * first
    with pytest.raises(UsageError, match="smooth_weight needs"):
        model_config("tiny", smooth_weight=1.0)
