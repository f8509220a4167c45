"""NeurokModel: shapes, the exact rest shape, the loss, fitting, sampling, determinism."""

from __future__ import annotations

import math

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model import Prior, kl_divergence
from neurok_cli.model.neurok import edge_strain

from .conftest import DEVICES, make_batch, randomize_zero_inits, tiny_model, train_steps

B, P, Q = 3, 96, 40


@pytest.mark.parametrize("device", DEVICES)
def test_shapes_of_every_method(device):
    model = tiny_model(device)
    cfg = model.cfg
    k, L, D = cfg.latent_dim, cfg.latent_tokens, cfg.width
    batch = make_batch(B, P, Q, device=device)
    prior = model.encode_prior(batch["points"], batch["normals"])
    assert isinstance(prior, Prior)
    assert prior.tokens.shape == (B, L, D) and prior.mu.shape == (B, k)
    mu_q, logvar_q = model.encode_posterior(batch["points"], batch["normals"],
                                            batch["delta_points"], prior)
    assert mu_q.shape == logvar_q.shape == (B, k)
    assert model.decode(mu_q, prior, batch["query"]).shape == (B, Q, 3)
    assert model.field(mu_q, prior, batch["query"]).shape == (B, Q, 3)
    assert model.jacobian(mu_q, prior, batch["query"]).shape == (B, Q, 3, k)
    assert model.reconstruct(batch).shape == (B, Q, 3)
    z = model.sample(prior, 5, torch.Generator().manual_seed(0))
    assert z.shape == (5, B, k) and z.device.type == device
    many = model.decode(z.reshape(5 * B, k), prior.repeat(5), batch["query"].repeat(5, 1, 1))
    assert many.shape == (5 * B, Q, 3)
    assert model.fit_latent(prior, batch["query"], batch["delta_query"], steps=3).shape == (B, k)
    loss, stats = model.loss(batch)
    assert loss.shape == () and loss.device.type == device
    assert set(stats) == {"loss", "recon", "kl", "rmse"}  # no strain term: no strain stat
    assert all(isinstance(v, float) and math.isfinite(v) for v in stats.values())


@pytest.mark.parametrize("device", DEVICES)
def test_decode_at_the_prior_mean_is_exactly_zero(device):
    model = randomize_zero_inits(tiny_model(device))  # a decoder that depends on z
    batch = make_batch(B, P, Q, device=device)
    prior = model.encode_prior(batch["points"], batch["normals"])
    assert torch.count_nonzero(model.decode(prior.mu, prior, batch["query"])) == 0
    z = prior.mu + 0.5
    assert model.decode(z, prior, batch["query"]).abs().max() > 0
    # mixed rows: only the rows at the mean are zero
    mixed = torch.stack([prior.mu[0], z[1], prior.mu[2]])
    out = model.decode(mixed, prior, batch["query"])
    assert torch.count_nonzero(out[[0, 2]]) == 0 and out[1].abs().max() > 0


@pytest.mark.parametrize("device", DEVICES)
def test_decode_samples_of_one_object_agree_with_decode(device):
    model = randomize_zero_inits(tiny_model(device))
    batch = make_batch(B, P, Q, device=device)
    prior = model.encode_prior(batch["points"][:1], batch["normals"][:1])
    z = prior.mu + torch.randn(5, prior.mu.shape[1], device=device)
    z[2] = prior.mu[0]  # a sample at the mean decodes to exactly zero here too
    query = batch["query"][:1]
    got = model.decode_samples(z, prior, query)
    want = model.decode(z, prior.repeat(5), query.repeat(5, 1, 1))
    assert got.shape == (5, Q, 3)
    assert torch.allclose(got, want, atol=1e-6)
    assert torch.count_nonzero(got[2]) == 0 and got[0].abs().max() > 0
    with pytest.raises(UsageError):
        model.decode_samples(z, prior.repeat(2), query)


