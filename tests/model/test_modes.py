"""The linear-modes baseline: vibration modes of a spring network linearised at rest."""

from __future__ import annotations

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model.reduced import linear_modes

F64 = torch.float64


def lattice() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A 4 x 3 x 2 box of points, unequal masses, springs to neighbours and diagonals."""
    g = torch.stack(torch.meshgrid(torch.arange(4.0), torch.arange(3.0), torch.arange(2.0),
                                   indexing="ij"), dim=-1).reshape(-1, 3).to(F64) * 0.1
    d = (g[:, None] - g[None]).norm(dim=-1)
    i, j = torch.nonzero((d > 0) & (d < 0.1 * 1.5), as_tuple=True)
    edges = torch.stack([i[i < j], j[i < j]], dim=1)
    mass = 1.0 + torch.arange(len(g), dtype=F64) % 3
    stiffness = 100.0 + 10.0 * (torch.arange(len(edges), dtype=F64) % 4)
    return g, mass, edges, stiffness


def stiffness_matrix(rest, edges, stiffness) -> torch.Tensor:
    """The Hessian of ½ Σ k (|x_a - x_b| - L)² at rest, by autograd."""
    length = (rest[edges[:, 0]] - rest[edges[:, 1]]).norm(dim=-1)

    def energy(x):
        x = x.reshape(-1, 3)
        l_now = (x[edges[:, 0]] - x[edges[:, 1]]).norm(dim=-1)
        return 0.5 * (stiffness * (l_now - length) ** 2).sum()

    return torch.autograd.functional.hessian(energy, rest.reshape(-1))


def test_modes_are_vibration_modes_free_of_rigid_motion():
    rest, mass, edges, k = lattice()
    shape = linear_modes(rest, mass, edges, k, 5)
    phi = shape.linear.reshape(-1, 5)  # (3P, k)
    M = torch.diag(mass.repeat_interleave(3))
    K = stiffness_matrix(rest, edges, k)
    gram, stiff = phi.T @ M @ phi, phi.T @ K @ phi
    # M- and K-orthogonal, so K phi = lambda M phi within the modes; ascending frequencies
    off = ~torch.eye(5, dtype=torch.bool)
    assert stiff[off].abs().max() < 1e-8 * stiff.diagonal().max()
    assert gram[off].abs().max() < 1e-8 * gram.diagonal().max()
    lam = stiff.diagonal() / gram.diagonal()
    assert (lam[1:] >= lam[:-1] - 1e-9).all() and lam[0] > 1e-6
    # no momentum and no angular momentum: the rigid motions are removed
    modes = shape.linear  # (P, 3, k)
    assert (mass[:, None, None] * modes).sum(0).abs().max() < 1e-9
    arm = rest - (mass[:, None] * rest).sum(0) / mass.sum()
    moment = (mass[:, None, None] * torch.linalg.cross(arm[:, :, None].expand_as(modes), modes,
                                                       dim=1)).sum(0)
    assert moment.abs().max() < 1e-9
    assert torch.equal(shape.quadratic, torch.zeros_like(shape.quadratic))
    # each mode moves its farthest point 10 % of the extent
    assert torch.allclose(modes.norm(dim=1).max(dim=0).values, torch.full((5,), 0.03, dtype=F64))


def test_clamped_points_do_not_move_and_modes_repeat_exactly():
    rest, mass, edges, k = lattice()
    fixed = rest[:, 0] < 0.05
    a = linear_modes(rest, mass, edges, k, 4, fixed=fixed)
    assert a.linear[fixed].abs().max() == 0
    b = linear_modes(rest, mass, edges, k, 4, fixed=fixed)
    assert torch.equal(a.linear, b.linear)
    with pytest.raises(UsageError, match="free points"):
        linear_modes(rest, mass, edges, k, 4, fixed=torch.ones(len(rest), dtype=torch.bool))
