"""The two Perceiver encoders: the kinematic prior E_prior(M0) and the deformation encoder
E_post(δ, M0)."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor, nn

from .config import ModelConfig
from .layers import Block, FourierEmbedding, PointMlp

LOGVAR_INIT = -4.0  # initial log-variance of the posterior (std 0.14)


class Prior(NamedTuple):
    """What E_prior knows about one batch of objects; the instance prior is N(mu, I)."""

    tokens: Tensor  # (B, L, D) latent tokens describing each object's shape
    mu: Tensor  # (B, k) mean of the instance prior p(z | M0)

    def repeat(self, n: int) -> Prior:
        """Each object n times, sample-major: (n*B, ...), row i*B + b is object b — the
        order of ``z.reshape(n * B, k)`` for z = ``NeurokModel.sample(prior, n)`` (n, B, k)."""
        return Prior(self.tokens.repeat(n, 1, 1), self.mu.repeat(n, 1))

    def detach(self) -> Prior:
        """The same prior cut from the autograd graph."""
        return Prior(self.tokens.detach(), self.mu.detach())

    @property
    def batch_size(self) -> int:
        return self.mu.shape[0]


class PriorEncoder(nn.Module):
    """E_prior: learned latent tokens cross-attend to the Fourier-embedded surface samples
    (+ normals), then ``depth`` self-attention blocks; mu is a linear head on the mean token."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D = cfg.width
        self.embed = FourierEmbedding(cfg.fourier_bands, diagonals=cfg.fourier_diagonals)
        self.in_proj = PointMlp(self.embed.out_dim + 3, D)
        self.latents = nn.Parameter(torch.randn(cfg.latent_tokens, D) * 0.02)
        self.cross = Block(D, cfg.heads, cfg.mlp_ratio, cfg.dropout, cross=True)
        self.blocks = nn.ModuleList(
            Block(D, cfg.heads, cfg.mlp_ratio, cfg.dropout) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, cfg.latent_dim)

    def forward(self, points: Tensor, normals: Tensor) -> Prior:
        """points, normals (B, P, 3) -> Prior(tokens (B, L, D), mu (B, k))."""
        feats = torch.cat([self.embed(points), normals], dim=-1)  # (B, P, 3 + 6F + 3)
        ctx = self.in_proj(feats)  # (B, P, D)
        x = self.latents.expand(points.shape[0], -1, -1)  # (B, L, D)
        x = self.cross(x, ctx)
        for block in self.blocks:
            x = block(x)
        tokens = self.norm(x)  # (B, L, D)
        return Prior(tokens, self.head(tokens.mean(dim=1)))


class PosteriorEncoder(nn.Module):
    """E_post: queries (the prior's tokens, or fresh learned ones) cross-attend to surface
    samples carrying position, normal and displacement; self-attention; a head on the mean
    token gives the posterior q(z | δ, M0) = N(mu, diag(exp(logvar)))."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D = cfg.width
        self.delta_scale = cfg.delta_scale
        self.embed = FourierEmbedding(cfg.fourier_bands, diagonals=cfg.fourier_diagonals)
        # δ/delta_scale is O(1): low frequencies (pi/8 .. pi) resolve it without aliasing
        self.embed_delta = FourierEmbedding(4, base=1 / 8)
        self.in_proj = PointMlp(self.embed.out_dim + 3, D)
        self.delta_proj = nn.Linear(self.embed_delta.out_dim, D)
        learned = cfg.posterior_queries == "learned"
        self.latents = nn.Parameter(torch.randn(cfg.latent_tokens, D) * 0.02) if learned else None
        self.cross = Block(D, cfg.heads, cfg.mlp_ratio, cfg.dropout, cross=True)
        self.blocks = nn.ModuleList(
            Block(D, cfg.heads, cfg.mlp_ratio, cfg.dropout) for _ in range(cfg.posterior_depth))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 2 * cfg.latent_dim)
        self.finish_init()

    def finish_init(self) -> None:
        """Start near an autoencoder whose code already varies in every direction: mu rows
        with fan-in weights (not 0.02), posterior std exp(LOGVAR_INIT / 2) ~ 0.14 (not 1).
        Measured on spheres that both bend and twist (tiny size, 900 steps): from the default
        init the VAE learned only one of the two (recon stuck at 40 %); from this one about
        half of the seeds learned both (< 1 %)."""
        k = self.head.out_features // 2
        with torch.no_grad():
            nn.init.normal_(self.head.weight[:k], std=1 / math.sqrt(self.head.in_features))
            self.head.bias[:k].zero_()
            self.head.bias[k:].fill_(LOGVAR_INIT)

    def forward(self, points: Tensor, normals: Tensor, delta: Tensor,
                prior: Prior) -> tuple[Tensor, Tensor]:
        """points, normals, delta (B, P, 3), prior -> (mu_q, logvar_q), each (B, k).

        mu_q = prior.mu + G(δ) - G(0), both in one batched pass: the rest shape (δ = 0)
        encodes to the prior mean exactly, as the prior mean decodes to the rest shape, and
        z - mu carries the deformation only, not the object's shape (measured: without it an
        autoencoder of twisted spheres of varying size learned nothing, with it 0.4 % error).
        """
        B = points.shape[0]
        both = torch.cat([delta, torch.zeros_like(delta)])  # (2B, P, 3)
        d = self.embed_delta(both / self.delta_scale)  # (2B, P, 3 + 24)
        pos = torch.cat([self.embed(points), normals], dim=-1).repeat(2, 1, 1)  # (2B, P, .)
        # δ modulates centred position features, so that pooling projects δ onto the many
        # fields in_proj(x) rather than mostly onto constants. Measured at init: with δ as one
        # more input of the point MLP, E_post answered a twist 17x more weakly than a bend of
        # the same size; with this and the diagonal Fourier terms 1.5x.
        a = self.in_proj(pos)  # (2B, P, D)
        ctx = a + (a - a.mean(dim=1, keepdim=True)) * self.delta_proj(d)  # (2B, P, D)
        if self.latents is None:
            x = prior.tokens.repeat(2, 1, 1)  # (2B, L, D)
        else:
            x = self.latents.expand(2 * B, -1, -1)  # (2B, L, D)
        x = self.cross(x, ctx)
        for block in self.blocks:
            x = block(x)
        out = self.head(self.norm(x).mean(dim=1))  # (2B, 2k)
        shift, logvar = out[:B].chunk(2, dim=-1)  # (B, k) each
        mu = prior.mu + (shift - out[B:, :shift.shape[1]])
        # the usual VAE guard: exp(logvar) neither underflows nor explodes
        return mu, logvar.clamp(-30.0, 20.0)
