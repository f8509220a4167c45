"""Bones for a clip: a smooth-skinning decomposition of per-frame vertex positions.

The frames are factored into B bones, each a rigid motion per frame (rotation and
translation), and per vertex at most four non-negative weights that sum to one, so that
every frame is linear blend skinning of the rest pose:

    x_v(t) = sum_j w_vj (R_j(t) x_v + t_j(t)).

The decomposition is Dem Bones (Le and Deng's SSDR, Electronic Arts' implementation), through
``py-dem-bones``. It runs on the welded surface: a UV seam's split copies of one point are one
vertex there (the spot's seams, left split, held a few vertices 8 % of the diagonal off), and
the copies share its weights. Measured on the shared assets' default clips (docs/design.md):
the object's own handle weights, each handle's rigid fit per frame, were 2-5x further from the
clip than the decomposition at 16 bones (penguin 0.15 % against 0.07 % mean, the flag 0.45 %
against 0.09 %), so the decomposition is what is written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NeurokError

BONES = 32  # the default's first try: 0.02-0.27 % of the diagonal in mean on the shared
# assets' default clips; the flag's flutter, 0.64 %, took 128 (0.23 %)
AUTO_ERROR = 0.003  # the default doubles the joints while the mean error is above this x the
# diagonal ...
AUTO_MOST = 128  # ... up to this many
ITERATIONS = 10  # Dem Bones' outer iterations: 30 gained less than 0.01 % of the diagonal
INFLUENCES = 4  # weights per vertex: what every glTF player reads (JOINTS_0, WEIGHTS_0)


@dataclass
class Skin:
    """A clip as bones: rest joint positions, per-frame joint motions and vertex weights."""

    centres: np.ndarray  # (B, 3) each joint at rest: its vertices' weighted centre
    rotations: np.ndarray  # (T, B, 4) unit quaternions (x, y, z, w), the joints' turn
    translations: np.ndarray  # (T, B, 3) where each joint is: R_j(t) c_j + t_j(t)
    joints: np.ndarray  # (N, 4) uint8 joint of each influence
    weights: np.ndarray  # (N, 4) float32 its weight, non-negative, each row summing to one
    mean_error: float  # the skinned clip's vertex error against the frames, / diagonal
    max_error: float

    @property
    def bones(self) -> int:
        return len(self.centres)

    def matrices(self) -> np.ndarray:
        """(T, B, 4, 4) each joint's motion from the rest pose: R_j(t) x + t_j(t)."""
        return motion_matrices(self.rotations, self.translations, self.centres)

    def positions(self, rest: np.ndarray) -> np.ndarray:
        """(T, N, 3) the skinned rest pose ``rest`` (N, 3) in every frame."""
        return skinned(rest, self.joints, self.weights, self.matrices())


def decompose(rest: np.ndarray, frames: np.ndarray, faces: np.ndarray, *,
              bones: int | None = None, iterations: int = ITERATIONS,
              index: np.ndarray | None = None) -> Skin:
    """Factor ``frames`` (T, N, 3) of the mesh ``rest`` (N, 3), ``faces`` (F, 3), into bones.

    ``bones``: the joints; None: BONES, doubled while the mean error is above AUTO_ERROR of
    the diagonal, up to AUTO_MOST. ``index`` (N,): each vertex's welded point (vertices
    with one index are one point: they get one set of weights), with ``faces`` indexing the
    welded points; None: every vertex its own point. Fewer bones than asked come back where
    the mesh has fewer points.
    """
    if bones is not None:
        return _decompose(rest, frames, faces, bones, iterations, index)
    count = BONES
    while True:
        skin = _decompose(rest, frames, faces, count, iterations, index)
        if skin.mean_error <= AUTO_ERROR or count >= AUTO_MOST or skin.bones < count:
            return skin
        count *= 2


def _decompose(rest: np.ndarray, frames: np.ndarray, faces: np.ndarray, bones: int,
               iterations: int, index: np.ndarray | None) -> Skin:
    solve = _solver()
    rest = np.asarray(rest, np.float64)
    frames = np.asarray(frames, np.float64)
    n = len(rest)
    index = np.arange(n) if index is None else np.asarray(index, np.int64)
    first = np.full(int(index.max()) + 1, -1, np.int64)
    first[index[::-1]] = np.arange(n)[::-1]  # each point's first vertex
    bones = int(min(bones, len(first)))
    diag = float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0
    try:
        got = solve(rest[first], frames[:, first], bones, faces=np.asarray(faces, np.int64),
                    max_influences=INFLUENCES, iterations=iterations)
    except (ValueError, RuntimeError) as exc:
        raise NeurokError(f"the bones' decomposition failed: {exc}") from exc
    joints, weights = _strongest(got.weights[:, index])  # (N, 4) each
    m = got.transforms  # (T, B, 4, 4), rest -> frame
    rot = _rotations(m[:, :, :3, :3])
    centres = _centres(rest, joints, weights, len(m[0]))
    moved = np.einsum("tbij,bj->tbi", m[:, :, :3, :3], centres) + m[:, :, :3, 3]
    skin = Skin(centres, rot, moved, joints, weights, 0.0, 0.0)
    err = np.linalg.norm(skin.positions(rest) - frames, axis=2) / diag
    skin.mean_error, skin.max_error = float(err.mean()), float(err.max())
    return skin


