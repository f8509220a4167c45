"""``neurok animate``: a static asset to a physically plausible animation (docs/design.md,
"Data flow").

load -> weld -> physical frame (metres, +Y up, ground at y = 0) -> preset and conditions
(scenario/presets.py) -> motion in the object's own shape space (deform/own/motion.py), or
in the learned latent space (deform/learned/motion.py: encode, fit, integrate, decode), or
parts on joints (rig/animate.py) -> back to the file's frame, the ground where the asset
stands in it (deform/to_file.py, scenario/placement.py) -> export (by the output's
extension).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import NeurokError, UsageError
from ..io.mesh import CanonicalFrame, size_source
from ..limits import HANDLES, check_frames, require_material
from ..render.export import ExportOptions, check_output, export_motion
from ..rig.articulation import JointSpec
from ..scenario.conditions import Conditions, SimMaterial
from ..scenario.materials import material_names, resolve_material
from ..scenario.placement import Ground, check_placement, load_placed, physics_offsets, place_ground
from ..scenario.presets import (
    DEFAULT_PRESET,
    JOINT_PRESETS,
    Overrides,
    check_preset,
    preset_conditions,
)
from .learned.weights import DEFAULT_WEIGHTS, load_model
from .report import AnimateReport, energy_row, material_row
from .to_file import file_map, to_file

if TYPE_CHECKING:  # the latent motion imports torch: only the deformable path loads it
    from ..scenario.spec import LatentStart, MotionConfig

SPACES = ("auto", "learned", "handles")  # --space: the shape space a deformable body moves
# in; auto is the object's own handles unless only the learned bundle can do what is asked
ARTICULATED = "articulated"  # --material: rigid parts on joints (rig/animate.py)



@dataclass
class Continuation:
    """A recovered state to start from instead of rest (``neurok fit --then-animate``), in
    the input's canonical frame (+Y up, centred on its bounding box, largest extent 1):
    the learned space's latent start, or the object's own space's fitted shape."""

    start: LatentStart | None  # translation in canonical units (None: the own space's)
    velocity: np.ndarray  # (3,) canonical units per second
    spin: np.ndarray  # (3,) rad/s
    floor: float  # canonical height of the ground
    shape: np.ndarray | None = None  # (N, 3) the welded vertices where they start (the own
    shape_velocity: np.ndarray | None = None  # space's), and (N, 3) their velocities, /s


@dataclass
class AnimateConfig:
    input: Path
    output: Path
    seconds: float = 4.0
    fps: float = 30.0
    material: str = "auto"  # auto, a category (soft, cloth, beam) or a named material
    preset: str | None = None  # None = by material
    stiffness: float = 1.0  # scale on the material's Young's modulus
    young: float | None = None
    density: float | None = None
    damping: float | None = None  # Rayleigh stiffness-proportional damping, seconds
    size: float | None = None
    units: str | None = None  # the file's own units (m, cm, mm, in, ft); see canonical_frame
    up: str | None = None
    ground_at: float | None = None  # the ground along the file's up axis, file units; None:
    # the asset's lowest point (scenario/placement.py)
    overrides: Overrides = field(default_factory=Overrides)
    samples: int = 1
    seed: int = 0
    weights: str = DEFAULT_WEIGHTS
    device: str = "auto"
    method: str = "rk4"
    subspace: int = 8
    handles: int | None = None  # the object's own basis' handles (None: by category)
    space: str = "auto"  # handles: the object's own basis (deform/own/); learned: the
    # bundle's latent space; auto: handles unless ``learned_only`` names a reason
    strain_limit: float | None = None  # None: the bundle's for the category; inf: none
    export: ExportOptions = field(default_factory=ExportOptions)
    continuation: Continuation | None = None
    joints: list[JointSpec] = field(default_factory=list)  # --joint, for articulated objects

    @property
    def articulated(self) -> bool:
        """Rigid parts on joints: asked for by the material, a joint or a joint's preset."""
        return (self.material == ARTICULATED or bool(self.joints)
                or self.preset in JOINT_PRESETS)


def _material(cfg: AnimateConfig, base: SimMaterial) -> SimMaterial:
    overrides = {k: getattr(cfg, k) for k in ("young", "density", "damping")
                 if getattr(cfg, k) is not None}
    return replace(base, **overrides)  # the overrides are checked (_check_options)


