"""Layers: the Fourier embedding and the adaLN decoder block."""

from __future__ import annotations

import math

import pytest
import torch

from neurok_cli.model.layers import AdaLNCrossBlock, FourierEmbedding, init_weights

from .conftest import make_batch, tiny_model


def test_fourier_embedding_axes_and_diagonals():
    x = torch.tensor([[0.25, -0.5, 0.125]])
    axes = FourierEmbedding(2)
    assert axes.out_dim == 3 + 6 * 2
    xf = (x[0, :, None] * torch.tensor([math.pi, 2 * math.pi])).flatten()  # x0f0, x0f1, x1f0..
    torch.testing.assert_close(axes(x)[0], torch.cat([x[0], xf.sin(), xf.cos()]))
    diag = FourierEmbedding(2, diagonals=True)
    assert diag.out_dim == 3 + 2 * 9 * 2
    # the y*z cross term is linear in the diagonal features: cos(f(y-z)/√2) - cos(f(y+z)/√2)
    # = 2 sin(fy/√2) sin(fz/√2); with f = pi and the (0,1,1), (0,1,-1) directions
    e = diag(x)[0]
    cos = e[3 + 18:]
    y, z = x[0, 1], x[0, 2]
    dirs = diag.proj.T.reshape(9, 2, 3)[:, 0] / math.pi  # (9, 3) direction of band 0
    plus = int(torch.argmin((dirs - torch.tensor([0, 1, 1]) / math.sqrt(2)).norm(dim=1)))
    minus = int(torch.argmin((dirs - torch.tensor([0, 1, -1]) / math.sqrt(2)).norm(dim=1)))
    f = math.pi / math.sqrt(2)
    torch.testing.assert_close(cos[2 * minus] - cos[2 * plus],
                               2 * torch.sin(f * y) * torch.sin(f * z))


def test_adaln_block_is_the_identity_at_init():
    block = AdaLNCrossBlock(16, 2, 2.0, 8)
    block.apply(init_weights)
    block.finish_init()
    x, tokens, c = torch.randn(2, 5, 16), torch.randn(2, 4, 16), torch.randn(2, 1, 8)
    assert torch.equal(block(x, tokens, c), x)


@pytest.mark.parametrize("overrides", [{"posterior_queries": "learned"}, {"posterior_depth": 0},
                                       {"fourier_diagonals": False}, {"dropout": 0.1}])
def test_variants_run_and_keep_the_exact_rest(overrides):
    model = tiny_model(**overrides)
    batch = make_batch(2, 64, 16)
    loss, _ = model.loss(batch)
    loss.backward()
    model.eval()
    prior = model.encode_prior(batch["points"], batch["normals"])
    mu_q, _ = model.encode_posterior(batch["points"], batch["normals"],
                                     torch.zeros_like(batch["points"]), prior)
    assert torch.equal(mu_q, prior.mu)
    assert torch.count_nonzero(model.decode(prior.mu, prior, batch["query"])) == 0
