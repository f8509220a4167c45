"""Decoded shapes made into meshes as ``neurok animate`` makes them (evaluate.suite.as_animated)."""

import numpy as np
import trimesh

from neurok_cli.evaluate.strain import edge_strain
from neurok_cli.evaluate.suite import as_animated
from neurok_cli.model.strain import mesh_edges


def _sphere():
    m = trimesh.creation.icosphere(subdivisions=3)  # 642 vertices
    return np.asarray(m.vertices, np.float64), np.asarray(m.faces, np.int64)


def _turn(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def test_rest_and_rigid_motions_come_back_exactly_and_a_squash_nearly():
    v, f = _sphere()
    shapes = np.stack([v, v @ _turn(30).T + [0.1, -0.2, 0.3]])
    assert np.abs(as_animated(shapes, v, f, n_query=128) - shapes).max() < 1e-9
    # a local map is pulled a little towards its rotation: off by a fraction of the squash
    squash = v * [1.1, 0.9, 1.0]
    err = np.abs(as_animated(squash[None], v, f, n_query=128)[0] - squash).max()
    assert err < 0.1 * 0.1 * np.ptp(v[:, 0])


def test_only_the_driving_points_displacements_count():
    v, f = _sphere()
    rng = np.random.default_rng(0)
    noisy = v + 0.02 * rng.standard_normal(v.shape)  # every vertex its own way
    out = as_animated(noisy[None], v, f, n_query=128)[0]
    # the vertices between the driving points follow a smooth field, not their own noise
    assert edge_strain(v, out[None], mesh_edges(f)).mean() < \
        0.5 * edge_strain(v, noisy[None], mesh_edges(f)).mean()


def test_the_strain_limit_holds_the_driving_points_edges():
    v, f = _sphere()
    stretched = v * [1.5, 1.0, 1.0]  # 0-50 % strain
    free = as_animated(stretched[None], v, f, n_query=128)[0]
    held = as_animated(stretched[None], v, f, n_query=128, limit=0.05)[0]
    edges = mesh_edges(f)
    assert edge_strain(v, held[None], edges).max() < 0.5 * edge_strain(v, free[None], edges).max()