def animate(cfg: AnimateConfig, *, progress: Callable[[str], None] | None = None,
            on_frame: Callable[[int, int], None] | None = None,
            on_decode: Callable[[int, int], None] | None = None) -> AnimateReport:
    """Animate ``cfg.input`` and write the motion(s) to ``cfg.output``; ``progress(stage)``
    names each stage (loading, moving, writing) as it starts, ``on_frame(done, total)``
    follows the integration frame by frame and ``on_decode(done, total)`` the decoding a
    block of frames at a time."""
    t0 = time.perf_counter()
    _check_options(cfg)
    say = progress or (lambda _: None)
    say("loading")
    asset, frame = load_placed(cfg.input, up=cfg.up, size=cfg.size, units=cfg.units)
    rigged = _rigged(cfg, asset, frame)
    if rigged is not None:
        return _animate_rig(cfg, asset, frame, rigged, say, on_frame, t0)
    from ..scenario.category import auto_category, too_coarse

    handles = space_of(cfg) == "handles"
    model, bundle_cfg, bundle, device, compiled = None, {}, "", "cpu", True
    if not handles:
        model, bundle_cfg, bundle, device, compiled = load_model(cfg.weights, cfg.device,
                                                                 cfg.method, cfg.seed)
    welded = asset.welded()
    surface = frame.to_canonical(welded.vertices) * frame.size_m  # metres, +Y up, centred
    category, base = resolve_material(cfg.material, auto_category(surface, welded.faces))
    material = _material(cfg, base)
    run = _run_start(cfg, frame, surface, category)
    start = surface + np.array([0.0, run.lift, 0.0])
    mcfg = _motion_config(cfg, bundle_cfg, category, material, run)
    t_load = time.perf_counter()
    say("moving" if compiled else
        "moving (compiling the integrator, once: about half a minute)")
    motion = _move(cfg, None if handles else model, start, welded.faces, mcfg, on_frame,
                   on_decode)
    say("writing")
    file_frames = [to_file(m, frame, run.back, welded.index) for m in motion.frames]
    preset = run.preset
    names = cfg.export.names or ([f"neurok_{preset}"] if cfg.samples == 1 else
                                 [f"neurok_{preset}_{i}" for i in range(cfg.samples)])
    kind = category if cfg.material == "auto" else f"{cfg.material} ({category})"
    options = replace(cfg.export, names=names, metres_per_unit=frame.size_m / frame.extent,
                      caption=f"{Path(cfg.input).name}: {kind}, {frame.size_m:.3g} m, "
                              f"{preset} (neurok animate)")
    live = None if motion.model is None else (motion.model, welded.index,
                                              np.vstack(file_map(frame, run.back)))
    out = export_motion(asset, file_frames, cfg.output, fps=cfg.fps, options=options, live=live,
                        overwrite=True)  # (the file's frames are written and not read again)
    t_end = time.perf_counter()
    st = motion.stats
    timings = {"load": t_load - t0, **{k: float(v) for k, v in st["time"].items()},
               "export": t_end - t_load - sum(st["time"].values()), "total": t_end - t0}
    return AnimateReport(
        output=cfg.output, category=category, preset=preset, frames=len(file_frames[0]),
        fps=cfg.fps, samples=cfg.samples, vertices=len(asset.vertices),
        welded_vertices=len(welded.vertices), latent_dims=st["latent_dims"],
        reduced_dims=st["reduced_dims"], dynamics_points=st["dynamics_points"],
        size_m=frame.size_m, mass_kg=st["mass_kg"], steps=st["steps"],
        fit_residual=st["fit_residual"], run_residual=st["run_residual"],
        energy=energy_row(motion.energy), timings=timings,
        export={"format": out.fmt, "bytes": out.bytes, **out.details},
        weights=str(bundle), device=str(device),
        warnings=[*asset.warnings, *filter(None, [too_coarse(surface, category)]),
                  *out.warnings],
        material=material_row(cfg.material, category, material),
        size_from=size_source(asset, cfg.size, cfg.units), input=str(cfg.input),
        pins=st["pins"], strain_limit=st["strain_limit"], strain_sweeps=st["strain_sweeps"],
        ground=(run.ground.json(float(motion.frames[:, 0, :, 1].min())) if run.cond.ground
                else None),
        start_height_m=run.height_m, conditions=run.cond.json(),
        handles=({k: st[k] for k in ("handles", "coordinates", "elements", "solid", "step_s",
                                     "iterations")} if handles else None),
        space="handles" if handles else "learned")


