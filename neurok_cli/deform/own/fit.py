"""Inverse kinematics in the object's own shape space (docs/design.md, "The object's own
shape space"): the handle coordinates whose motion of the mesh's vertices is an observed
one. Every vertex moves linearly in the coordinates, so with correspondences the fit is one
weighted least-squares solve, factored once per object and reused for every shape of a
sequence; a little of the rest elastic energy holds the handles that few observed points
see. A point cloud has no correspondences: its rigid start comes from nearest points both
ways (``rigid_start``), then rounds of nearest points and solves (``cloud_fit``).
``neurok fit`` (deform/fit.py), ``neurok eval --space handles`` and a fitted start in
``animate`` use it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ...data.geometry import kabsch
from .mechanics import Mechanics

FIT_ELASTIC = 1e-4  # the rest elastic energy's weight, per the fit's own scale (the test
# split's inverse kinematics: Chamfer-L1 0.07x the rest pose's, docs/design.md)
CLOUD_ROUNDS = 24  # a point cloud's fit: rounds of nearest points and a solve, the elastic
CLOUD_STIFF = 1e-1  # energy's weight falling from this to FIT_ELASTIC over them (loose
# correspondences first hold the shape, close ones let it follow)
TURNS = np.radians([0.0, 30.0, -30.0])  # the rigid start: the cloud as it is, and turned
# about +Y (a scan is most often turned about its up axis)
RIGID_ROUNDS = 16  # rounds of the rigid start's nearest points


def coordinates_fit(mech: Mechanics, index: np.ndarray | None = None,
                    weights: np.ndarray | None = None, rows: sp.csr_matrix | None = None,
                    elastic: float = FIT_ELASTIC) -> Callable[[np.ndarray], np.ndarray]:
    """A solve from observed displacements (n, 3) of the vertices ``index`` (default:
    all; or of the points whose basis rows (n, 4H) ``rows`` gives) to the coordinates Z
    (4H, 3) that move them so in the least-squares sense, each point weighed by
    ``weights`` (n,) (default: equally), with ``elastic`` of the fit's scale of the rest
    elastic energy."""
    Q = rows if rows is not None else (
        mech.vertex_rows if index is None else mech.vertex_rows[index])
    w = np.ones(Q.shape[0]) if weights is None else np.asarray(weights, np.float64)
    G = (Q.T @ Q.multiply(w[:, None])).toarray()
    A = np.kron(G, np.eye(3))  # in Z.reshape(-1)'s order
    scale = float(np.trace(A)) / len(A)
    A += elastic * scale * len(A) / max(float(np.trace(mech.K0)), 1e-300) * mech.K0
    A += 1e-9 * scale * np.eye(len(A))
    factor = sla.cho_factor(A, check_finite=False)

    def solve(displacement: np.ndarray) -> np.ndarray:
        b = (Q.T @ (w[:, None] * np.asarray(displacement, np.float64))).reshape(-1)
        return sla.cho_solve(factor, b, check_finite=False).reshape(-1, 3)

    return solve


def surface_rows(mech: Mechanics, faces: np.ndarray, face_idx: np.ndarray, bary: np.ndarray
                 ) -> sp.csr_matrix:
    """(n, 4H) basis rows of surface points at barycentric ``bary`` (n, 3) of ``faces``'s
    triangles ``face_idx`` (n,): the corners' rows blended."""
    corner = np.asarray(faces)[face_idx]  # (n, 3)
    n, v = len(face_idx), mech.vertex_rows.shape[0]
    blend = sp.csr_matrix((bary.reshape(-1), (np.repeat(np.arange(n), 3), corner.reshape(-1))),
                          shape=(n, v))
    return (blend @ mech.vertex_rows).tocsr()


def rigid_start(rest: np.ndarray, cloud: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The rigid motion that best carries surface points ``rest`` (S, 3) onto a point
    ``cloud`` (G, 3): nearest points both ways and a rigid fit (ICP), from the bounding
    boxes' centres met, the cloud as it is and turned by TURNS about +Y -> (R, t, the mean
    distance both ways) with cloud ~ R rest + t."""
    centre = lambda x: (x.min(axis=0) + x.max(axis=0)) / 2  # noqa: E731
    tree = cKDTree(cloud)
    best = None
    for angle in TURNS:
        c, s_ = np.cos(angle), np.sin(angle)
        R = np.array([[c, 0.0, s_], [0.0, 1.0, 0.0], [-s_, 0.0, c]])
        t = centre(cloud) - R @ centre(rest)
        for _ in range(RIGID_ROUNDS):
            x = rest @ R.T + t
            _, to_cloud = tree.query(x)
            _, to_rest = cKDTree(x).query(cloud)
            R, t = kabsch(np.concatenate([rest, rest[to_rest]]),
                          np.concatenate([cloud[to_cloud], cloud]))
        x = rest @ R.T + t
        gap = 0.5 * (tree.query(x)[0].mean() + cKDTree(x).query(cloud)[0].mean())
        if best is None or gap < best[2]:
            best = (R, t, gap)
    return best


def cloud_fit(mech: Mechanics, rest: np.ndarray, rows: sp.csr_matrix, cloud: np.ndarray
              ) -> np.ndarray:
    """The coordinates Z (4H, 3) that move surface points ``rest`` (S, 3) (their basis rows
    ``rows`` (S, 4H)) onto a point ``cloud`` (G, 3) given in the rest's frame (already
    carried there rigidly): CLOUD_ROUNDS rounds of nearest points both ways and a
    least-squares solve, the elastic energy's weight falling geometrically from
    CLOUD_STIFF to FIT_ELASTIC."""
    Z = np.zeros((mech.M.shape[0], 3))
    tree = cKDTree(cloud)
    S, G = len(rest), len(cloud)
    for elastic in np.geomspace(CLOUD_STIFF, FIT_ELASTIC, CLOUD_ROUNDS):
        x = rest + rows @ Z
        _, to_cloud = tree.query(x)
        _, to_surface = cKDTree(x).query(cloud)
        both = sp.vstack([rows, rows[to_surface]]).tocsr()
        goal = np.concatenate([cloud[to_cloud], cloud]) - np.concatenate(
            [rest, rest[to_surface]])
        weights = np.concatenate([np.full(S, 0.5 / S), np.full(G, 0.5 / G)])
        Z = coordinates_fit(mech, rows=both, weights=weights, elastic=elastic)(goal)
    return Z