def _solver():
    try:
        from py_dem_bones import solve_skinning
    except ImportError as exc:  # a core dependency; a broken install still gets one line
        raise NeurokError("the bones encoding needs py-dem-bones: pip install py-dem-bones"
                          ) from exc
    return solve_skinning


def _strongest(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, N) weights -> each vertex's INFLUENCES largest: joints (N, 4) uint8 and weights
    (N, 4) float32, non-negative and renormalised to sum to one in float32."""
    w = np.maximum(w.T, 0.0)  # (N, B)
    k = min(INFLUENCES, w.shape[1])
    top = np.argsort(-w, axis=1, kind="stable")[:, :k]
    val = np.take_along_axis(w, top, axis=1)
    joints = np.zeros((len(w), INFLUENCES), np.uint8)
    weights = np.zeros((len(w), INFLUENCES), np.float64)
    joints[:, :k], weights[:, :k] = top, val
    total = weights.sum(axis=1, keepdims=True)
    weights = weights / np.where(total > 0, total, 1.0)
    weights[total[:, 0] <= 0, 0] = 1.0  # a vertex no bone reached follows its first
    joints[weights == 0] = 0  # unused influences point at joint 0 with weight 0
    out = weights.astype(np.float32)
    out[:, 0] += np.float32(1.0) - out.sum(axis=1, dtype=np.float32)  # exact in float32
    return joints, out


def _rotations(r: np.ndarray) -> np.ndarray:
    """(T, B, 3, 3) rotations -> (T, B, 4) unit quaternions (x, y, z, w), each track kept on
    one hemisphere so that players interpolate the short way."""
    from scipy.spatial.transform import Rotation

    q = Rotation.from_matrix(r.reshape(-1, 3, 3)).as_quat().reshape(*r.shape[:-2], 4)
    for t in range(1, len(q)):  # (T, B, 4): the sign nearest the frame before
        flip = np.einsum("bi,bi->b", q[t], q[t - 1]) < 0
        q[t, flip] *= -1
    return q


def _centres(rest: np.ndarray, joints: np.ndarray, weights: np.ndarray, bones: int
             ) -> np.ndarray:
    """(B, 3) each joint's rest position: its vertices' centre, by weight (a joint no vertex
    uses: the mesh's centre)."""
    total = np.zeros(bones)
    acc = np.zeros((bones, 3))
    for k in range(joints.shape[1]):
        np.add.at(total, joints[:, k], weights[:, k])
        np.add.at(acc, joints[:, k], weights[:, k, None] * rest)
    centre = rest.mean(axis=0)
    return np.where(total[:, None] > 1e-9, acc / np.maximum(total, 1e-9)[:, None], centre)


def motion_matrices(rotations: np.ndarray, translations: np.ndarray, centres: np.ndarray
                    ) -> np.ndarray:
    """(T, B, 4, 4) the joints' motions from rest: x -> R (x - c) + p, for quaternions
    (T, B, 4), joint positions p (T, B, 3) and rest positions c (B, 3)."""
    from scipy.spatial.transform import Rotation

    t, b = rotations.shape[:2]
    r = Rotation.from_quat(rotations.reshape(-1, 4)).as_matrix().reshape(t, b, 3, 3)
    m = np.zeros((t, b, 4, 4))
    m[..., :3, :3] = r
    m[..., :3, 3] = translations - np.einsum("tbij,bj->tbi", r, centres)
    m[..., 3, 3] = 1.0
    return m


def skinned(rest: np.ndarray, joints: np.ndarray, weights: np.ndarray, matrices: np.ndarray
            ) -> np.ndarray:
    """(T, N, 3) linear blend skinning of ``rest`` (N, 3) by (T, B, 4, 4) ``matrices`` with
    ``joints`` and ``weights`` (N, K)."""
    out = np.zeros((len(matrices), len(rest), 3))
    w = weights.astype(np.float64)
    for t, m in enumerate(matrices):  # a frame at a time: (N, 4, 4) per influence, not (T, ...)
        for k in range(joints.shape[1]):
            mk = m[joints[:, k]]
            out[t] += w[:, k, None] * (np.einsum("nij,nj->ni", mk[:, :3, :3], rest)
                                       + mk[:, :3, 3])
    return out