def _move(cfg: AnimateConfig, model, start: np.ndarray, faces: np.ndarray,
          mcfg: MotionConfig, on_frame, on_decode):
    """The body's motion from ``start`` (N, 3) metres: in the object's own space, or in the
    learned ``model``'s latent space where one is given."""
    try:
        if model is None:
            from .own.motion import own_motion

            return own_motion(start, faces, mcfg, handles=cfg.handles, progress=on_frame)
        from .learned.motion import latent_motion

        return latent_motion(model, start, faces, mcfg, progress=on_frame, decoded=on_decode)
    except FloatingPointError as exc:
        raise NeurokError(f"{exc}; try a smaller «stiffness», more «damping» or a gentler "
                          "preset") from exc


class _RunStart(NamedTuple):
    """Where and how a deformable body's run starts (metres, the physics' ground at y = 0)."""

    preset: str
    cond: Conditions
    height_m: float  # the preset's (or --drop's) start over the ground
    ground: Ground
    lift: float  # added to the surface's heights: its start in the physics
    back: float  # taken from the frames' heights: the file's ground again
    start_state: LatentStart | None  # a fitted start (``cfg.continuation``); None: at rest
    begin: tuple[np.ndarray, np.ndarray] | None  # the own space's fitted start: the
    # surface's positions (N, 3) in the physics' metres and their velocities (N, 3) m/s


def _run_start(cfg: AnimateConfig, frame: CanonicalFrame, surface: np.ndarray, category: str
               ) -> _RunStart:
    """The preset (by the category unless given; free after a fitted sequence), its
    conditions under the user's settings, the ground, and where the (N, 3) surface starts."""
    cont = cfg.continuation
    preset = cfg.preset or ("free" if cont else DEFAULT_PRESET[category])
    cond, height = preset_conditions(preset, category, frame.size_m, cfg.overrides,
                                     extent=np.ptp(surface, axis=0))
    ground = place_ground(frame, surface, cfg.ground_at)
    lift, back = physics_offsets(surface, ground, height * frame.size_m, cond.ground)
    start_state = begin = None
    if cont is not None:
        ground, lift, start_state = _continue(cfg, frame, surface, ground, cond)
        back = lift
        if cont.start is None:  # the own space's: where the fitted shape is, in metres
            begin = (cont.shape * frame.size_m + np.array([0.0, lift, 0.0]),
                     cont.shape_velocity * frame.size_m)
    return _RunStart(preset, cond, height * frame.size_m, ground, lift, back, start_state,
                     begin)

def _rigged(cfg: AnimateConfig, asset, frame: CanonicalFrame):
    """An articulated object's placement and rig (None: a deformable body): asked for
    (``cfg.articulated``), or found with nothing said otherwise (the material auto, a
    preset that suits both, no option only a deformable body takes; animate_rig.found_rig)."""
    from ..rig.animate import found_rig, place

    preset = cfg.preset or "open"
    if cfg.articulated:  # its options are checked (_check_options)
        return place(asset, frame, preset=preset, drop=cfg.overrides.drop,
                     ground_at=cfg.ground_at), None
    if (cfg.material != "auto" or cfg.preset not in (None, "drop", "free")
            or _rig_conflicts(cfg)):
        return None
    at = place(asset, frame, preset=preset, drop=cfg.overrides.drop, ground_at=cfg.ground_at)
    rig = found_rig(at)
    return None if rig is None else (at, rig)


