"""Building blocks: Fourier embedding, attention, MLP and the pre-norm / adaLN blocks."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def _diagonals() -> Tensor:
    """The 6 face diagonals (±1, ±1, 0)/sqrt(2) up to sign, one per pair of axes and sign."""
    rows = []
    for a, b in ((0, 1), (1, 2), (0, 2)):
        for sign in (1.0, -1.0):
            d = torch.zeros(3)
            d[a], d[b] = 1.0, sign
            rows.append(d / math.sqrt(2))
    return torch.stack(rows)


class FourierEmbedding(nn.Module):
    """3DShape2VecSet positional embedding ``[x, sin(u*f), cos(u*f)]``, ``f = base*2^i*pi``
    (i < bands), u the coordinates along the axes and, with ``diagonals``, also along the 6
    face diagonals; (..., 3) -> (..., out_dim).

    Axis-only features are separable (functions of one coordinate each), so cross terms such
    as y*z, which a twist needs, exist only after a non-linearity; along the diagonals
    cos(f(y-z)/sqrt2) - cos(f(y+z)/sqrt2) ~ f^2 y z makes them linear (measured: without
    them the model learned a bend but never a twist of the same spheres).
    """

    def __init__(self, bands: int, base: float = 1.0, diagonals: bool = False) -> None:
        super().__init__()
        freqs = base * math.pi * 2.0 ** torch.arange(bands, dtype=torch.float32)
        dirs = torch.eye(3) if not diagonals else torch.cat([torch.eye(3), _diagonals()])
        # (3, n_dirs * bands): x @ proj gives every direction at every frequency
        proj = (dirs.T[:, :, None] * freqs).flatten(1)
        self.register_buffer("proj", proj, persistent=False)  # not in bundles: derived
        self.out_dim = 3 + 2 * proj.shape[1]

    def forward(self, x: Tensor) -> Tensor:
        """x (..., 3) -> (..., out_dim)."""
        xf = x @ self.proj.to(x.dtype)  # (..., n_dirs * bands)
        return torch.cat([x, xf.sin(), xf.cos()], dim=-1)


class Attention(nn.Module):
    """Multi-head attention of queries x over a context (self-attention when context is x)."""

    def __init__(self, width: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.q = nn.Linear(width, width)
        self.kv = nn.Linear(width, 2 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: Tensor, context: Tensor) -> Tensor:
        """x (B, T, D), context (B or 1, S, D) -> (B, T, D). A context of one batch row
        serves every row of x: its keys and values are computed once."""
        B, T, D = x.shape
        h = self.heads
        q = self.q(x).view(B, T, h, D // h).transpose(1, 2)  # (B, h, T, D/h)
        kv = self.kv(context).view(len(context), -1, 2, h, D // h).permute(2, 0, 3, 1, 4)
        k, v = kv.expand(2, B, *kv.shape[2:])  # (B, h, S, D/h) each
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p)  # (B, h, T, D/h)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    """Two-layer GELU MLP, (..., D) -> (..., D)."""

    def __init__(self, width: int, ratio: float, dropout: float = 0.0) -> None:
        super().__init__()
        hidden = max(1, round(width * ratio))
        self.net = nn.Sequential(nn.Linear(width, hidden), nn.GELU(approximate="tanh"),
                                 nn.Dropout(dropout), nn.Linear(hidden, width))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class PointMlp(nn.Module):
    """Per-point embedding MLP, (..., in_dim) -> (..., D), with fan-in scaled weights so
    that the GELU is non-linear from the start (at the 0.02 of the other layers it is nearly
    linear). Products of inputs matter here: averaged over a surface, any linear feature of a
    zero-mean displacement field such as a twist is 0."""

    def __init__(self, in_dim: int, width: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, width), nn.GELU(approximate="tanh"),
                                 nn.Linear(width, width))
        self.finish_init()

    def finish_init(self) -> None:
        for layer in (self.net[0], self.net[2]):
            nn.init.normal_(layer.weight, std=1 / math.sqrt(layer.in_features))
            nn.init.zeros_(layer.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class Block(nn.Module):
    """Pre-norm transformer block: attention (over itself, or over a context when
    ``cross``) then an MLP, both residual."""

    def __init__(self, width: int, heads: int, mlp_ratio: float, dropout: float = 0.0,
                 cross: bool = False) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.norm_ctx = nn.LayerNorm(width) if cross else None
        self.attn = Attention(width, heads, dropout)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = Mlp(width, mlp_ratio, dropout)

    def forward(self, x: Tensor, context: Tensor | None = None) -> Tensor:
        """x (B, T, D), context (B, S, D) for a cross block -> (B, T, D)."""
        h = self.norm1(x)
        ctx = h if self.norm_ctx is None else self.norm_ctx(context)
        x = x + self.attn(h, ctx)
        return x + self.mlp(self.norm2(x))


def modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    """adaLN: x * (1 + scale) + shift, with shift/scale broadcast over x's token axis."""
    return x * (1 + scale) + shift


class AdaLNCrossBlock(nn.Module):
    """Decoder block (DiT-style adaLN): queries cross-attend to tokens, then an MLP; the
    condition c gives each a shift, scale and gate. The gates start at zero, so every block
    starts as the identity."""

    def __init__(self, width: int, heads: int, mlp_ratio: float, cond_dim: int,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False)
        self.norm_ctx = nn.LayerNorm(width)
        self.attn = Attention(width, heads, dropout)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False)
        self.mlp = Mlp(width, mlp_ratio, dropout)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(cond_dim, 6 * width))
        self.finish_init()

    def finish_init(self) -> None:
        """Zero the gates, so the block is the identity at initialisation. Shift and scale
        keep their small random weights: with them zero too (DiT's adaLN-Zero) nothing depends
        on z at first, d decode / d z = 0 and encoder and decoder start at a saddle (measured:
        an autoencoder started there never left it)."""
        D = self.ada[1].out_features // 6
        with torch.no_grad():
            for gate in (2, 5):
                self.ada[1].weight[gate * D:(gate + 1) * D].zero_()
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: Tensor, tokens: Tensor, c: Tensor) -> Tensor:
        """x (B or 1, Q, D) queries, tokens (B or 1, L, D), c (B, 1 or Q, C) condition ->
        (B, Q, D); queries and tokens of one batch row serve every condition."""
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(c).chunk(6, dim=-1)  # (B, ., D)
        x = x + gate1 * self.attn(modulate(self.norm1(x), shift1, scale1), self.norm_ctx(tokens))
        return x + gate2 * self.mlp(modulate(self.norm2(x), shift2, scale2))


class AdaLNFinal(nn.Module):
    """Last decoder layer: adaLN-modulated norm and a linear to the output."""

    def __init__(self, width: int, cond_dim: int, out_dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width, elementwise_affine=False)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(cond_dim, 2 * width))
        self.linear = nn.Linear(width, out_dim)
        self.finish_init()

    def finish_init(self) -> None:
        """Zero biases only; modulation weights and the output layer stay random. A zero
        output layer (DiT) would be pointless here, the model decodes F(z) - F(mu), and with
        a zero modulation too every decoder gradient would be exactly 0 at the start."""
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: Tensor, c: Tensor) -> Tensor:
        """x (B, Q, D), c (B, 1 or Q, C) -> (B, Q, out_dim)."""
        shift, scale = self.ada(c).chunk(2, dim=-1)
        return self.linear(modulate(self.norm(x), shift, scale))


def init_weights(module: nn.Module) -> None:
    """Default init for ``module.apply``: truncated-normal linears, zero biases. Call the
    blocks' ``finish_init`` afterwards (NeurokModel does)."""
    if isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
