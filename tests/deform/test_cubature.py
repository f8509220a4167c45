"""Where a solid's energy is measured: at the centre of volume of each cell of a grid over
its lattice's tetrahedra (``centred_cubature``), which measures what varies linearly across
a cell exactly, where a cell's largest tetrahedron (``cubature``) does not."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.deform.own.basis import _solid, spacing, tet_volumes
from neurok_cli.deform.own.elements import centred_cubature, cubature


@pytest.fixture(scope="module")
def rod():
    box = trimesh.creation.box(extents=(0.5, 0.12, 0.1))
    box.apply_translation([0.31, 0.7, -0.05])
    nodes, tets = _solid(np.asarray(box.vertices), np.asarray(box.faces))
    return nodes, nodes[tets].mean(axis=1), tet_volumes(nodes, tets)


def test_the_cells_centres_measure_a_linear_field_exactly(rod):
    nodes, centroids, volume = rod
    at, measure = centred_cubature(centroids, volume, 10 ** 6, nodes.min(axis=0), spacing(nodes))
    assert len(at) < len(volume) / 3  # fewer points than tetrahedra ...
    assert measure.sum() == pytest.approx(volume.sum(), rel=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(3):  # ... and the same integral of any affine field
        a, b = rng.normal(size=3), rng.normal()
        assert measure @ (at @ a + b) == pytest.approx(volume @ (centroids @ a + b), rel=1e-9)
    # the largest tetrahedron of each cell of the same number of points does not
    keep, weight = cubature(centroids, volume, len(at), 3)
    a = np.array([0.0, 1.0, 0.0])
    exact = volume @ (centroids @ a)
    assert abs((volume[keep] * weight) @ (centroids[keep] @ a) - exact) > 1e-6 * abs(exact)


def test_more_cells_than_allowed_fall_back_to_none(rod):
    nodes, centroids, volume = rod
    origin, step = nodes.min(axis=0), spacing(nodes)
    at, _ = centred_cubature(centroids, volume, 10 ** 6, origin, step)
    assert centred_cubature(centroids, volume, len(at), origin, step) is not None
    assert centred_cubature(centroids, volume, len(at) - 1, origin, step) is None
