"""The deformation decoder F(z, M0): query points attend to the prior's tokens, every block
conditioned on z by adaLN."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .config import ModelConfig
from .layers import AdaLNCrossBlock, AdaLNFinal, FourierEmbedding, PointMlp
from .smooth import SmoothField


class Decoder(nn.Module):
    """F(z, M0) at query points, in units of ``delta_scale``. Queries never attend to each
    other, so each point's output depends only on its position, z and the tokens: any subset
    of driving points decodes to the same values, and a latent per point (B, Q, k) gives
    per-point Jacobians in one backward pass (see ``NeurokModel.jacobian``)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        D, C = cfg.width, cfg.cond_dim
        self.embed = FourierEmbedding(cfg.fourier_bands, diagonals=cfg.fourier_diagonals)
        self.in_proj = PointMlp(self.embed.out_dim, D)
        self.cond = nn.Sequential(nn.Linear(cfg.latent_dim, C), nn.SiLU(), nn.Linear(C, C))
        self.blocks = nn.ModuleList(
            AdaLNCrossBlock(D, cfg.heads, cfg.mlp_ratio, C, cfg.dropout)
            for _ in range(cfg.depth))
        self.final = AdaLNFinal(D, C, 6 if cfg.rigid else 3)
        self.rigid, self.delta_scale = cfg.rigid, cfg.delta_scale
        self.smooth = SmoothField(cfg.smooth_degree, C, D) if cfg.smooth_degree else None
        self.finish_init()

    def finish_init(self) -> None:
        """The z embedding gets fan-in scaled weights, not the 0.02 of the rest: c(z) must be
        O(1) and vary with z from the start, since all of the decoder's dependence on z goes
        through it (measured: the plateau at the start of overfitting one batch shrank from
        ~50 to ~20 AdamW steps at lr 3e-3)."""
        for layer in (self.cond[0], self.cond[2]):
            nn.init.normal_(layer.weight, std=1 / math.sqrt(layer.in_features))
            nn.init.zeros_(layer.bias)

    def forward(self, z: Tensor, tokens: Tensor, query: Tensor) -> Tensor:
        """z (B, k) or (B, Q, k) per point, tokens (B, L, D), query (B, Q, 3) -> (B, Q, 3),
        or (B, Q, 6) with a rigid head (the displacement, then the rotation vector). With
        a smooth head (model.smooth), its polynomial field is added to the displacement and
        its rotation to the rotation vector.

        Tokens and query may have one batch row for all B latents (the frames of one
        object): what does not depend on z (the queries' embedding, the tokens' keys and
        values) is then computed once, not B times."""
        c = self.cond(z if z.dim() == 3 else z[:, None])  # (B, 1 or Q, C)
        x = self.in_proj(self.embed(query))  # (B or 1, Q, D)
        for block in self.blocks:
            x = block(x, tokens, c)
        out = self.final(x, c)  # (B, Q, 3 or 6)
        if self.smooth is None:
            return out
        u, turn = self.smooth(c, tokens, query, self.delta_scale)
        if not self.rigid:
            return out + u
        return out + torch.cat([u, turn], -1)

    def smooth_part(self, z: Tensor, tokens: Tensor, query: Tensor) -> Tensor:
        """The smooth head's displacement alone at z (B, k), in units of ``delta_scale``,
        (B, Q, 3) (training fits it to the target by itself: ``smooth_weight``)."""
        u, _ = self.smooth(self.cond(z[:, None]), tokens, query, self.delta_scale)
        return u