@pytest.mark.parametrize("device", DEVICES)
def test_rest_shape_encodes_to_the_prior_mean(device):
    model = tiny_model(device)
    batch = make_batch(B, P, Q, device=device)
    prior = model.encode_prior(batch["points"], batch["normals"])
    zero = torch.zeros_like(batch["points"])
    mu_q, _ = model.encode_posterior(batch["points"], batch["normals"], zero, prior)
    assert torch.equal(mu_q, prior.mu)


def test_kl_divergence_closed_form():
    mu_q = torch.tensor([[1.0, 0.0], [0.5, -2.0]])
    logvar_q = torch.tensor([[0.0, math.log(4.0)], [math.log(0.25), 0.0]])
    mu_p = torch.tensor([[0.0, 0.0], [0.5, 1.0]])
    # 0.5 * sum(var + (mu_q - mu_p)^2 - 1 - log var) per row, by hand
    first = 0.5 * ((1 + 1 - 1 - 0) + (4 + 0 - 1 - math.log(4)))
    second = 0.5 * ((0.25 + 0 - 1 - math.log(0.25)) + (1 + 9 - 1 - 0))
    torch.testing.assert_close(kl_divergence(mu_q, logvar_q, mu_p),
                               torch.tensor([first, second]))
    assert kl_divergence(mu_p, torch.zeros_like(mu_p), mu_p).abs().max() == 0


def test_loss_is_the_documented_formula():
    model = tiny_model().eval()  # eval: z = posterior mean, no sampling
    batch = make_batch(B, P, Q)
    loss, stats = model.loss(batch)
    prior = model.encode_prior(batch["points"], batch["normals"])
    mu_q, logvar_q = model.encode_posterior(batch["points"], batch["normals"],
                                            batch["delta_points"], prior)
    err = model.decode(mu_q, prior, batch["query"]) - batch["delta_query"]
    recon = err.pow(2).mean(dim=(1, 2))
    kl = kl_divergence(mu_q, logvar_q, prior.mu)
    cfg = model.cfg
    want = (recon / cfg.delta_scale**2 + cfg.kl_weight * kl / (3 * Q)).mean()
    torch.testing.assert_close(loss, want)
    assert stats["recon"] == pytest.approx(float(recon.detach().mean()), rel=1e-5)
    assert stats["kl"] == pytest.approx(float(kl.detach().mean()), rel=1e-5)
    assert stats["rmse"] == pytest.approx(stats["recon"] ** 0.5)
    assert stats["loss"] == pytest.approx(float(loss.detach()))