def _animate_rig(cfg: AnimateConfig, asset, frame: CanonicalFrame, rigged, say, on_frame,
                 t0: float) -> AnimateReport:
    """An articulated object: its parts moved rigidly on their joints (rig/animate.py)."""
    from ..rig.animate import joint_rows, rig_motion, rig_start, to_physical

    at, found = rigged
    preset = cfg.preset or "open"
    cond = Conditions(impulses=list(cfg.overrides.pushes))  # a rig takes gravity and pushes
    cond.gravity = cfg.overrides.gravity or cond.gravity
    t_load = time.perf_counter()
    say("moving")
    begin = rig_start(at.start, at.pieces.faces, at.pieces.piece, at.pieces.names,
                      joints=[to_physical(j, frame, at.lift) for j in cfg.joints],
                      preset=preset, density=cfg.density, drop_m=at.drop_m,
                      gravity=cond.gravity, rig=found, pushes=cond.impulses)
    motion = rig_motion(begin, seconds=cfg.seconds, fps=cfg.fps, on_frame=on_frame)
    say("writing")
    file_frames = [to_file(motion.frames, frame, at.back, at.pieces.index)]
    options = replace(cfg.export, names=cfg.export.names or [f"neurok_{preset}"],
                      metres_per_unit=frame.size_m / frame.extent,
                      caption=f"{Path(cfg.input).name}: parts on joints, {preset} "
                              "(neurok animate)")
    out = export_motion(asset, file_frames, cfg.output, fps=cfg.fps, options=options)
    t_end = time.perf_counter()
    run = motion.run
    energy = run.kinetic + run.potential
    joints = [c for c, co in enumerate(motion.link.coords) if co.parent >= 0]
    return AnimateReport(
        output=cfg.output, category=ARTICULATED, preset=preset, frames=len(file_frames[0]),
        fps=cfg.fps, samples=1, vertices=len(asset.vertices),
        welded_vertices=len(at.pieces.vertices), latent_dims=len(motion.link.coords),
        reduced_dims=len(motion.link.coords), dynamics_points=len(motion.link.points),
        size_m=frame.size_m, mass_kg=float(motion.link.mass.sum()), steps=run.steps,
        fit_residual=0.0, run_residual=0.0,
        energy={"kinetic_max_J": float(run.kinetic.max()),
                "dissipated_J": float(energy[0] - energy[-1]), "external_work_J": 0.0,
                "drift": None},  # not tracked: damping and limits take energy
        timings={"load": t_load - t0, **motion.seconds,
                 "export": t_end - t_load - sum(motion.seconds.values()), "total": t_end - t0},
        export={"format": out.fmt, "bytes": out.bytes, **out.details},
        weights="", device="cpu", warnings=[*asset.warnings, *out.warnings],
        material=("articulated (found; --material soft: one soft body)" if found else
                  "articulated") + f": rigid parts, density {motion.link.density:.3g} kg/m³",
        size_from=size_source(asset, cfg.size, cfg.units), input=str(cfg.input),
        ground=at.ground.json(at.drop_m), rig=joint_rows(
            motion.link, motion.run.q[:, joints], motion.speeds[joints]),
        start_height_m=at.drop_m, conditions=cond.json())


def _rig_conflicts(cfg: AnimateConfig) -> list[str]:
    """The options given that an articulated object's motion does not take."""
    o = cfg.overrides
    given = [name for name, value in (
        ("«pin region»", o.pins), ("«velocity»", o.velocity), ("«spin»", o.spin),
        ("«wind»", o.wind), ("«gust»", o.gust), ("«friction»", o.friction),
        ("«young modulus»", cfg.young), ("«damping»", cfg.damping), ("«ground»", o.ground),
        ("«handles»", cfg.handles))
        if value not in (None, [])]
    if cfg.samples != 1:
        given.append("«samples»")
    if cfg.stiffness != 1.0:
        given.append("«stiffness»")
    if cfg.material not in ("auto", ARTICULATED):
        given.append("«material» " + cfg.material)
    if cfg.continuation is not None:
        given.append("a fitted start")
    return given


def learned_only(cfg: AnimateConfig) -> list[str]:
    """What was asked of ``cfg`` that only the learned bundle gives: a fitted start in its
    latent space, or a setting of its own (several motions, ``--samples``, both spaces
    give: the learned from its prior, the object's own from its low modes)."""
    asked = []
    if cfg.continuation is not None and cfg.continuation.start is not None:
        asked.append("fitted start")
    for name, default in (("weights", DEFAULT_WEIGHTS), ("method", "rk4"), ("subspace", 8),
                          ("strain_limit", None)):
        if getattr(cfg, name) != default:
            asked.append(f"«{name.replace('_', ' ')}»")
    return asked


def space_of(cfg: AnimateConfig) -> str:
    """The shape space a deformable body moves in: ``cfg.space``, auto resolved."""
    if cfg.space != "auto":
        return cfg.space
    return "learned" if learned_only(cfg) else "handles"


def _motion_config(cfg: AnimateConfig, bundle_cfg: dict, category: str,
                   material: SimMaterial, run: _RunStart) -> MotionConfig:
    """The motion's settings: the options and where the run starts; in the learned space
    with the bundle's calibration of the category (stiffness and damping scales, prior
    spread, strain limit)."""
    from ..scenario.spec import MotionConfig

    cond, start = run.cond, run.start_state
    if space_of(cfg) == "handles":  # the material as given: no bundle, no calibration
        return MotionConfig(category=category, material=material, conditions=cond,
                            seconds=cfg.seconds, fps=cfg.fps, samples=cfg.samples,
                            seed=cfg.seed, stiffness=cfg.stiffness, begin=run.begin)
    from ..model.bundle import prior_spread, strain_limit

    calib = (bundle_cfg.get("calibration") or {}).get(category, {})
    return MotionConfig(category=category, material=material, conditions=cond,
                        seconds=cfg.seconds, fps=cfg.fps, samples=cfg.samples, seed=cfg.seed,
                        subspace=cfg.subspace, method=cfg.method,
                        stiffness=cfg.stiffness * float(calib.get("stiffness", 1.0)),
                        damping_scale=float(calib.get("damping", 1.0)), start=start,
                        spread=prior_spread(bundle_cfg, category),
                        strain_limit=_strain_limit(cfg.strain_limit,
                                                   strain_limit(bundle_cfg, category)))


