"""Accuracy metrics against hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.data.metrics import (
    barycentric_points,
    bbox_diagonal,
    chamfer_l1,
    face_areas,
    face_normals,
    kabsch,
    mean_vertex_error,
    rigid_residual,
    rmse,
    sample_surface,
)

SQUARE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)  # unit square, z = 0
SQUARE_FACES = np.array([[0, 1, 2], [0, 2, 3]])


def test_chamfer_identical_is_zero():
    pts = np.random.default_rng(0).random((50, 3))
    assert chamfer_l1(pts, pts) == 0.0


def test_chamfer_hand_computed():
    # target: two points 3-4-5 apart -> bbox diagonal 5; pred: target shifted by 1 along x
    target = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    pred = target + [1.0, 0.0, 0.0]
    # pred->target: (1 + 1)/2 = 1; target->pred: (1 + 1)/2 = 1; half sum 1, / diag 5
    assert chamfer_l1(pred, target) == pytest.approx(0.2)


def test_chamfer_asymmetric_sets_and_scale_of_target():
    target = np.array([[0.0, 0, 0], [2.0, 0, 0]])  # diag 2
    pred = np.array([[0.0, 0, 0]])
    # pred->target: 0; target->pred: (0 + 2)/2 = 1 -> 0.5 * 1 / 2
    assert chamfer_l1(pred, target) == pytest.approx(0.25)
    # invariant to scaling both sets
    assert chamfer_l1(10 * pred, 10 * target) == pytest.approx(0.25)


def test_mean_vertex_error_and_rmse():
    target = np.array([[0.0, 0, 0], [3.0, 4.0, 0]])  # diag 5
    pred = target + np.array([[0.0, 0, 2.0], [0.0, 0, 0]])
    assert mean_vertex_error(pred, target) == pytest.approx(1.0 / 5.0)
    assert mean_vertex_error(pred, target, diag=2.0) == pytest.approx(0.5)
    assert rmse(pred, target) == pytest.approx(np.sqrt(2.0))
    with pytest.raises(ValueError):
        mean_vertex_error(pred[:1], target)


def test_rigid_residual_ignores_the_path_and_measures_the_deformation():
    rng = np.random.default_rng(4)
    rest = rng.normal(size=(40, 3))
    rest -= rest.mean(0)
    c, s = np.cos(0.7), np.sin(0.7)
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    moved = rest @ turn.T + [3.0, -1.0, 2.0]
    # a rigidly moved copy has no shape error, however far it went
    assert rigid_residual(np.stack([rest, rest]), np.stack([rest, moved])) == pytest.approx(
        [0.0, 0.0], abs=1e-9)
    # a 10 % swelling about the centroid: the best rigid fit is the identity, so what is
    # left is 0.1 x the mean distance from the centroid
    swollen = 1.1 * rest
    expected = 0.1 * np.linalg.norm(rest, axis=1).mean()
    assert rigid_residual(rest[None], swollen[None])[0] == pytest.approx(expected, rel=1e-9)
    # and moving the swollen frame anywhere changes nothing
    assert rigid_residual(rest[None], (swollen @ turn.T + 5.0)[None])[0] == pytest.approx(
        expected, rel=1e-9)


def test_face_areas_normals_diag():
    assert face_areas(SQUARE, SQUARE_FACES) == pytest.approx([0.5, 0.5])
    assert face_normals(SQUARE, SQUARE_FACES) == pytest.approx(np.array([[0, 0, 1.0]] * 2))
    assert bbox_diagonal(SQUARE) == pytest.approx(np.sqrt(2))


def test_sample_surface_uniform_and_consistent():
    rng = np.random.default_rng(1)
    # areas 0.5 and 3: the second triangle must get 6/7 of the samples
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0], [5, 0, 0], [2, 2, 0]], float)
    faces = np.array([[0, 1, 2], [3, 4, 5]])
    pts, fidx, bary = sample_surface(verts, faces, 4000, rng)
    assert pts.shape == (4000, 3) and fidx.shape == (4000,) and bary.shape == (4000, 3)
    assert (bary >= 0).all() and np.allclose(bary.sum(1), 1)
    assert np.mean(fidx == 1) == pytest.approx(6 / 7, abs=0.03)
    assert np.allclose(pts, barycentric_points(verts, faces, fidx, bary))
    # uniform within a triangle: mean of samples is its centroid
    assert pts[fidx == 0].mean(0) == pytest.approx([1 / 3, 1 / 3, 0], abs=0.02)
    # a stack of poses gives the same barycentric points in each
    stack = np.stack([verts, verts + 1.0])
    assert np.allclose(barycentric_points(stack, faces, fidx, bary)[1], pts + 1.0)


def test_sample_surface_deterministic():
    a = sample_surface(SQUARE, SQUARE_FACES, 10, np.random.default_rng(3))
    b = sample_surface(SQUARE, SQUARE_FACES, 10, np.random.default_rng(3))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_kabsch_recovers_rigid_motion():
    rng = np.random.default_rng(2)
    src = rng.normal(size=(30, 3))
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    rot = q * np.sign(np.linalg.det(q))  # proper rotation
    dst = src @ rot.T + [1.0, -2.0, 0.5]
    r, t = kabsch(src, dst)
    assert np.allclose(r, rot) and np.allclose(t, [1.0, -2.0, 0.5])
    assert np.linalg.det(r) == pytest.approx(1.0)
    # a mirror image is not a rotation: kabsch still returns det +1
    r, _ = kabsch(src, src * [1, 1, -1])
    assert np.linalg.det(r) == pytest.approx(1.0)
