"""Strain limiting: edges outside the band come back into it; nothing else moves."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import trimesh

from neurok_cli.model.strain import (
    CHUNK,
    driving_graph,
    edge_lengths,
    limit_strain,
    mesh_edges,
)


def _sheet(n: int = 9) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    v = np.stack([u.ravel(), np.zeros(n * n), w.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), \
        idx[:-1, 1:].ravel()
    faces = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return v, faces


def _strain(x: torch.Tensor, rest: torch.Tensor, edges: np.ndarray) -> torch.Tensor:
    e = torch.as_tensor(edges)
    return edge_lengths(x, e) / edge_lengths(rest, e) - 1.0


def test_mesh_edges_are_unique_and_sorted():
    faces = np.array([[0, 1, 2], [2, 1, 3]])
    assert mesh_edges(faces).tolist() == [[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]


def test_driving_graph_joins_regions_that_touch():
    # a strip of 4 vertices 0-1-2-3; owners 0,0,1,1: one edge between the two regions
    edges = np.array([[0, 1], [1, 2], [2, 3]])
    assert driving_graph(edges, np.array([0, 0, 1, 1])).tolist() == [[0, 1]]
    assert driving_graph(edges, np.array([0, 0, 0, 0])).shape == (0, 2)


def test_stretched_and_shrunk_sheets_come_back_into_the_band():
    v, faces = _sheet()
    e = mesh_edges(faces)
    rest = torch.as_tensor(v)
    g = torch.Generator().manual_seed(0)
    x = torch.stack([rest * 1.2, rest * 0.85,
                     rest + 0.02 * torch.randn(rest.shape, generator=g, dtype=rest.dtype)])
    before = _strain(x, rest, e).abs()
    assert (before.amax(dim=1) > 0.1).all()
    y, sweeps = limit_strain(x, rest, e, 0.05, iterations=2000, tol=1e-4)
    assert 0 < sweeps < 2000  # converged before the cap
    assert (_strain(y, rest, e).abs() <= 0.05 + 1e-3).all()


def test_edges_inside_the_band_are_not_touched():
    v, faces = _sheet()
    rest = torch.as_tensor(v)
    # a rigid turn and a small bend: every edge within 5 %
    c, s = np.cos(0.3), np.sin(0.3)
    R = torch.tensor([[c, 0, s], [0, 1, 0], [-s, 0, c]], dtype=rest.dtype)
    x = (rest @ R.T + torch.tensor([0.3, 1.0, -2.0], dtype=rest.dtype))[None]
    x[..., 1] += 0.01 * torch.sin(3 * rest[:, 0])
    assert (_strain(x, rest, mesh_edges(faces)).abs() < 0.05).all()
    y, sweeps = limit_strain(x, rest, mesh_edges(faces), 0.05)
    assert sweeps == 0 and torch.equal(y, x)


def test_the_projection_turns_and_moves_with_the_shape():
    v, faces = _sheet(7)
    e = mesh_edges(faces)
    rest = torch.as_tensor(v)
    g = torch.Generator().manual_seed(1)
    x = rest + 0.05 * torch.randn(rest.shape, generator=g, dtype=rest.dtype)
    c, s = np.cos(1.1), np.sin(1.1)
    R = torch.tensor([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=rest.dtype)
    t = torch.tensor([1.0, -2.0, 0.5], dtype=rest.dtype)
    a, _ = limit_strain(x, rest, e, 0.02, iterations=50)
    b, _ = limit_strain(x @ R.T + t, rest, e, 0.02, iterations=50)
    assert torch.allclose(a @ R.T + t, b, atol=1e-10)


def test_fixed_vertices_stay_and_their_neighbours_take_the_correction():
    v, faces = _sheet(5)
    e = mesh_edges(faces)
    rest = torch.as_tensor(v)
    x = rest.clone()
    x[:, 0] *= 1.5  # stretched along x
    fixed = torch.as_tensor(v[:, 0] == 0.0)
    y, _ = limit_strain(x, rest, e, 0.01, iterations=3000, tol=1e-4)
    y_fixed, _ = limit_strain(x, rest, e, 0.01, iterations=3000, fixed=fixed, tol=1e-4)
    assert torch.equal(y_fixed[fixed], x[fixed])
    assert not torch.allclose(y[fixed], x[fixed])
    assert (_strain(y_fixed, rest, e).abs() <= 0.01 + 1e-3).all()


def test_many_shapes_give_what_each_gives_alone():
    v, faces = _sheet(5)
    e = mesh_edges(faces)
    rest = torch.as_tensor(v)
    g = torch.Generator().manual_seed(2)
    x = rest + 0.03 * torch.randn(CHUNK + 5, *rest.shape, generator=g, dtype=rest.dtype)
    x[:CHUNK] = rest  # the first chunk is already in the band, the rest not
    y, sweeps = limit_strain(x, rest, e, 0.02, iterations=20, tol=0.0)
    alone, n = limit_strain(x[CHUNK + 3], rest, e, 0.02, iterations=20, tol=0.0)
    assert torch.allclose(y[CHUNK + 3], alone, atol=1e-12) and sweeps == n == 20
    assert torch.equal(y[:CHUNK], x[:CHUNK])


def test_a_negative_limit_is_refused():
    v, faces = _sheet(3)
    with pytest.raises(ValueError, match="strain limit must be >= 0"):
        limit_strain(torch.as_tensor(v), torch.as_tensor(v), mesh_edges(faces), -0.1)


def test_unique_edges_through_keys_are_numpys_unique_rows():
    rng = np.random.default_rng(11)
    faces = rng.integers(0, 300, (2000, 3))
    e = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    np.testing.assert_array_equal(mesh_edges(faces), np.unique(e, axis=0))
    owner = rng.integers(0, 40, 300)
    pairs = np.sort(owner[mesh_edges(faces)], axis=1)
    np.testing.assert_array_equal(driving_graph(mesh_edges(faces), owner),
                                  np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0))
    assert mesh_edges(np.zeros((0, 3), np.int64)).shape == (0, 2)


def test_the_compiled_local_step_matches_the_torch_one(monkeypatch):
    """float64 on the CPU takes the compiled edge loop; float32 the torch ops. On the same
    float64 shapes (pins, several chunks) the two give the same projection to rounding."""
    from neurok_cli.model import strain

    v, faces = _sheet(6)
    e = mesh_edges(faces)
    rest = torch.as_tensor(v)
    g = torch.Generator().manual_seed(3)
    x = rest + 0.05 * torch.randn(CHUNK + 7, *rest.shape, generator=g, dtype=rest.dtype)
    fixed = torch.as_tensor(v[:, 0] == 0.0)
    compiled, n = limit_strain(x, rest, e, 0.02, iterations=15, fixed=fixed)
    plain = strain._Band.__init__

    def torch_only(self, *args):
        plain(self, *args)
        self.compiled = False

    monkeypatch.setattr(strain._Band, "__init__", torch_only)
    reference, m = limit_strain(x, rest, e, 0.02, iterations=15, fixed=fixed)
    assert n == m
    torch.testing.assert_close(compiled, reference, atol=1e-12, rtol=0)


def test_the_projection_does_not_depend_on_the_thread_count():
    """Decoding gets the threads the machine's load leaves; the projection must give the
    same shapes on any number of them (on two, the inverse and products rounded
    differently and a penguin's clip moved by 2.4e-7 m)."""
    sphere = trimesh.creation.icosphere(subdivisions=3)  # 642 points, 1,920 edges
    rest = torch.as_tensor(sphere.vertices, dtype=torch.float64)
    edges = mesh_edges(np.asarray(sphere.faces))
    gen = torch.Generator().manual_seed(0)
    x = rest + 0.05 * torch.randn((48, *rest.shape), generator=gen, dtype=torch.float64)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one, _ = limit_strain(x, rest, edges, 0.02)
        torch.set_num_threads(2)
        two, _ = limit_strain(x, rest, edges, 0.02)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, two)
