"""``neurok fit``: inverse kinematics, the state(s) of observed shapes (docs/design.md,
"The method" and "The object's own shape space").

observed (a mesh with the rest's topology, a mesh of another topology or a point cloud, or a
sequence: animated glTF or frame folder) + rest -> the rest's canonical frame -> per shape,
in the object's own handle space (``space`` auto or handles; deform/own/fit.py): its
rigid pose (Kabsch on the vertices, or nearest points both ways for a cloud), then the
handle coordinates that move the rest onto it in the rest's frame (one weighted
least-squares solve over the vertices, or rounds of nearest points and solves for a
cloud); with ``space`` learned, in the bundle's latent space:

- same topology: rigid alignment (Kabsch), the posterior encoder's guess from the vertex
  displacements (or, in a sequence, the previous frame's z where that is closer), then z
  fitted to the displacements at the driving points, and z, a rotation and a translation
  to the Chamfer distance from there (the better of the two is kept);
- otherwise: the rest shape's rigid pose, then z, a rotation and a translation fitted to
  the Chamfer distance, from the prior mean in that pose and from the encoder's guess on
  nearest-point displacements;

(Levenberg-Marquardt, model/inverse.py) on one torch thread (see fit);

then the fitted error (Chamfer-L1 over surface samples, unit: the observed bounding-box
diagonal) and, for a sequence, the initial conditions (z, ż, velocity, spin) of its first and
last frames, which ``--then-animate`` continues (or re-simulates) under new conditions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..data.geometry import barycentric_points, face_normals, kabsch, sample_surface
from ..data.metrics import bbox_diagonal, chamfer_l1, mean_vertex_error
from ..errors import InputError, UsageError
from ..io.asset import Asset
from ..io.atomic import atomic_path
from ..io.mesh import CanonicalFrame, canonical_frame
from ..io.observed import Observation, observed_and_rest
from ..model import NeurokModel, farthest_point_sample
from ..model.inverse import QueryField, fit_displacement, fit_surface
from ..model.threads import one_thread_on
from ..scenario.spec import LatentStart
from .learned.motion import encode_object

if TYPE_CHECKING:
    from .animate import Continuation

FIT_SURFACE = 1024  # rest-surface samples decoded per step of the Chamfer fit
SPACES = ("auto", "handles", "learned")  # --space (as animate's)
TURN = np.radians(30.0)  # rigid fits of a rest shape to points also start turned by +-this


@dataclass
class FitConfig:
    observed: Path
    rest: Path | None = None  # None: the first frame of a sequence
    steps: int = 60  # Levenberg-Marquardt trial steps per stage of a fit, at most (each one
    # decode, and a decoder Jacobian now and then); fewer once a step gains too little
    points: int = 2048  # observed points in the Chamfer fit
    samples: int = 10_000  # samples each way for the reported Chamfer-L1
    fps: float | None = None  # frame rate of a frame folder (default: its frames.json's,
    # else 30; a glTF carries its own times)
    up: str | None = None
    seed: int = 0
    weights: str = "neurok-base"
    device: str = "auto"
    material: str = "auto"  # the own space's: as animate's --material (its basis)
    space: str = "auto"  # handles (and auto): the object's own shape space; learned: the
    # bundle's latent space
    require_sequence: bool = False  # fail before any work unless a sequence is observed
    animation: str | None = None  # a glTF's animation by name or index; default: the first
    # neurok wrote, else the file's first, with every other that drives different parts
    # (gltf_anim.animations_together)


@dataclass
class ShapeFit:
    z: np.ndarray  # (k,) the learned latent, or the own space's coordinates Z.reshape(-1)
    rotation: np.ndarray  # (3, 3) canonical: observed = R (rest + decode(z)) + t (the own
    # space: the rigid part of the fitted shape, which its coordinates hold)
    translation: np.ndarray  # (3,) canonical units
    chamfer: float
    rest_chamfer: float
    vertex_error: float | None  # same topology only
    shape: np.ndarray | None = None  # (N, 3) the fitted welded vertices (the own space)


@dataclass
class FitResult:
    observation: Observation
    rest: Asset
    frame: CanonicalFrame
    mode: str  # "correspondence" or "chamfer"
    fits: list[ShapeFit]
    weights: str
    device: str
    seconds: float
    initial: dict[str, dict] = field(default_factory=dict)  # "first"/"last" -> state
    space: str = "learned"  # or "handles": the object's own shape space
    handles: int = 0  # the own space's handles


def _first_of_welded(index: np.ndarray, count: int) -> np.ndarray:
    """For each welded vertex, one file vertex that maps to it."""
    first = np.zeros(count, np.int64)
    first[index[::-1]] = np.arange(len(index))[::-1]
    return first


class _Fitter:
    """One rest shape, its prior and samples; fits observed shapes in its canonical frame.
    The decoder's F(mu) at each fixed set of points (driving points, fitting samples, the
    reported error's samples, the vertices) is evaluated once, when first needed, and kept
    for every shape of a sequence."""

    def __init__(self, model: NeurokModel, vc: np.ndarray, faces: np.ndarray, cfg: FitConfig):
        self.model, self.vc, self.faces, self.cfg = model, vc, faces, cfg
        self.dev = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.prior, self.pts, self.fidx, self.bary = encode_object(model, vc, faces, cfg.seed)
        self.nrm = face_normals(vc, faces)[self.fidx]
        n_drive = min(model.cfg.n_query, len(vc))
        self.drive = farthest_point_sample(vc, n_drive, generator=cfg.seed).numpy()
        rng = np.random.default_rng([cfg.seed, 3])
        self.dense, dfidx, dbary = sample_surface(vc, faces, cfg.samples, rng)
        self.dense_at = (dfidx, dbary)
        self._fields: dict[str, QueryField] = {}
        self.previous: torch.Tensor | None = None  # (k,) the last shape's z: a sequence's
        # next frame starts from it too

    def t(self, a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), dtype=self.dtype, device=self.dev)[None]

    def field(self, name: str) -> QueryField:
        """The decoder at "drive" (driving points), "surface" (fitting samples), "dense"
        (the reported error's samples) or "verts" (the welded vertices)."""
        if name not in self._fields:
            at = {"drive": lambda: self.vc[self.drive], "verts": lambda: self.vc,
                  "surface": lambda: self.dense[:FIT_SURFACE], "dense": lambda: self.dense}
            self._fields[name] = QueryField(self.model, self.prior, self.t(at[name]())[0])
        return self._fields[name]

    def posed(self, fits: list[tuple[np.ndarray, np.ndarray, np.ndarray]], at: str
              ) -> list[np.ndarray]:
        """R (p + decode(z, p)) + t at the points ``at`` names for each (z, R, t), the
        latents decoded as one batch."""
        field = self.field(at)
        p = field.query.to(torch.float64).cpu().numpy()
        d = field(self.t(np.stack([z for z, _, _ in fits]))[0]).to(torch.float64).cpu().numpy()
        return [(p + di) @ R.T + tr for di, (_, R, tr) in zip(d, fits)]

    def guess(self, delta_pts: np.ndarray) -> torch.Tensor:
        """The posterior encoder's z (1, k) for displacements at the prior's samples."""
        with torch.no_grad():
            mu, _ = self.model.encode_posterior(self.t(self.pts), self.t(self.nrm),
                                                self.t(delta_pts), self.prior)
        return mu

    def refine(self, starts: torch.Tensor, goal: np.ndarray, *, latent: bool = True,
               aligned: bool = False, poses: list[tuple[np.ndarray, np.ndarray]] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chamfer fit of z, R, t from starts (S, k) to goal (G, 3) points (its bounding box
        centred first), each start from its pose (R, t) in ``poses`` (default: identity):
        z (k,), R (3, 3), t (3,) with goal ≈ R (rest + decode(z)) + t."""
        centre = (goal.min(axis=0) + goal.max(axis=0)) / 2.0
        cloud = goal - centre
        if len(cloud) > self.cfg.points:
            rng = np.random.default_rng([self.cfg.seed, 5])
            cloud = cloud[rng.choice(len(cloud), self.cfg.points, replace=False)]
        surface = self.field("surface")
        at = None if poses is None else (self.t(np.stack([R for R, _ in poses]))[0],
                                         self.t(np.stack([t for _, t in poses]) - centre)[0])
        fit = fit_surface(self.model, self.prior, surface.query, self.t(cloud)[0], starts,
                          steps=self.cfg.steps, latent=latent, pose_first=not aligned,
                          poses=at, field=surface)
        f64 = lambda x: x.to(torch.float64).cpu().numpy()  # noqa: E731
        return f64(fit.z), f64(fit.rotation), f64(fit.translation) + centre

    def same_topology(self, target: np.ndarray) -> ShapeFit:
        """target (N, 3) canonical vertices of the welded rest's topology: rigid alignment,
        the encoder's guess (or the previous shape's z, if closer), a fit to the
        displacements at the driving points, then the Chamfer refinement."""
        rot, shift = kabsch(target, self.vc)  # aligned = rot @ target + shift
        aligned = target @ rot.T + shift
        delta = aligned - self.vc
        d_pts = barycentric_points(delta, self.faces, self.fidx, self.bary)
        starts = self.guess(d_pts)
        if self.previous is not None:
            starts = torch.cat([starts, self.previous[None]])
        z, _ = fit_displacement(self.field("drive"), self.t(delta[self.drive])[0], starts,
                                steps=self.cfg.steps, prior_weight=self.model.cfg.kl_weight)
        goal = barycentric_points(aligned, self.faces, *self.dense_at)
        zc = z.to(torch.float64).cpu().numpy()
        # the refinement, unless the correspondence fit already matches the surface better
        candidates = [(zc, np.eye(3), np.zeros(3)),
                      self.refine(z[None], goal, aligned=True)]
        errors = [chamfer_l1(x, goal) for x in self.posed(candidates, "dense")]
        best = int(np.argmin(errors))
        zs, R, tr = candidates[best]
        self.previous = torch.as_tensor(zs, dtype=self.dtype, device=self.dev)
        verts = self.posed([candidates[best]], "verts")[0]
        # back from the aligned frame: target = rot^T (aligned - shift)
        return ShapeFit(z=zs, rotation=rot.T @ R, translation=rot.T @ (tr - shift),
                        chamfer=errors[best], rest_chamfer=chamfer_l1(self.dense, goal),
                        vertex_error=mean_vertex_error(verts, aligned, bbox_diagonal(aligned)))

    def rest_pose(self, goal: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rigid fit of the rest shape to goal (G, 3) points, from the goal as it is and
        turned by +-TURN about the up axis: the pose of a rest shape that differs from the
        goal has shallow minima a turn away (a 1-sigma blob turned 17 degrees: found at 7
        from the goal as it is), and a scan is most often turned about the up axis."""
        best, least = None, np.inf
        for angle in (0.0, TURN, -TURN):
            c, s = np.cos(angle), np.sin(angle)
            turn = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # about +Y
            z, R, tr = self.refine(self.prior.mu, goal @ turn, latent=False)
            fit = (z, turn @ R, turn @ tr)  # goal @ turn ~ R p + tr
            error = chamfer_l1(self.dense @ fit[1].T + fit[2], goal)
            if error < least:
                best, least = fit, error
        return best

    def points(self, goal: np.ndarray) -> ShapeFit:
        """goal (G, 3) canonical points of the deformed surface: the rest shape's pose first
        (the rest-pose baseline), then the Chamfer fit from the prior mean in that pose and
        from the encoder's guess on nearest-point displacements in the goal's own frame
        (the first takes a turned scan as a rotation, the second wins where the rest's pose
        says little, as for folded cloth)."""
        from scipy.spatial import cKDTree

        rest = self.rest_pose(goal)
        _, R0, t0 = rest
        centre = (goal.min(axis=0) + goal.max(axis=0)) / 2.0
        _, near = cKDTree(goal - centre).query(self.pts)
        starts = torch.cat([self.prior.mu, self.guess(goal[near] - centre - self.pts)])
        fitted = self.refine(starts, goal, poses=[(R0, t0), (np.eye(3), centre)])
        shape, rest_shape = self.posed([fitted, rest], "dense")
        return ShapeFit(z=fitted[0], rotation=fitted[1], translation=fitted[2],
                        chamfer=chamfer_l1(shape, goal), rest_chamfer=chamfer_l1(rest_shape, goal),
                        vertex_error=None)


class _HandleFitter:
    """One rest shape's own handle space (built as ``animate`` builds it for the category
    ``--material`` gives, by default the one its geometry reads as), fitting observed
    shapes in the rest's frame once a rigid motion has carried them there
    (deform/own/fit.py): a shape of the rest's topology by least squares over all its
    vertices, each weighed by its area; a point cloud by rounds of nearest points both
    ways, from its best rigid pose."""

    def __init__(self, vc: np.ndarray, faces: np.ndarray, cfg: FitConfig):
        from ..scenario.category import auto_category
        from ..scenario.materials import resolve_material
        from .own.fit import coordinates_fit, surface_rows
        from .own.mechanics import build_mechanics

        self.vc, self.faces, self.cfg = vc, faces, cfg
        category, material = resolve_material(cfg.material, auto_category(vc, faces))
        self.mech = build_mechanics(vc, faces, category, material)
        self.solve = coordinates_fit(self.mech, weights=self.mech.areas)
        rng = np.random.default_rng([cfg.seed, 3])
        self.dense, dfidx, dbary = sample_surface(vc, faces, cfg.samples, rng)
        self.dense_at = (dfidx, dbary)
        self.surface_rows = surface_rows(self.mech, faces, dfidx[:FIT_SURFACE],
                                         dbary[:FIT_SURFACE])

    def _shape(self, Z: np.ndarray, R: np.ndarray, t: np.ndarray, goal: np.ndarray,
               rest_chamfer: float) -> ShapeFit:
        """The fitted shape R (rest + Phi Z) + t, told again as its own rigid part and the
        coordinates of what is left (the affine handles took part of the turn)."""
        shape = (self.vc + self.mech.vertex_rows @ Z) @ R.T + t
        R, t = kabsch(self.vc, shape)
        Z = self.solve((shape - t) @ R - self.vc)
        fitted = barycentric_points(shape, self.faces, *self.dense_at)
        return ShapeFit(z=Z.reshape(-1), rotation=R, translation=t,
                        chamfer=chamfer_l1(fitted, goal), rest_chamfer=rest_chamfer,
                        vertex_error=None, shape=shape)

    def same_topology(self, target: np.ndarray) -> ShapeFit:
        """target (N, 3) canonical vertices of the welded rest's topology."""
        R, t = kabsch(self.vc, target)  # target ~ R rest + t
        Z = self.solve((target - t) @ R - self.vc)
        goal = barycentric_points(target, self.faces, *self.dense_at)
        rest_chamfer = chamfer_l1(self.dense @ R.T + t, goal)
        fit = self._shape(Z, R, t, goal, rest_chamfer)
        fit.vertex_error = mean_vertex_error(fit.shape, target, bbox_diagonal(target))
        return fit

    def points(self, goal: np.ndarray) -> ShapeFit:
        """goal (G, 3) canonical points of the deformed surface."""
        from .own.fit import cloud_fit, rigid_start

        cloud = goal
        if len(cloud) > self.cfg.points:
            rng = np.random.default_rng([self.cfg.seed, 5])
            cloud = cloud[rng.choice(len(cloud), self.cfg.points, replace=False)]
        rest = self.dense[:FIT_SURFACE]
        R, t, _ = rigid_start(rest, cloud)
        Z = cloud_fit(self.mech, rest, self.surface_rows, (cloud - t) @ R)
        return self._shape(Z, R, t, goal, chamfer_l1(self.dense @ R.T + t, goal))


def _initial_state(fits: list[ShapeFit], times: np.ndarray, at: int, com: np.ndarray) -> dict:
    """z, ż, and the rigid velocity and spin (canonical units, per second) at frame ``at``
    from one-sided differences over up to three frames."""
    T = len(fits)
    if T < 2:
        raise UsageError("initial conditions need a sequence of at least 2 frames")
    idx = [0, 1, 2] if at == 0 else [T - 1, T - 2, T - 3]
    idx = idx[: min(3, T)]
    sign = 1.0 if at == 0 else -1.0
    dt = abs(float(times[idx[1]] - times[idx[0]]))
    if dt <= 0:
        raise InputError("the sequence's frame times do not increase")

    def rate(values: list[np.ndarray]) -> np.ndarray:
        if len(values) == 3:
            return sign * (-3 * values[0] + 4 * values[1] - values[2]) / (2 * dt)
        return sign * (values[1] - values[0]) / dt

    f = [fits[i] for i in idx]
    centres = [x.rotation @ com + x.translation for x in f]
    dR = f[1].rotation @ f[0].rotation.T  # world frame, over sign * dt
    angle = np.arccos(np.clip((np.trace(dR) - 1) / 2, -1.0, 1.0))
    axis = np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
    spin = axis * (angle / (2 * np.sin(angle)) if angle > 1e-9 else 0.5)
    out = {"frame": int(idx[0]), "time": float(times[idx[0]]), "z": f[0].z,
           "z_dot": rate([x.z for x in f]), "velocity": rate(centres),
           "spin": sign * spin / dt, "rotation": f[0].rotation,
           "translation": f[0].translation}
    if f[0].shape is not None:  # the own space: the fitted vertices and their velocities
        out["shape"], out["shape_dot"] = f[0].shape, rate([x.shape for x in f])
    return out


def _fit_shapes(fitter: _Fitter | _HandleFitter, obs: Observation, frame: CanonicalFrame,
                welded_index: np.ndarray | None,
                progress: Callable[[int, int], None] | None) -> list[ShapeFit]:
    """Each observed shape in turn: by correspondence when ``welded_index`` (file vertex ->
    welded vertex of the rest) is given, else by Chamfer against its surface samples."""
    fits = []
    if welded_index is not None:
        pick = _first_of_welded(welded_index, len(fitter.vc))
    for i, shape in enumerate(obs.frames):
        target = frame.to_canonical(shape)
        if welded_index is not None:
            fits.append(fitter.same_topology(target[pick]))
        else:
            if obs.faces is None:
                goal = target
            else:
                rng = np.random.default_rng([fitter.cfg.seed, 17, i])
                goal, _, _ = sample_surface(target, obs.faces, fitter.cfg.samples, rng)
            fits.append(fitter.points(goal))
        if progress:
            progress(i + 1, len(obs.frames))
    return fits


def fit(cfg: FitConfig, *, progress: Callable[[int, int], None] | None = None) -> FitResult:
    """Fit the latent state of every observed shape; see the module docstring."""
    from ..model import load_bundle, resolve_device
    from .learned.weights import resolve_weights

    t0 = time.perf_counter()
    if cfg.steps < 0 or cfg.points < 16 or cfg.samples < 16:
        raise UsageError("«steps» must be >= 0, «points» and «samples» >= 16")
    if cfg.space not in SPACES:
        raise UsageError(f"unknown «space» {cfg.space!r}; choose one of {', '.join(SPACES)}")
    obs, rest = observed_and_rest(cfg)
    frame = canonical_frame(rest)
    welded = rest.welded()
    vc = frame.to_canonical(welded.vertices)
    same = obs.faces is not None and obs.frames.shape[1] == len(rest.vertices)
    if cfg.space != "learned":
        return _fit_handles(cfg, obs, rest, frame, welded, vc, same, progress, t0)
    device = resolve_device(cfg.device)
    bundle = resolve_weights(cfg.weights)
    model, _ = load_bundle(bundle, device)
    # each decoder call holds ~1k points x 128 channels, too little for intra-op threads to
    # gain, and their hand-offs cost far more once another process shares the cores (a
    # 1,024-point decode and backward on a busy 2-core machine: 28 ms on one thread, 160 on two)
    with one_thread_on(device):
        fitter = _Fitter(model.eval(), vc, welded.faces, cfg)
        fits = _fit_shapes(fitter, obs, frame, welded.index if same else None, progress)
    result = FitResult(observation=obs, rest=rest, frame=frame,
                       mode="correspondence" if same else "chamfer", fits=fits,
                       weights=str(bundle), device=str(device), seconds=0.0)
    return _finished(result, vc, t0)


def _fit_handles(cfg: FitConfig, obs: Observation, rest: Asset, frame: CanonicalFrame,
                 welded, vc: np.ndarray, same: bool, progress, t0: float) -> FitResult:
    """Every shape fitted in the rest's own handle space (by correspondence where it has
    the rest's topology, ``same``); no bundle is read."""
    fitter = _HandleFitter(vc, welded.faces, cfg)
    fits = _fit_shapes(fitter, obs, frame, welded.index if same else None, progress)
    result = FitResult(observation=obs, rest=rest, frame=frame,
                       mode="correspondence" if same else "chamfer", fits=fits, weights="",
                       device="cpu", seconds=0.0, space="handles",
                       handles=fitter.mech.basis.handles)
    return _finished(result, vc, t0)


def _finished(result: FitResult, vc: np.ndarray, t0: float) -> FitResult:
    """A sequence's initial conditions, and the time taken."""
    obs, fits = result.observation, result.fits
    if obs.kind == "sequence" and len(fits) > 1:
        com = vc.mean(axis=0)
        result.initial = {"first": _initial_state(fits, obs.times, 0, com),
                          "last": _initial_state(fits, obs.times, len(fits) - 1, com)}
    result.seconds = time.perf_counter() - t0
    return result


def continuation(result: FitResult, which: str) -> Continuation:
    """The recovered state of a sequence's ``first`` or ``last`` frame, to animate from; the
    ground is put at the lowest point the sequence reached."""
    from .animate import Continuation

    if which not in result.initial:
        raise UsageError(f"«from» {which}: a sequence has 'first' and 'last'")
    s = result.initial[which]
    floor = min(float(result.frame.to_canonical(f)[:, 1].min())
                for f in result.observation.frames)
    if result.space == "handles":
        return Continuation(start=None, velocity=s["velocity"], spin=s["spin"], floor=floor,
                            shape=s["shape"], shape_velocity=s["shape_dot"])
    start = LatentStart(z=s["z"], z_dot=s["z_dot"], rotation=s["rotation"],
                        translation=s["translation"])
    return Continuation(start=start, velocity=s["velocity"], spin=s["spin"], floor=floor)


def result_json(result: FitResult) -> dict:
    """The JSON document ``neurok fit`` writes: per shape z, pose and errors; for sequences
    the initial conditions; poses in the rest's canonical frame (+Y up, centred, largest
    extent 1; ``frame`` gives the map to the file's units)."""
    obs = result.observation
    arr = lambda a: np.round(np.asarray(a, np.float64), 7).tolist()  # noqa: E731
    shapes = [{"time": float(obs.times[i]), "z": arr(f.z), "rotation": arr(f.rotation),
               "translation": arr(f.translation), "chamfer_l1": f.chamfer,
               "rest_chamfer_l1": f.rest_chamfer, "vertex_error": f.vertex_error}
              for i, f in enumerate(result.fits)]
    own = result.space == "handles"
    if own:  # the own space's coordinates, Z (4H, 3) row by row, in the rest's canonical
        # frame; the fitted shape is R (rest + Phi Z) + t, and no shape arrays are written
        for shape in shapes:
            shape["coordinates"] = shape.pop("z")
    ch = [f.chamfer for f in result.fits]
    doc = {"observed": str(obs.kind), "mode": result.mode, "rest": str(result.rest.path),
           "space": result.space, **({"handles": result.handles} if own else {}),
           "frames": len(result.fits), "latent_dim": int(len(result.fits[0].z)),
           "weights": result.weights, "device": result.device,
           "frame": {"center": arr(result.frame.center), "extent": result.frame.extent,
                     "up": result.frame.up, "size_m": result.frame.size_m},
           "chamfer_l1": {"mean": float(np.mean(ch)), "max": float(np.max(ch))},
           "rest_chamfer_l1": float(np.mean([f.rest_chamfer for f in result.fits])),
           "seconds": result.seconds, "shapes": shapes}
    if result.initial:
        names = {"z": "coordinates", "z_dot": "coordinates_dot"} if own else {}
        doc["initial_conditions"] = {k: {names.get(n, n): arr(v) if isinstance(v, np.ndarray)
                                         else v for n, v in s.items()
                                         if n not in ("shape", "shape_dot")}
                                     for k, s in result.initial.items()}
    return doc


def write_result(result: FitResult, path: Path) -> None:
    """The JSON document, written atomically."""
    write_json(result_json(result), path)


def write_json(doc: dict, path: Path) -> None:
    """A fit's JSON document (this one's or fit_rig's), written atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
