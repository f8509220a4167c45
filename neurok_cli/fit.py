"""``neurok fit``: inverse kinematics, the latent state(s) of observed shapes (DESIGN.md §2).

observed (a mesh with the rest's topology, a mesh of another topology or a point cloud, or a
sequence: animated glTF or frame folder) + rest -> the rest's canonical frame -> per shape:

- same topology: rigid alignment (Kabsch), the posterior encoder's guess from the vertex
  displacements, then Adam on z against the displacements at the driving points;
- otherwise: Adam on z, a rotation and a translation against the Chamfer distance, from
  the prior mean and from the encoder's guess on nearest-point displacements;

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

from .data.geometry import barycentric_points, face_normals, kabsch, sample_surface
from .errors import InputError, UsageError
from .evaluate.metrics import bbox_diagonal, chamfer_l1, mean_vertex_error
from .io.asset import Asset
from .io.atomic import atomic_path
from .io.mesh import GLTF_SUFFIXES, CanonicalFrame, canonical_frame, load_mesh
from .model import NeurokModel, farthest_point_sample
from .model.inverse import fit_surface
from .motion import LatentStart, encode_object

if TYPE_CHECKING:
    from .animate import Continuation

DECODE_CHUNK = 4096  # query points per decoder call
FIT_SURFACE = 1024  # rest-surface samples decoded per step of the Chamfer fit


@dataclass
class FitConfig:
    observed: Path
    rest: Path | None = None  # None: the first frame of a sequence
    steps: int = 150  # Adam steps per fit
    points: int = 2048  # observed points in the Chamfer fit
    samples: int = 10_000  # samples each way for the reported Chamfer-L1
    fps: float | None = None  # frame rate of a frame folder (default: its frames.json's,
    # else 30; a glTF carries its own times)
    up: str | None = None
    seed: int = 0
    weights: str = "neurok-base"
    device: str = "auto"
    require_sequence: bool = False  # fail before any work unless a sequence is observed
    animation: str | None = None  # a glTF's animation by name or index; default: the first
    # neurok wrote, else the file's first, with every other that drives different parts
    # (gltf_anim.animations_together)


@dataclass
class Observation:
    """What was observed, in the file's units and axes."""

    kind: str  # "mesh", "points" or "sequence"
    frames: np.ndarray  # (T, N, 3): vertices per frame, or (1, N, 3) points
    faces: np.ndarray | None  # (F, 3), None for a point cloud
    times: np.ndarray  # (T,) seconds
    asset: Asset | None = None  # the first frame as a mesh (sequences and meshes)


@dataclass
class ShapeFit:
    z: np.ndarray  # (k,)
    rotation: np.ndarray  # (3, 3) canonical: observed = R (rest + decode(z)) + t
    translation: np.ndarray  # (3,) canonical units
    chamfer: float
    rest_chamfer: float
    vertex_error: float | None  # same topology only


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


def load_observation(path: Path, *, up: str | None = None, fps: float | None = None,
                     animation: str | None = None) -> Observation:
    """A sequence (folder of frames, or a glTF with animation), a mesh, or a point cloud.
    ``fps``: a frame folder's rate (default: its frames.json's, else 30). ``animation``: a
    glTF's animation by name or index (default: the first neurok wrote, else its first, with
    those that move other parts; the others, such as animate's --samples, are alternatives
    to it)."""
    from .io.frames import frame_info, read_frames
    from .io.gltf_anim import animation_index, animations_together, first_of_ours
    from .io.gltf_read import read_animated
    from .io.points import READERS, load_points

    if animation is not None and path.suffix.lower() not in GLTF_SUFFIXES:
        raise UsageError(f"--animation picks one of a glTF's animations; {path.name} is not "
                         "a glTF file")
    if path.suffix.lower() in READERS and path.suffix.lower() not in (".obj", ".ply"):
        return Observation("points", load_points(path)[None], None, np.zeros(1))
    if fps is not None and not fps > 0:
        raise UsageError(f"--fps must be > 0, got {fps}")
    if path.is_dir():
        asset, frames = read_frames(path)
        times = np.arange(len(frames)) / (fps or frame_info(path).get("fps", 30.0))
        return Observation("sequence", frames, asset.faces, times, asset)
    if path.suffix.lower() in GLTF_SUFFIXES:
        asset = load_mesh(path)
        first = first_of_ours(asset.document) if animation is None else \
            animation_index(asset.document, animation)
        which, _ = animations_together(asset.document, first)
        scene = read_animated(path, animations=which or None)
        if len(scene.times) > 1:
            return Observation("sequence", scene.frames, asset.faces, scene.times, asset)
        return Observation("mesh", asset.vertices[None], asset.faces, np.zeros(1), asset)
    try:
        asset = load_mesh(path, up=up)
    except InputError as e:
        if "no triangle faces" not in str(e):
            raise
        return Observation("points", load_points(path)[None], None, np.zeros(1))
    return Observation("mesh", asset.vertices[None], asset.faces, np.zeros(1), asset)


