"""Accuracy measures and the small geometry they need: pure NumPy/SciPy functions.

Conventions (DESIGN §7): shapes are compared after scaling so that the *target's* bounding-box
diagonal is 1; Chamfer-L1 is ½(mean nearest-neighbour distance a→b + mean b→a), distances
Euclidean (not squared). Everything here takes and returns plain arrays and floats so that
training, evaluation and benchmarks agree on one definition.

Surface sampling and rigid alignment live in :mod:`neurok_cli.data.geometry`, shared with the
training sampler, so that training pairs and evaluation point sets are drawn the same way.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .geometry import (  # noqa: F401  (re-exported: the metrics' own vocabulary)
    barycentric_points,
    bbox_diagonal,
    face_areas,
    face_normals,
    kabsch,
    sample_surface,
)


def chamfer_l1(pred: np.ndarray, target: np.ndarray) -> float:
    """Chamfer-L1 distance between point sets, in units of the target's bbox diagonal.

    Args:
        pred: ``(M, 3)`` points.
        target: ``(N, 3)`` points; its bounding-box diagonal is the unit of the result.

    Returns:
        ½(mean over ``pred`` of the distance to the nearest ``target`` point + mean over
        ``target`` of the distance to the nearest ``pred`` point) / diag(target). 0 for
        identical sets; a degenerate (single-point) target is measured in its own units.
    """
    a = np.asarray(pred, np.float64).reshape(-1, 3)
    b = np.asarray(target, np.float64).reshape(-1, 3)
    diag = bbox_diagonal(b)
    scale = 1.0 / diag if diag > 0 else 1.0
    a_to_b, _ = cKDTree(b).query(a, k=1)
    b_to_a, _ = cKDTree(a).query(b, k=1)
    return float(0.5 * (a_to_b.mean() + b_to_a.mean()) * scale)


def mean_vertex_error(pred: np.ndarray, target: np.ndarray, diag: float | None = None) -> float:
    """Mean Euclidean distance between corresponding vertices, divided by ``diag``.

    Args:
        pred, target: ``(..., N, 3)`` corresponding positions (e.g. ``(T, N, 3)`` over time).
        diag: the unit of the result; defaults to the bbox diagonal of all of ``target``.
            Rollout evaluation passes the rest shape's diagonal so every frame shares a unit.
    """
    p = np.asarray(pred, np.float64)
    t = np.asarray(target, np.float64)
    if p.shape != t.shape:
        raise ValueError(f"pred {p.shape} and target {t.shape} must have the same shape")
    unit = bbox_diagonal(t) if diag is None else float(diag)
    return float(np.linalg.norm(p - t, axis=-1).mean() / (unit if unit > 0 else 1.0))


def rmse(pred: np.ndarray, target: np.ndarray) -> float:
    """Root mean squared point error ``sqrt(mean_i ||pred_i - target_i||²)`` over ``(..., 3)``."""
    diff = np.asarray(pred, np.float64) - np.asarray(target, np.float64)
    return float(np.sqrt((diff ** 2).sum(axis=-1).mean()))


def rigid_residual(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per frame (T,): the mean vertex distance left between ``pred`` and ``truth`` (T, N, 3)
    once each predicted frame is moved rigidly onto its true frame (least squares). What
    remains is the error of the deformation alone, whatever the path the body took."""
    out = np.empty(len(truth))
    for i, (p, t) in enumerate(zip(pred, truth)):
        rotation, shift = kabsch(p, t)
        out[i] = np.linalg.norm(p @ rotation.T + shift - t, axis=-1).mean()
    return out
