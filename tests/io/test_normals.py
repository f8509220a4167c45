"""Vertex normals of deforming surfaces and the rotation that carries file normals along."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.io.normals import rotate_between, vertex_normals


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_rotate_between_is_the_smallest_rotation_from_a_to_b():
    rng = np.random.default_rng(3)
    a, b, v = (_unit(rng.standard_normal((50, 3))) for _ in range(3))
    assert np.allclose(rotate_between(a, a, b), b, atol=1e-12)  # a itself lands on b
    out = rotate_between(v, a, b)
    assert np.allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-12)
    # the axis a x b is left alone, and angles to a are kept as angles to b
    axis = _unit(np.cross(a, b))
    assert np.allclose(rotate_between(axis, a, b), axis, atol=1e-12)
    assert np.allclose(np.sum(out * b, -1), np.sum(v * a, -1), atol=1e-12)
    # parallel: nothing turns; antiparallel: flipped
    assert np.allclose(rotate_between(v, a, a), v, atol=1e-12)
    assert np.allclose(rotate_between(v, a, -a), -v)


def test_rotate_between_broadcasts_over_frames():
    rng = np.random.default_rng(4)
    a, v = _unit(rng.standard_normal((20, 3))), _unit(rng.standard_normal((20, 3)))
    b = _unit(rng.standard_normal((5, 20, 3)))
    both = rotate_between(v, a, b)
    assert both.shape == (5, 20, 3)
    for i in range(5):
        assert np.allclose(both[i], rotate_between(v, a, b[i]), atol=1e-14)


def test_vertex_normals_of_a_sphere_point_outwards_for_every_frame():
    mesh = trimesh.creation.icosphere(subdivisions=2)
    v, f = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    frames = np.stack([v * s + t for s, t in ((1.0, 0.0), (2.0, 0.5), (0.5, -1.0),
                                              (1.0, 3.0), (3.0, 0.0), (1.5, 1.0))])
    normals = vertex_normals(frames, f)  # six frames: more than one block of them
    assert normals.shape == frames.shape
    assert np.allclose(normals, _unit(v)[None], atol=0.03)  # area-weighted: near radial
    for i in range(len(frames)):  # blocks of frames give what one frame at a time gives
        assert np.allclose(normals[i], vertex_normals(frames[i], f), atol=1e-15)


def test_vertex_normals_share_across_groups_and_default_up_for_zero_area():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [5, 5, 5.0]])
    f = np.array([[0, 1, 2], [3, 4, 2]])
    n = vertex_normals(v, f, groups=np.array([0, 1, 2, 1, 3, 4]))
    assert np.allclose(n[:5], [0, 0, 1])
    assert np.array_equal(n[1], n[3])  # a seam: both copies get the shared normal
    assert np.allclose(n[5], [0, 1, 0])  # no face: +Y


@pytest.mark.parametrize("compiled", [False, True])
def test_turned_normal_deltas_match_the_numpy_composition(monkeypatch, compiled):
    """The compiled pass (a clip of COMPILED_FROM vertex-frames or more) and the NumPy one
    give the composition's numbers."""
    from neurok_cli.io import normals
    from neurok_cli.io.normals import turned_normal_deltas

    monkeypatch.setattr(normals, "COMPILED_FROM", 0 if compiled else 10**12)

    rng = np.random.default_rng(5)
    mesh = trimesh.creation.icosphere(subdivisions=2)
    wv, wf = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    # file vertices: every welded vertex, then copies of some (seams), in a shuffled order
    index = rng.permutation(np.concatenate([np.arange(len(wv)), rng.choice(len(wv), 40)]))
    rep = np.empty(len(wv), np.int64)
    rep[index] = np.arange(len(index))
    frames = wv[index][None] * rng.uniform(0.5, 2.0, (7, 1, 3)) + rng.normal(
        0, 0.05, (7, len(index), 3))
    frames[3] = wv[index]  # at rest, against rest normals given reversed: antiparallel
    frames[5, rep[wf[0]]] = frames[5, rep[wf[0, 0]]]  # a face collapsed to a point
    rest = -vertex_normals(wv, wf)[index]
    n0 = _unit(rest + 0.3 * rng.standard_normal(rest.shape))
    got = turned_normal_deltas(frames, wf, rep, index, rest, n0)
    now = vertex_normals(frames[:, rep], wf)[:, index]
    want = (rotate_between(n0, rest, now) - n0).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == frames.shape
    assert np.abs(got - want).max() <= 1e-6
    assert np.allclose(got[3], -2 * n0, atol=1e-6)  # antiparallel: flipped
