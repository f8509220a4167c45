"""The nearest rotation of 3 x 3 matrices: the Kabsch solution of LAPACK's SVD, to rounding."""

import torch

from neurok_cli.model.rotation import _svd_rotation, nearest_rotation


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_matches_the_svd_on_random_matrices_and_is_a_proper_rotation():
    H = torch.randn(40, 50, 3, 3, generator=_gen(0), dtype=torch.float64)
    R = nearest_rotation(H)
    torch.testing.assert_close(R, _svd_rotation(H), atol=1e-11, rtol=0)
    eye = torch.eye(3, dtype=torch.float64).expand_as(R)
    torch.testing.assert_close(R @ R.transpose(-1, -2), eye, atol=1e-13, rtol=0)
    assert float((torch.det(R) - 1).abs().max()) < 1e-13


def test_flat_neighbourhoods_turned_and_reflected_give_the_turn():
    """Rank-2 cross-covariances (a sheet's neighbourhoods) have one rotation only; a turn
    of them comes back, and a mirrored copy gives the proper rotation nearest it."""
    g = _gen(1)
    e0 = torch.randn(300, 10, 3, generator=g, dtype=torch.float64)
    e0[..., 1] = 0.0
    turn = torch.linalg.qr(torch.randn(300, 3, 3, generator=g, dtype=torch.float64))[0]
    turn = turn * torch.det(turn)[:, None, None]  # proper rotations
    H = (e0 @ turn.transpose(1, 2)).transpose(1, 2) @ e0
    torch.testing.assert_close(nearest_rotation(H), turn, atol=1e-12, rtol=0)
    mirrored = H * torch.tensor([1.0, 1.0, -1.0], dtype=torch.float64)[:, None]
    torch.testing.assert_close(nearest_rotation(mirrored), _svd_rotation(mirrored),
                               atol=1e-12, rtol=0)


def test_degenerate_matrices_fall_back_on_the_svd():
    """Zero and rank-1 matrices have no unique answer: they get the SVD's."""
    H = torch.zeros(4, 3, 3, dtype=torch.float64)
    H[2:] = torch.randn(2, 3, 1, generator=_gen(2), dtype=torch.float64) @ torch.randn(
        2, 1, 3, generator=_gen(3), dtype=torch.float64)
    torch.testing.assert_close(nearest_rotation(H), _svd_rotation(H), atol=1e-12, rtol=0)


def test_float32_and_empty_batches():
    H = torch.randn(5, 3, 3, generator=_gen(4))
    torch.testing.assert_close(nearest_rotation(H), _svd_rotation(H))
    assert nearest_rotation(torch.zeros(0, 3, 3, dtype=torch.float64)).shape == (0, 3, 3)
