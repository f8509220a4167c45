"""The volume term: exact volume, its gradient, and a body that keeps its volume."""

import torch

from neurok_cli.model.volume import VolumeTerm, volume, volume_gradient

CUBE = torch.tensor([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1],
                     [1, 1, 1], [0, 1, 1]], dtype=torch.float64)
CUBE_FACES = torch.tensor([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                           [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]])


def test_the_volume_of_a_cube_and_its_gradient():
    p = (CUBE * 2.0)[None].requires_grad_(True)
    v, grad = volume_gradient(p, CUBE_FACES)
    assert float(v.detach()) == 8.0 and float(volume(p, CUBE_FACES).detach()) == 8.0
    auto = torch.autograd.grad(volume(p, CUBE_FACES).sum(), p)[0]
    torch.testing.assert_close(grad, auto)


def test_the_energy_is_zero_at_rest_and_its_forces_are_its_gradient():
    owner = torch.arange(8)
    term = VolumeTerm.build(owner, CUBE_FACES, CUBE, bulk=1e5)
    assert term is not None and term.rest_volume == 1.0
    assert float(term.energy(CUBE[None])) == 0.0
    p = (CUBE * torch.tensor([1.0, 0.8, 1.1], dtype=torch.float64))[None].requires_grad_(True)
    e = term.energy(p)
    auto = torch.autograd.grad(e.sum(), p)[0]
    torch.testing.assert_close(term.forces(p), -auto)
    J = torch.randn(1, 8, 3, 2, dtype=torch.float64)
    g = torch.einsum("sqi,sqik->sk", volume_gradient(CUBE[None], CUBE_FACES)[1], J)
    torch.testing.assert_close(term.stiffness(CUBE[None], J)[0], 1e5 * g[0, :, None] * g[0])


def test_a_sheet_or_collapsed_triangles_make_no_term():
    flat = CUBE * torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    assert VolumeTerm.build(torch.arange(8), CUBE_FACES, flat, bulk=1.0) is None
    assert VolumeTerm.build(torch.zeros(8, dtype=torch.long), CUBE_FACES, CUBE, 1.0) is None
