"""``neurok fit`` of an articulated object: the joint positions (and the base's pose) of
observed shapes.

rest asset -> its rig, as animate finds it (rig/animate.py), in the physical frame ->
per observed shape (a mesh, a point cloud, or each frame of a sequence, in the rest's file
frame): the base's rotation and translation and every joint's position that bring the rig's
surface onto the observed points (least squares on the distances both ways, from the best
of a coarse sweep of each joint over its range, or from the previous frame's fit) -> the
Chamfer-L1 left, next to the rest pose's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.geometry import sample_surface
from ..data.metrics import chamfer_l1
from ..io.asset import Asset
from ..io.mesh import CanonicalFrame, canonical_frame
from .animate import RigStart, place, rig_start, to_physical
from .articulation import JointSpec

SWEEP = 13  # positions tried per joint before the joint fit
POINTS = 1500  # rig surface points in the fit


@dataclass
class JointFit:
    joints: np.ndarray  # (J,) rad or m, 0 as the rest has it
    rotation: np.ndarray  # (3, 3): the base's turn, about the rest's centre
    translation: np.ndarray  # (3,) metres
    chamfer: float  # Chamfer-L1 / the observed bounding-box diagonal
    rest_chamfer: float


@dataclass
class RigFitter:
    """The rest's rig and surface points, in the physical frame."""

    start: RigStart
    frame: CanonicalFrame
    lift: float
    points: np.ndarray  # (n, 3) rig surface points as the rest has them
    owner: np.ndarray  # (n,)
    centre: np.ndarray  # (3,)
    faces: np.ndarray  # the rig's surface, on start.link.rest

    @classmethod
    def of(cls, rest: Asset, joints: list[JointSpec], seed: int = 0) -> RigFitter:
        frame = canonical_frame(rest)
        at = place(rest, frame, preset="free", drop=None, ground_at=None)
        start = rig_start(at.start, at.pieces.faces, at.pieces.piece, at.pieces.names,
                          joints=[to_physical(j, frame, at.lift) for j in joints],
                          preset="free", density=None, gravity=(0.0, -9.81, 0.0), drop_m=0.0,
                          base="held")  # the base's pose is fitted on its own
        rng = np.random.default_rng(seed)
        pts, face, _ = sample_surface(at.start, at.pieces.faces, POINTS, rng)
        owner = start.rig.owner[at.pieces.faces[face, 0]]
        return cls(start, frame, at.lift, pts, owner, at.start.mean(axis=0), at.pieces.faces)

    def to_physical(self, x: np.ndarray) -> np.ndarray:
        """Positions in the rest file's frame -> the rig's."""
        return self.frame.to_canonical(x) * self.frame.size_m + np.array([0.0, self.lift, 0.0])

    def posed(self, params: np.ndarray, points: np.ndarray | None = None,
              owner: np.ndarray | None = None) -> np.ndarray:
        """The rig's points with the base turned by params[:3] (a rotation vector, about
        the rest's centre), moved by params[3:6] and the joints at params[6:]."""
        from scipy.spatial.transform import Rotation

        link = self.start.link
        pts = self.points if points is None else points
        own = self.owner if owner is None else owner
        x = link.place(link.pose(params[6:]), pts, own)
        R = Rotation.from_rotvec(params[:3]).as_matrix()
        return (x - self.centre) @ R.T + self.centre + params[3:6]

    def fit(self, observed: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
        """The parameters that bring the rig onto ``observed`` (n, 3), physical frame."""
        from scipy.optimize import least_squares
        from scipy.spatial import cKDTree

        tree = cKDTree(observed)
        J = len(self.start.link.coords)

        def residual(p):
            x = self.posed(p)
            return np.concatenate([tree.query(x)[0], cKDTree(x).query(observed)[0]])

        def cost(p):
            return float(np.mean(residual(p)))

        if start is None:
            start = np.zeros(6 + J)
            start[3:6] = observed.mean(axis=0) - self.posed(start).mean(axis=0)
            for c, co in enumerate(self.start.link.coords):  # each joint swept alone
                span = [min(max(x, -np.pi), np.pi) for x in co.limits]
                tries = [np.concatenate([start[:6 + c], [v], start[7 + c:]])
                         for v in np.linspace(span[0], span[1], SWEEP)]
                start = min(tries, key=cost)
        coords = self.start.link.coords
        lo = np.concatenate([np.full(6, -np.inf), [co.limits[0] for co in coords]])
        hi = np.concatenate([np.full(6, np.inf), [co.limits[1] for co in coords]])
        start = np.clip(start, lo, hi)
        return least_squares(residual, start, bounds=(lo, hi), x_scale="jac",
                             diff_step=1e-4, max_nfev=60 * (6 + J)).x


def fit_shapes(fitter: RigFitter, frames: list[np.ndarray], faces: np.ndarray | None,
               rest: np.ndarray, rest_faces: np.ndarray, *, samples: int = 10_000,
               seed: int = 0, progress=None) -> list[JointFit]:
    """Fit each observed shape (file frame: vertices of ``faces``, or points where None),
    each from the previous one's fit; report Chamfer-L1 over ``samples`` surface points
    each way, next to the rest's (``rest`` vertices of ``rest_faces``, file frame)."""
    from scipy.spatial.transform import Rotation

    out, prev = [], None
    rng = np.random.default_rng(seed)
    link = fitter.start.link
    rig_pts, rig_face, _ = sample_surface(link.rest, fitter.faces, samples, rng)
    rig_owner = fitter.start.rig.owner[fitter.faces[rig_face, 0]]
    rest_pts = sample_surface(fitter.to_physical(rest), rest_faces, samples, rng)[0]
    for k, obs in enumerate(frames):
        x = fitter.to_physical(obs)
        target = x if faces is None else sample_surface(x, faces, samples, rng)[0]
        params = fitter.fit(_subsample(target, 4 * POINTS, rng), prev)
        prev = params
        out.append(JointFit(
            joints=params[6:].copy(), rotation=Rotation.from_rotvec(params[:3]).as_matrix(),
            translation=params[3:6].copy(),
            chamfer=chamfer_l1(fitter.posed(params, rig_pts, rig_owner), target),
            rest_chamfer=chamfer_l1(rest_pts, target)))
        if progress is not None:
            progress(k + 1, len(frames))
    return out


def _subsample(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x if len(x) <= n else x[rng.choice(len(x), n, replace=False)]


def fit_rig(cfg, joints: list[JointSpec], *, progress=None) -> dict:
    """``neurok fit --articulated``: the JSON document of the joint fit of every observed
    shape (``cfg``: fit.FitConfig; the rest is the given mesh or a sequence's first frame)."""
    import time

    from ..errors import UsageError
    from ..io.observed import observed_and_rest

    t0 = time.perf_counter()
    if cfg.samples < 16:
        raise UsageError("«samples» must be >= 16")
    obs, rest = observed_and_rest(cfg)
    fitter = RigFitter.of(rest, joints, cfg.seed)
    fits = fit_shapes(fitter, list(obs.frames), obs.faces, rest.vertices, rest.faces,
                      samples=cfg.samples, seed=cfg.seed, progress=progress)
    link, rig = fitter.start.link, fitter.start.rig
    names = [rig.names[co.part] for co in link.coords]
    arr = lambda a: np.round(np.asarray(a, np.float64), 7).tolist()  # noqa: E731
    ch = [f.chamfer for f in fits]
    return {
        "observed": obs.kind, "mode": "joints", "rest": str(rest.path), "frames": len(fits),
        "rig": rig.rows(),
        "chamfer_l1": {"mean": float(np.mean(ch)), "max": float(np.max(ch))},
        "rest_chamfer_l1": float(np.mean([f.rest_chamfer for f in fits])),
        "seconds": time.perf_counter() - t0,
        "shapes": [{"time": float(obs.times[i]),
                    "joints": {n: float(v) for n, v in zip(names, f.joints)},
                    "base_rotation": arr(f.rotation), "base_translation_m": arr(f.translation),
                    "chamfer_l1": f.chamfer, "rest_chamfer_l1": f.rest_chamfer}
                   for i, f in enumerate(fits)]}
