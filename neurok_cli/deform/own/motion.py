"""Motion in the object's own shape space (docs/design.md, "The object's own shape space"):
the mechanics of a surface (``deform/own/mechanics.py``), its start from the conditions (a
velocity and spin, a fitted shape, ``--samples``' draws), and the implicit steps
(``deform/own/step.py``) through every frame, pushes applied as they come; the frames, the
energies and the reduced model's description come back.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from scipy.spatial import cKDTree
from threadpoolctl import threadpool_limits

from ...errors import UsageError
from ...scenario.conditions import pinned_by, select_region
from ...scenario.spec import Motion, MotionConfig
from .air import AIR, GUST_HZ
from .contact import PENETRATION, REACH, SLIP
from .handles import affine_coords
from .mechanics import Mechanics, build_mechanics
from .minimize import HISTORY, ITERATIONS, REFRESH_AT, TOLERANCE
from .reduced_model import describe
from .rotations import skew
from .samples import sample_starts, stored
from .step import TURN, Step

MAX_STEP = 1 / 120  # s: the longest step (an undamped beam's 1.4 Hz swing keeps its
# amplitude over four periods at it, within the few per cent the tip's sampling reads)
SOLID_STEP = 1 / 60  # ... a soft body's: its drop lands, squashes and tips nearly as at
# 1/120 s (penguin's smallest volume 0.963 against 0.958, the capsule's largest shape change
# 0.021 against 0.025, tilts within 3 degrees) in a third less time; a sheet's minimizer
# needs twice the iterations at it, so cloth and beams keep MAX_STEP
CONSTANTS = {"iterations": ITERATIONS, "history": HISTORY, "tolerance": TOLERANCE, "slip": SLIP,
             "turn": TURN, "penetration": PENETRATION, "reach": REACH, "gust_hz": GUST_HZ,
             "air": AIR, "refresh_at": list(REFRESH_AT)}
# (the step's constants, as the reduced model's description carries them)


def own_motion(vertices: np.ndarray, faces: np.ndarray, cfg: MotionConfig, *,
               handles: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> Motion:
    """Move ``vertices`` (N, 3) in the object's own space: cloth on its own simulation mesh
    (``deform/own/cloth_motion.py``), solids and beams in their handle basis."""
    if cfg.category == "cloth":
        from .cloth_motion import cloth_motion

        return cloth_motion(vertices, faces, cfg, progress=progress)
    return handle_motion(vertices, faces, cfg, handles=handles, progress=progress)


def handle_motion(vertices: np.ndarray, faces: np.ndarray, cfg: MotionConfig, *,
                  handles: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Motion:
    """Move ``vertices`` (N, 3) (metres, +Y up, where they start; the ground is y = 0) in
    their own handle space; ``progress(done, total)`` after each frame."""
    clock = {"start": time.perf_counter()}
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    pinned = pinned_by(cfg.conditions.pins, v) if cfg.conditions.pins else None
    mech = build_mechanics(v, f, cfg.category, cfg.material, handles, cfg.stiffness, pinned)
    clock["fit"] = time.perf_counter()
    n_frames = int(np.floor(cfg.seconds * cfg.fps + 1e-9)) + 1
    longest = SOLID_STEP if cfg.category == "soft" else MAX_STEP
    sub = max(1, math.ceil(1.0 / (cfg.fps * longest)))
    h = 1.0 / (cfg.fps * sub)
    stepper = Step(mech, v, f, cfg, h)
    cond = cfg.conditions
    centres = mech.basis.centres
    com = (mech.point_mass @ mech.basis.points[-len(mech.point_mass):]) / mech.mass_total \
        if mech.solid else (mech.point_mass @ v) / mech.mass_total
    spin = np.asarray(cond.spin, np.float64)
    V = affine_coords(skew(spin), np.asarray(cond.velocity) - skew(spin) @ com, centres)
    Z = np.zeros_like(V)
    if cfg.begin is not None:  # a fitted start: its shape and velocities in the basis
        from .fit import coordinates_fit

        fit = coordinates_fit(mech, weights=mech.areas)
        Z, V = fit(cfg.begin[0] - v), V + fit(cfg.begin[1])
    V = stepper.constrain(V)
    pushes = [(p.time, _push(mech, v, p)) for p in sorted(cond.impulses, key=lambda i: i.time)]
    samples = max(int(cfg.samples), 1)
    frames = np.empty((samples, n_frames, len(v), 3))
    clip = (np.zeros((n_frames, *Z.shape)), np.zeros((n_frames, *Z.shape)))
    energy = {k: np.zeros((n_frames, samples)) for k in
              ("kinetic", "potential", "dissipated", "work", "total")}
    starts = [(Z, np.zeros_like(V))] + [(Z + z, dv) for z, dv in sample_starts(
        stepper, samples - 1, cfg.seed, cfg.diversity)]
    steps = iters = 0
    clip[0][0], clip[1][0] = Z, V
    for s, (Z0, dV) in enumerate(starts):  # the first: the conditions alone
        stepper.restart()
        V0 = stepper.constrain(V + dV) if s else V
        frames[s, 0] = stepper.positions(Z0)
        energy_s = {k: e[:, s:s + 1] for k, e in energy.items()}
        _energies(stepper, Z0, V0, energy_s, 0, 0.0, 0.0)
        done = None if progress is None else (
            lambda i, n, s=s: progress(s * n + i, samples * n))
        with threadpool_limits(1, user_api="blas"):  # a few hundred unknowns: threads wait
            n_steps, n_iters = _integrate(stepper, Z0, V0, frames[s:s + 1], energy_s,
                                          list(pushes), sub, clip if s == 0 else None, done)
        steps, iters = steps + n_steps, iters + n_iters
    clock["integrate"] = time.perf_counter()
    if cfg.conditions.ground:
        lowest = float(frames[:, :, :, 1].min())
    else:
        lowest = 0.0
    stats = {"vertices": len(v), "driving_points": len(v), "dynamics_points":
             len(mech.point_mass), "latent_dims": mech.dims, "reduced_dims": mech.dims,
             "handles": mech.basis.handles, "coordinates": stepper.N.shape[1] * 3,
             "elements": len(mech.elements.measure),
             "solid": mech.solid, "springs": 0, "mass_kg": mech.mass_total,
             "size_m": stepper.size, "fit_residual": 0.0, "run_residual": 0.0,
             "strain_limit": None, "strain_sweeps": 0, "steps": steps, "step_s": h,
             "iterations": iters / max(steps, 1), "latent_peak": 0.0,
             "lifted": max(-lowest, 0.0) / stepper.size,
             "pins": ({"vertices": int(pinned.sum()), "points": int(pinned.sum()),
                       "hold": "fixed"} if cond.pins else None),
             "singular_values": [],
             "time": {"encode": 0.0, "fit": clock["fit"] - clock["start"],
                      "integrate": clock["integrate"] - clock["fit"], "decode": 0.0}}
    model = describe(stepper, pushes, clip, cfg.fps, sub, CONSTANTS)
    return Motion(frames=frames, energy=energy, stats=stats, model=model)


def _integrate(stepper: Step, Z, V, frames, energy, pushes, sub: int, clip, progress
               ) -> tuple[int, int]:
    """Step from ``Z``, ``V`` through ``frames`` (1, T, N, 3) (the first filled), ``sub``
    steps a frame, applying ``pushes`` [(time, momentum)] (sorted by time) as they come;
    fills the frames, the ``clip``'s coordinates and velocities (T, 4H, 3; None: not kept)
    and ``energy`` -> (steps, minimizer iterations)."""
    mech, h = stepper.mech, stepper.h
    n_frames = frames.shape[1]
    x, xdot = stepper.positions(Z), mech.vertex_rows @ V
    work, lost, steps, iters = 0.0, 0.0, 0, 0
    for fi in range(1, n_frames):
        for s in range(sub):
            t = ((fi - 1) * sub + s) * h
            while pushes and pushes[0][0] <= t + 1e-12:
                V = V + stepper.accelerate(pushes.pop(0)[1])
                stepper.previous = None  # the jump is no history: start again with Euler
                xdot = mech.vertex_rows @ V
            Z, V, fig = stepper.step(Z, V, t, x, xdot)
            if not np.isfinite(Z).all():
                raise FloatingPointError(f"the motion diverged at {t:.3f} s")
            x = fig["x"]
            xdot = mech.vertex_rows @ V
            work += fig["air_work"]
            lost += fig["dissipated"]
            steps += 1
            iters += fig["iters"]
        frames[0, fi] = x
        if clip is not None:
            clip[0][fi], clip[1][fi] = Z, V
        _energies(stepper, Z, V, energy, fi, work, lost)
        if progress is not None:
            progress(fi, n_frames - 1)
    return steps, iters



def _push(mech: Mechanics, v: np.ndarray, push) -> np.ndarray:
    """The momentum (4H, 3) a push gives the coordinates: the mass under the region at the
    push's velocity (``accelerate`` turns it into their velocities' jump). A solid's mass
    is on its lattice's nodes: those whose nearest vertex the region selects (a push on
    the surface's vertices alone would land on directions that carry almost no mass)."""
    mask = select_region(push.region, v)
    if not mask.any():
        raise UsageError(f"region '{push.region}' selects no vertex of the mesh")
    if mech.solid:
        nodes = mech.basis.points[len(v):]
        _, near = cKDTree(v).query(nodes)
        under = mask[near]
        if not under.any():  # a region thinner than the lattice: the nodes nearest it
            under = np.zeros(len(nodes), bool)
            under[cKDTree(nodes).query(v[mask])[1]] = True
    else:
        under = mask
    held = mech.point_mass * under
    return mech.mass_rows.T @ (held[:, None] * np.asarray(push.velocity)[None, :])


def _energies(stepper: Step, Z, V, energy, fi: int, work: float, lost: float) -> None:
    """Frame ``fi``'s kinetic and potential energy (elastic, bending, gravity, contact and
    pin springs), and the work and losses so far; the total's drift is what the implicit
    steps took beyond damping and friction."""
    mech = stepper.mech
    kin = 0.5 * float(np.sum(V * (mech.M @ V)))
    pot = stored(mech, Z, stepper.bend) - float(np.sum(stepper.gravity * Z))
    if stepper.k_contact is not None:
        y = np.minimum(stepper.touch_rest[:, 1] + stepper.touch_rows @ Z[:, 1], 0.0)
        pot += 0.5 * float(np.sum(stepper.k_contact * y * y))
    energy["kinetic"][fi, 0] = kin
    energy["potential"][fi, 0] = pot
    energy["work"][fi, 0] = work
    energy["dissipated"][fi, 0] = lost
    energy["total"][fi, 0] = kin + pot + lost - work