def _check_options(cfg: AnimateConfig) -> None:
    """The options that can be judged before any work: a bad one fails at once."""
    check_output(cfg.output, cfg.export.fmt)
    if cfg.material not in (*material_names(), ARTICULATED):
        raise UsageError(f"unknown «material» {cfg.material!r}; choose one of "
                         f"{', '.join(material_names())}")
    check_frames(cfg.seconds, cfg.fps)
    check_placement(cfg.input, up=cfg.up, size=cfg.size, units=cfg.units,
                    ground_at=cfg.ground_at)
    require_material(stiffness=cfg.stiffness, young=cfg.young, density=cfg.density,
                     damping=cfg.damping)
    if cfg.preset is not None:
        check_preset(cfg.preset)
    if cfg.space not in SPACES:
        raise UsageError(f"unknown «space» {cfg.space!r}; choose one of {', '.join(SPACES)}")
    if cfg.space == "handles" and learned_only(cfg):
        raise UsageError(f"the object's own space («space» handles) has no "
                         f"{' or '.join(learned_only(cfg))}: use «space» learned or auto")
    own_start = cfg.continuation is not None and cfg.continuation.start is None
    if own_start and space_of(cfg) == "learned":
        raise UsageError("a start fitted in the object's own space continues there, "
                         f"without {' or '.join(learned_only(cfg)) or '«space» learned'}; "
                         "or fit with «space» learned")
    if cfg.handles is not None:
        if not HANDLES[0] <= cfg.handles <= HANDLES[1]:
            raise UsageError(f"«handles» must be in {HANDLES[0]}..{HANDLES[1]}, got "
                             f"{cfg.handles}")
        if cfg.space == "learned":
            raise UsageError("«handles» shape the object's own space, not «space» learned's")
        if space_of(cfg) == "learned":
            raise UsageError(f"«handles» shape the object's own space; "
                             f"{' and '.join(learned_only(cfg))} need the learned one")
    if not 1 <= cfg.samples <= 64:
        raise UsageError(f"«samples» must be in 1..64, got {cfg.samples}")
    if cfg.strain_limit is not None and not cfg.strain_limit >= 0:
        raise UsageError(f"«strain limit» must be >= 0 (or inf for none), got "
                         f"{cfg.strain_limit}")
    if cfg.articulated:
        conflicts = _rig_conflicts(cfg)
        if conflicts:
            raise UsageError(f"{', '.join(conflicts)}: not for an articulated object (rigid "
                             "parts on joints take «preset», «drop», «push», «gravity», "
                             "«density» and «joint»)")


def _continue(cfg: AnimateConfig, frame: CanonicalFrame, surface: np.ndarray, ground,
              cond: Conditions):
    """A fitted sequence's continuation: the ground where the sequence had it (unless
    given), the lift that puts it at the physics' y = 0, the recovered start state in
    metres, and the sequence's velocity and spin in ``cond`` unless the options set them
    -> (ground, lift, start state)."""
    cont = cfg.continuation
    if cfg.ground_at is None:
        ground = place_ground(frame, surface, frame.from_canonical(
            np.array([0.0, cont.floor, 0.0]))[2 if frame.up == "z" else 1],
            "where the fitted sequence reached")
    lift = -ground.height_m
    if cont.start is None:  # the own space: the fitted shape's velocities hold its motion
        return ground, lift, None
    up = np.array([0.0, lift, 0.0])
    R = cont.start.rotation
    start = replace(cont.start, translation=cont.start.translation * frame.size_m + up - R @ up)
    if cfg.overrides.velocity is None:
        cond.velocity = tuple(np.asarray(cont.velocity) * frame.size_m)
    if cfg.overrides.spin is None:
        cond.spin = tuple(np.asarray(cont.spin))
    return ground, lift, start


def _strain_limit(given: float | None, bundle: float | None) -> float | None:
    """The user's limit over the bundle's; an infinite one is none."""
    limit = given if given is not None else bundle
    return None if limit is None or np.isinf(limit) else float(limit)
