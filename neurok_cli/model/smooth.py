"""The decoder's smooth part: a displacement field that is a polynomial in the canonical
coordinates, its coefficients a function of z and of the object.

Why: the engine's deformations are smooth fields of the rest shape. Least squares of one
cubic polynomial field per pair (20 monomials per axis) leaves 0.04x of the rest pose's
error on the test split's beams, 0.15x on soft bodies and 0.20x on cloth, where the
attention decoder alone reconstructs 0.60x, 0.73x and 0.43x (benchmarks/bench_smooth.py, in
commit 8bb475c).
A point decoded on its own by attention draws such a field only approximately, point by
point; this head draws it exactly, and the attention decoder adds what is not smooth (a
fold, a contact patch).

The field's rotation is its curl's half (the skew part of its gradient): the rigid head's
rotation vectors get it added, so a bend drawn by the polynomial also turns the points
it carries, as blending at the vertices needs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def exponents(degree: int) -> list[tuple[int, int, int]]:
    """The monomials x^a y^b z^c of total degree <= ``degree``, constant first."""
    return sorted(((a, b, c) for a in range(degree + 1) for b in range(degree + 1 - a)
                   for c in range(degree + 1 - a - b)), key=lambda e: (sum(e), e[::-1]))


def monomials(x: Tensor, powers: Tensor) -> tuple[Tensor, Tensor]:
    """Monomials of s = 2x (canonical coordinates span [-0.5, 0.5], so s spans [-1, 1])
    and their gradients with respect to x: x (..., 3), powers (m, 3) long ->
    (values (..., m), gradients (..., m, 3))."""
    s = 2 * x
    top = int(powers.max())
    # s^p for p = 0..top, (..., 3, top + 1)
    table = torch.stack([torch.ones_like(s)] + [s**p for p in range(1, top + 1)], -1)
    picked = table[..., torch.arange(3), powers]  # (..., m, 3): s_i^(p_i)
    values = picked.prod(-1)  # (..., m)
    lower = table[..., torch.arange(3), (powers - 1).clamp_min(0)]  # s_i^(p_i - 1)
    grads = []
    for i in range(3):
        others = [picked[..., j] for j in range(3) if j != i]
        grads.append(2 * powers[:, i].to(x.dtype) * lower[..., i] * others[0] * others[1])
    return values, torch.stack(grads, -1)


class SmoothField(nn.Module):
    """u(x) = sum_m c_m(z, M0) phi_m(x): a polynomial displacement (in units of
    ``delta_scale``) whose coefficients an MLP reads from the decoder's z embedding and the
    prior's mean token. Its last layer starts at 0: a model grown from one without it
    decodes as before until trained."""

    def __init__(self, degree: int, cond_dim: int, width: int, hidden: int = 128) -> None:
        super().__init__()
        self.register_buffer("powers", torch.tensor(exponents(degree)), persistent=False)
        m = len(self.powers)
        self.from_cond = nn.Linear(cond_dim, hidden)
        self.from_shape = nn.Linear(width, hidden, bias=False)
        self.out = nn.Linear(hidden, 3 * m)
        self.finish_init()

    def finish_init(self) -> None:
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, c: Tensor, tokens: Tensor, query: Tensor, scale: float
                ) -> tuple[Tensor, Tensor]:
        """c (B, 1 or Q, C), tokens (B or 1, L, D), query (B or 1, Q, 3) -> the
        displacement (B, Q, 3) in units of ``scale`` and the field's rotation vector
        (B, Q, 3), radians (half its curl, in canonical units)."""
        h = self.from_cond(c) + self.from_shape(tokens.mean(dim=1, keepdim=True))
        coef = self.out(nn.functional.silu(h))  # (B, 1 or Q, 3m)
        coef = coef.unflatten(-1, (3, -1))  # (B, 1 or Q, 3, m)
        values, grads = monomials(query, self.powers)  # (B|1, Q, m), (B|1, Q, m, 3)
        u = (coef * values[..., None, :]).sum(-1)  # (B, Q, 3)
        du = coef @ grads * scale  # (B, Q, 3, 3): du_i / dx_j in canonical units
        curl = torch.stack([du[..., 2, 1] - du[..., 1, 2], du[..., 0, 2] - du[..., 2, 0],
                            du[..., 1, 0] - du[..., 0, 1]], -1)
        return u, 0.5 * curl
