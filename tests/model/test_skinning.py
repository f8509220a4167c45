"""Locally affine skinning: exact on affine motions, smooth weights, rigid turns kept."""

import torch
from scipy.spatial.transform import Rotation

from neurok_cli.model.skinning import Skin, point_neighbours, skin, smooth_weights


def _cloud(n: int, seed: int) -> torch.Tensor:
    return torch.rand(n, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_weights_are_a_partition_of_unity_over_the_nearest_points():
    v, p = _cloud(500, 0), _cloud(60, 1)
    idx, w = smooth_weights(v, p, k=8)
    assert idx.shape == (500, 8) and torch.allclose(w.sum(1), torch.ones(500, dtype=w.dtype))
    assert bool((w >= 0).all())
    nearest = torch.cdist(v, p).argmin(1)
    assert bool((idx[:, 0] == nearest).all())


def test_weights_change_smoothly_with_the_vertex():
    """No cusp: a tiny move of a vertex changes its blend by a tiny amount, also across a
    driving point (inverse-distance weights jump to 1 there)."""
    p = _cloud(60, 1)
    value = torch.randn(60, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    line = p[0] + torch.linspace(-0.01, 0.01, 201, dtype=torch.float64)[:, None] * torch.tensor(
        [1.0, 0.3, 0.2], dtype=torch.float64)
    idx, w = smooth_weights(line, p, k=8)
    field = (value[idx] * w).sum(1)
    second = field[2:] - 2 * field[1:-1] + field[:-2]
    assert float(second.abs().max()) < 1e-4


def test_a_rigid_motion_is_exact_and_an_affine_one_nearly():
    """A turn and shift of the points moves every vertex exactly; a squash (a map the
    neighbourhoods' pull towards rotation resists a little) within 5 % of its move."""
    v, p = _cloud(300, 3), _cloud(80, 4)
    R = torch.as_tensor(Rotation.from_rotvec([0.3, -0.5, 0.8]).as_matrix())
    t = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)
    idx, w = smooth_weights(v, p)
    near = point_neighbours(p)
    x = skin(v, p, (p @ R.T + t)[None], idx, w, near)
    torch.testing.assert_close(x[0], v @ R.T + t, atol=1e-9, rtol=0)
    A = torch.tensor([[1.2, 0.1, 0.0], [0.0, 0.6, 0.2], [0.1, 0.0, 1.3]], dtype=torch.float64)
    x = skin(v, p, (p @ A.T)[None], idx, w, near)
    move = (v @ A.T - v).norm(dim=1)
    assert float(((x[0] - v @ A.T).norm(dim=1) / move).median()) < 0.05


def test_points_on_a_plane_still_turn_the_vertices_off_it_rigidly():
    """On a sheet the neighbourhoods span two dimensions; the maps fall back on their
    rotation across it, so a turned sheet carries the vertices beside it along."""
    p = _cloud(80, 5)
    p[:, 1] = 0.0
    v = _cloud(200, 6) * torch.tensor([1.0, 0.02, 1.0], dtype=torch.float64)
    R = torch.as_tensor(Rotation.from_rotvec([0.4, 0.2, -0.3]).as_matrix())
    idx, w = smooth_weights(v, p)
    x = skin(v, p, (p @ R.T)[None], idx, w, point_neighbours(p))
    torch.testing.assert_close(x[0], v @ R.T, atol=2e-3, rtol=0)


def test_a_frame_turn_and_shift_folded_into_the_maps_match_turning_the_vertices():
    """Skin(..., rotation, shift) is R x + shift of the skinned vertices x, frame by frame
    and across blocks of frames, and ``out`` receives the same numbers."""
    v, p = _cloud(400, 7), _cloud(50, 8)
    idx, w = smooth_weights(v, p)
    s = Skin(v, p, idx, w, point_neighbours(p))
    g = torch.Generator().manual_seed(9)
    B = 37  # more than one block of frames
    moved = p + 0.05 * torch.randn(B, *p.shape, generator=g, dtype=torch.float64)
    R = torch.as_tensor(Rotation.random(B, random_state=10).as_matrix())
    shift = torch.randn(B, 3, generator=g, dtype=torch.float64)
    plain = s(moved)
    want = plain @ R.transpose(1, 2) + shift[:, None]
    out = torch.full((B, len(v), 3), float("nan"), dtype=torch.float64)
    got = s(moved, R, shift, out=out)
    assert got is out
    torch.testing.assert_close(got, want, atol=1e-12, rtol=0)
    for f in (0, 20, 36):  # a frame alone gives what it gave in its block
        torch.testing.assert_close(s(moved[f:f + 1])[0], plain[f], atol=1e-14, rtol=0)