def test_edge_strain_of_a_uniform_stretch():
    # a cubic lattice: every point's 6 nearest neighbours (fewer on the faces, then
    # diagonals) are no shorter than half the mean edge, so no length is floored
    axis = torch.arange(5, dtype=torch.float64) * 0.1
    rest = torch.cartesian_prod(axis, axis, axis)[None]  # (1, 125, 3)
    still = torch.zeros_like(rest)
    assert float(edge_strain(rest, still, still, 6)) == 0.0
    torch.testing.assert_close(edge_strain(rest, 0.1 * rest, still, 6),
                               torch.tensor([0.01], dtype=torch.float64))
    # a rigid shift changes no length; the target's own stretch is what is compared against
    torch.testing.assert_close(edge_strain(rest, still + 0.3, still, 6),
                               torch.zeros(1, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(edge_strain(rest, 0.1 * rest, 0.1 * rest, 6),
                               torch.zeros(1, dtype=torch.float64))


def test_strain_weight_adds_the_weighted_strain_to_the_loss():
    batch = make_batch(B, P, Q)
    plain = randomize_zero_inits(tiny_model()).eval()
    base, _ = plain.loss(batch)
    weighted = randomize_zero_inits(tiny_model(strain_weight=2.5)).eval()
    loss, stats = weighted.loss(batch)
    prior = weighted.encode_prior(batch["points"], batch["normals"])
    mu_q, _ = weighted.encode_posterior(batch["points"], batch["normals"],
                                        batch["delta_points"], prior)
    strain = edge_strain(batch["query"], weighted.decode(mu_q, prior, batch["query"]),
                         batch["delta_query"], weighted.cfg.strain_neighbours)  # (B,)
    assert float(strain.detach().min()) > 0
    assert stats["strain"] == pytest.approx(float(strain.detach().mean()) ** 0.5, rel=1e-5)
    torch.testing.assert_close(loss, base + 2.5 * strain.mean())
    loss.backward()
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in weighted.parameters())


def test_relative_floor_divides_each_object_by_its_own_deformation():
    batch = make_batch(B, P, Q)
    batch["delta_query"] = batch["delta_query"] * torch.tensor([1.0, 10.0, 0.1])[:, None, None]
    plain = randomize_zero_inits(tiny_model()).eval()
    relative = randomize_zero_inits(tiny_model(relative_floor=0.5)).eval()
    s = relative.cfg.delta_scale
    for i in range(B):
        one = {**batch, "weight": torch.eye(B)[i]}
        own = float(batch["delta_query"][i].pow(2).mean()) / s**2 + 0.5**2
        torch.testing.assert_close(relative.loss(one)[0], plain.loss(one)[0] / own)
    with pytest.raises(UsageError, match="relative_floor"):
        tiny_model(relative_floor=-1.0)


def test_loss_weights_objects():
    model = tiny_model().eval()
    batch = make_batch(B, P, Q)
    weighted, _ = model.loss({**batch, "weight": torch.tensor([1.0, 0.0, 0.0])})
    first, _ = model.loss({k: v[:1] for k, v in batch.items()})
    torch.testing.assert_close(weighted, first)


def test_loss_checks_the_batch():
    model = tiny_model()
    batch = make_batch(B, P, Q)
    with pytest.raises(UsageError, match="lacks delta_query"):
        model.loss({k: v for k, v in batch.items() if k != "delta_query"})
    with pytest.raises(UsageError, match="normals has shape"):
        model.loss({**batch, "normals": batch["normals"][:, :5]})
    with pytest.raises(UsageError, match="weight"):
        model.loss({**batch, "weight": torch.ones(B + 1)})
    prior = model.encode_prior(batch["points"], batch["normals"])
    with pytest.raises(UsageError, match="decode"):
        model.decode(prior.mu[:1], prior, batch["query"])


@pytest.mark.parametrize("device", DEVICES)
def test_overfitting_one_batch_reduces_the_error(device):
    model = tiny_model(device)
    batch = make_batch(4, 128, 64, device=device)
    model.eval()
    with torch.no_grad():
        initial = model.loss(batch)[1]["recon"]
    model.train()
    train_steps(model, batch, 100, optimizer=torch.optim.AdamW)
    model.eval()
    with torch.no_grad():
        final = model.loss(batch)[1]["recon"]
    assert final < 0.2 * initial


def test_fit_latent_reduces_error_and_leaves_the_model_alone():
    model = randomize_zero_inits(tiny_model()).train()
    batch = make_batch(2, P, Q)
    prior = model.encode_prior(batch["points"], batch["normals"])
    with torch.no_grad():  # a target the decoder can reach
        z_true = prior.mu + torch.randn(prior.mu.shape, generator=torch.Generator().manual_seed(3))
        target = model.decode(z_true, prior, batch["query"])
    model.decoder.final.linear.weight.requires_grad_(False)  # flags must survive as they are
    before = {k: v.clone() for k, v in model.state_dict().items()}
    flags = {k: p.requires_grad for k, p in model.named_parameters()}

    def error(z):
        with torch.no_grad():
            return float((model.decode(z, prior, batch["query"]) - target).pow(2).mean())

    z = model.fit_latent(prior, batch["query"], target, steps=60, lr=0.05)
    assert error(z) < 0.1 * error(prior.mu)
    assert model.training
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    assert flags == {k: p.requires_grad for k, p in model.named_parameters()}
    assert all(p.grad is None for p in model.parameters())
    # from the posterior mean when the observed displacement is given
    z2 = model.fit_latent(prior, batch["query"], target, steps=0, points=batch["points"],
                          normals=batch["normals"], delta=batch["delta_points"])
    mu_q, _ = model.eval().encode_posterior(batch["points"], batch["normals"],
                                            batch["delta_points"], prior)
    torch.testing.assert_close(z2, mu_q)
    with pytest.raises(UsageError, match="all of points, normals and delta"):
        model.fit_latent(prior, batch["query"], target, points=batch["points"])


def test_fit_latent_prior_weight_pulls_toward_the_mean():
    model = randomize_zero_inits(tiny_model())
    batch = make_batch(1, P, Q)
    prior = model.encode_prior(batch["points"], batch["normals"])
    target = batch["delta_query"] * 3
    free = model.fit_latent(prior, batch["query"], target, steps=40)
    held = model.fit_latent(prior, batch["query"], target, steps=40, prior_weight=1e4)
    assert (held - prior.mu).norm() < (free - prior.mu).norm()


@pytest.mark.parametrize("device", DEVICES)
def test_sample_is_seeded_and_centred_on_the_prior(device):
    model = tiny_model(device)
    batch = make_batch(2, P, Q, device=device)
    prior = model.encode_prior(batch["points"], batch["normals"])
    a = model.sample(prior, 4000, torch.Generator().manual_seed(5))
    b = model.sample(prior, 4000, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    assert not torch.equal(a, model.sample(prior, 4000, torch.Generator().manual_seed(6)))
    torch.testing.assert_close(a.mean(0), prior.mu.detach(), atol=0.1, rtol=0)
    torch.testing.assert_close(a.std(0), torch.ones_like(prior.mu), atol=0.1, rtol=0)
    if device != "cpu":  # a CPU generator gives the same draws on every device
        cpu = tiny_model("cpu")
        prior_cpu = cpu.encode_prior(*(batch[k].cpu() for k in ("points", "normals")))
        eps_dev = a - prior.mu.detach()
        eps_cpu = cpu.sample(prior_cpu, 4000, torch.Generator().manual_seed(5)) - prior_cpu.mu
        torch.testing.assert_close(eps_dev.cpu(), eps_cpu.detach())


def test_sample_with_a_fitted_spread_has_its_covariance():
    model = tiny_model()
    batch = make_batch(2, P, Q)
    prior = model.encode_prior(batch["points"], batch["normals"])
    k = prior.mu.shape[-1]
    rng = torch.Generator().manual_seed(3)
    A = torch.randn(k, k, generator=rng, dtype=torch.float64) * 0.1
    L = torch.linalg.cholesky(A @ A.T + 0.01 * torch.eye(k, dtype=torch.float64))
    z = model.sample(prior, 20000, torch.Generator().manual_seed(5), scale_tril=L)
    d = (z - prior.mu.detach())[:, 0].double()
    torch.testing.assert_close(d.mean(0), torch.zeros(k, dtype=torch.float64), atol=0.01,
                               rtol=0)
    torch.testing.assert_close(d.T @ d / len(d), L @ L.T, atol=0.01, rtol=0)
    eps = model.sample(prior, 20000, torch.Generator().manual_seed(5)) - prior.mu.detach()
    torch.testing.assert_close(d.float(), eps[:, 0] @ L.T.float(), atol=1e-5, rtol=0)
    with pytest.raises(UsageError, match="scale_tril"):
        model.sample(prior, 2, scale_tril=torch.eye(k + 1))


def test_same_seed_same_outputs():
    batch = make_batch(B, P, Q)
    outs = []
    for _ in range(2):
        model = tiny_model(seed=11).train()
        torch.manual_seed(4)  # the reparameterisation noise
        loss, _ = model.loss(batch)
        outs.append((loss, model.reconstruct(batch)))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    assert not torch.equal(tiny_model(seed=12).reconstruct(batch), outs[0][1])


def test_dropout_is_off_in_eval():
    model = tiny_model(dropout=0.5).eval()
    batch = make_batch(B, P, Q)
    assert torch.equal(model.reconstruct(batch), model.reconstruct(batch))