def _first_of_welded(index: np.ndarray, count: int) -> np.ndarray:
    """For each welded vertex, one file vertex that maps to it."""
    first = np.zeros(count, np.int64)
    first[index[::-1]] = np.arange(len(index))[::-1]
    return first


class _Fitter:
    """One rest shape, its prior and samples; fits observed shapes in its canonical frame."""

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

    def t(self, a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), dtype=self.dtype, device=self.dev)[None]

    def decode(self, z: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Displacement (n, 3) canonical at points (n, 3) for one z (k,)."""
        with torch.no_grad():
            out = [self.model.decode(self.t(z), self.prior, chunk) for chunk in
                   self.t(points).split(DECODE_CHUNK, dim=1)]
        return torch.cat(out, dim=1)[0].to(torch.float64).cpu().numpy()

    def posed(self, z: np.ndarray, R: np.ndarray, tr: np.ndarray, at: np.ndarray
              ) -> np.ndarray:
        return (at + self.decode(z, at)) @ R.T + tr

    def guess(self, delta_pts: np.ndarray) -> torch.Tensor:
        """The posterior encoder's z (1, k) for displacements at the prior's samples."""
        with torch.no_grad():
            mu, _ = self.model.encode_posterior(self.t(self.pts), self.t(self.nrm),
                                                self.t(delta_pts), self.prior)
        return mu

    def refine(self, starts: torch.Tensor, goal: np.ndarray, *, latent: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chamfer fit of z, R, t from starts (S, k) to goal (G, 3) points (its bounding box
        centred first): z (k,), R (3, 3), t (3,) with goal ≈ R (rest + decode(z)) + t."""
        centre = (goal.min(axis=0) + goal.max(axis=0)) / 2.0
        cloud = goal - centre
        if len(cloud) > self.cfg.points:
            rng = np.random.default_rng([self.cfg.seed, 5])
            cloud = cloud[rng.choice(len(cloud), self.cfg.points, replace=False)]
        fit = fit_surface(self.model, self.prior, self.t(self.dense[:FIT_SURFACE])[0],
                          self.t(cloud)[0], starts, steps=self.cfg.steps, latent=latent)
        f64 = lambda x: x.to(torch.float64).cpu().numpy()  # noqa: E731
        return f64(fit.z), f64(fit.rotation), f64(fit.translation) + centre

    def same_topology(self, target: np.ndarray) -> ShapeFit:
        """target (N, 3) canonical vertices of the welded rest's topology: rigid alignment,
        the encoder's guess, a fit to the displacements, then the Chamfer refinement."""
        rot, shift = kabsch(target, self.vc)  # aligned = rot @ target + shift
        aligned = target @ rot.T + shift
        delta = aligned - self.vc
        d_pts = barycentric_points(delta, self.faces, self.fidx, self.bary)
        t = self.t
        z = self.model.fit_latent(self.prior, t(self.vc[self.drive]), t(delta[self.drive]),
                                  steps=self.cfg.steps, points=t(self.pts), normals=t(self.nrm),
                                  delta=t(d_pts))
        goal = barycentric_points(aligned, self.faces, *self.dense_at)
        zc = z[0].to(torch.float64).cpu().numpy()
        # the refinement, unless the correspondence fit already matches the surface better
        candidates = [(zc, np.eye(3), np.zeros(3)), self.refine(z, goal)]
        errors = [chamfer_l1(self.posed(*c, self.dense), goal) for c in candidates]
        best = int(np.argmin(errors))
        zs, R, tr = candidates[best]
        verts = self.posed(zs, R, tr, self.vc)
        # back from the aligned frame: target = rot^T (aligned - shift)
        return ShapeFit(z=zs, rotation=rot.T @ R, translation=rot.T @ (tr - shift),
                        chamfer=errors[best], rest_chamfer=chamfer_l1(self.dense, goal),
                        vertex_error=mean_vertex_error(verts, aligned, bbox_diagonal(aligned)))

    def points(self, goal: np.ndarray) -> ShapeFit:
        """goal (G, 3) canonical points of the deformed surface: the Chamfer fit from the
        prior mean and from the encoder's guess on nearest-point displacements."""
        from scipy.spatial import cKDTree

        centre = (goal.min(axis=0) + goal.max(axis=0)) / 2.0
        _, near = cKDTree(goal - centre).query(self.pts)
        starts = torch.cat([self.prior.mu, self.guess(goal[near] - centre - self.pts)])
        z, R, tr = self.refine(starts, goal)
        zr, Rr, trr = self.refine(self.prior.mu, goal, latent=False)  # the rest-pose baseline
        return ShapeFit(z=z, rotation=R, translation=tr,
                        chamfer=chamfer_l1(self.posed(z, R, tr, self.dense), goal),
                        rest_chamfer=chamfer_l1(self.posed(zr, Rr, trr, self.dense), goal),
                        vertex_error=None)


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
    return {"frame": int(idx[0]), "time": float(times[idx[0]]), "z": f[0].z,
            "z_dot": rate([x.z for x in f]), "velocity": rate(centres),
            "spin": sign * spin / dt, "rotation": f[0].rotation,
            "translation": f[0].translation}


def fit(cfg: FitConfig, *, progress: Callable[[int, int], None] | None = None) -> FitResult:
    """Fit the latent state of every observed shape; see the module docstring."""
    from .animate import resolve_weights
    from .model import load_bundle, resolve_device

    t0 = time.perf_counter()
    if cfg.steps < 0 or cfg.points < 16 or cfg.samples < 16:
        raise UsageError("--steps must be >= 0, --points and --samples >= 16")
    obs = load_observation(cfg.observed, up=cfg.up, fps=cfg.fps, animation=cfg.animation)
    if cfg.require_sequence and (obs.kind != "sequence" or len(obs.frames) < 2):
        raise UsageError(f"{cfg.observed}: not a sequence of 2 or more frames (an animated "
                         "glTF or a folder of frames), so it has no motion to continue")
    if cfg.rest is not None:
        rest = load_mesh(cfg.rest, up=cfg.up)
    elif obs.kind == "sequence":
        rest = obs.asset
    else:
        raise UsageError(f"{cfg.observed}: one observed shape needs its undeformed mesh: "
                         "pass --rest REST")
    device = resolve_device(cfg.device)
    bundle = resolve_weights(cfg.weights)
    model, _ = load_bundle(bundle, device)
    frame = canonical_frame(rest)
    welded = rest.welded()
    vc = frame.to_canonical(welded.vertices)
    fitter = _Fitter(model, vc, welded.faces, cfg)
    same = obs.faces is not None and obs.frames.shape[1] == len(rest.vertices)
    fits = []
    pick = _first_of_welded(welded.index, len(welded.vertices))
    for i, shape in enumerate(obs.frames):
        target = frame.to_canonical(shape)
        if same:
            fits.append(fitter.same_topology(target[pick]))
        else:
            if obs.faces is None:
                goal = target
            else:
                rng = np.random.default_rng([cfg.seed, 17, i])
                goal, _, _ = sample_surface(target, obs.faces, cfg.samples, rng)
            fits.append(fitter.points(goal))
        if progress:
            progress(i + 1, len(obs.frames))
    result = FitResult(observation=obs, rest=rest, frame=frame,
                       mode="correspondence" if same else "chamfer", fits=fits,
                       weights=str(bundle), device=str(device), seconds=0.0)
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
        raise UsageError(f"--from {which}: a sequence has 'first' and 'last'")
    s = result.initial[which]
    floor = min(float(result.frame.to_canonical(f)[:, 1].min())
                for f in result.observation.frames)
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
    ch = [f.chamfer for f in result.fits]
    doc = {"observed": str(obs.kind), "mode": result.mode, "rest": str(result.rest.path),
           "frames": len(result.fits), "latent_dim": int(len(result.fits[0].z)),
           "weights": result.weights, "device": result.device,
           "frame": {"center": arr(result.frame.center), "extent": result.frame.extent,
                     "up": result.frame.up, "size_m": result.frame.size_m},
           "chamfer_l1": {"mean": float(np.mean(ch)), "max": float(np.max(ch))},
           "rest_chamfer_l1": float(np.mean([f.rest_chamfer for f in result.fits])),
           "seconds": result.seconds, "shapes": shapes}
    if result.initial:
        doc["initial_conditions"] = {k: {n: arr(v) if isinstance(v, np.ndarray) else v
                                         for n, v in s.items()}
                                     for k, s in result.initial.items()}
    return doc


def write_result(result: FitResult, path: Path) -> None:
    """The JSON document, written atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(result_json(result), indent=1) + "\n")
