"""``neurok animate``: a static asset to a physically plausible animation, through the
learned latent space (DESIGN.md §1–3).

load -> weld -> physical frame (metres, +Y up, ground at y = 0) -> preset and conditions ->
latent motion (deform/motion.py: encode, fit, integrate, decode) -> back to the file's frame, the
ground where the asset stands in it (scenario/placement.py) -> export (by the output's extension).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, NeurokError, UsageError
from ..io.mesh import CanonicalFrame, canonical_frame, load_mesh, size_source
from ..limits import check_faces, check_frames, check_size
from ..render.export import ExportOptions, check_output, export_motion
from ..rig.articulation import JointSpec
from ..scenario.conditions import Conditions, Impulse, SimMaterial
from ..scenario.materials import material_names, resolve_material
from ..scenario.placement import check_ground_at, ground_row, physics_offsets, place_ground

if TYPE_CHECKING:  # the latent motion imports torch: only the deformable path loads it
    from .motion import LatentStart, MotionConfig

PRESETS = ("drop", "wobble", "poke", "sway", "flutter", "free", "open", "close", "swing")
JOINT_PRESETS = ("open", "close", "swing")  # articulated objects' only
ARTICULATED = "articulated"  # --material: rigid parts on joints (rig/animate.py)
DEFAULT_PRESET = {"soft": "drop", "cloth": "flutter", "beam": "sway"}
SHIPPED_WEIGHTS = Path(__file__).resolve().parents[1] / "weights"  # package data: the wheel has it
WEIGHTS_ENV = "NEUROK_WEIGHTS"  # folder(s), os.pathsep-separated, of more bundles by name
DEFAULT_WEIGHTS = "neurok-base"


@dataclass
class Overrides:
    """What the user set explicitly; None = the preset decides."""

    gravity: tuple[float, float, float] | None = None
    ground: bool | None = None
    friction: float | None = None
    pins: list[str] | None = None
    velocity: tuple[float, float, float] | None = None
    spin: tuple[float, float, float] | None = None
    wind: tuple[float, float, float] | None = None
    gust: float | None = None
    pushes: list[Impulse] = field(default_factory=list)
    drop: float | None = None  # start height over the ground, fraction of the size


@dataclass
class Continuation:
    """A recovered state to start from instead of rest (``neurok fit --then-animate``), in
    the input's canonical frame (+Y up, centred on its bounding box, largest extent 1)."""

    start: LatentStart  # translation in canonical units
    velocity: np.ndarray  # (3,) canonical units per second
    spin: np.ndarray  # (3,) rad/s
    floor: float  # canonical height of the ground


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
    strain_limit: float | None = None  # None: the bundle's for the category; inf: none
    export: ExportOptions = field(default_factory=ExportOptions)
    continuation: Continuation | None = None
    joints: list[JointSpec] = field(default_factory=list)  # --joint, for articulated objects

    @property
    def articulated(self) -> bool:
        """Rigid parts on joints: asked for by the material, a joint or a joint's preset."""
        return (self.material == ARTICULATED or bool(self.joints)
                or self.preset in JOINT_PRESETS)


@dataclass
class AnimateReport:
    output: Path
    category: str
    preset: str
    frames: int
    fps: float
    samples: int
    vertices: int
    welded_vertices: int
    latent_dims: int
    reduced_dims: int
    dynamics_points: int
    size_m: float
    mass_kg: float
    steps: int
    fit_residual: float
    run_residual: float
    energy: dict
    timings: dict
    export: dict
    weights: str
    device: str
    warnings: list[str]
    pins: dict | None = None  # vertices, points, hold (clamp or body.Joint's); None: unpinned
    strain_limit: float | None = None  # largest edge strain kept; None: frames as decoded
    strain_sweeps: int = 0  # projection sweeps the limit took (see model/strain.py)
    material: str = ""  # the material used, in words
    size_from: str = ""  # where size_m came from (see io.mesh.size_source)
    input: str = ""  # the file animated
    ground: dict | None = None  # where the ground is (placement.Ground.json); None: no ground
    rig: list[dict] | None = None  # an articulated object's parts and joints


def weights_folders() -> list[Path]:
    """Where a bundle's name is looked up, in order: the folders in $NEUROK_WEIGHTS, then
    the bundles shipped inside the package."""
    given = [Path(p).expanduser() for p in os.environ.get(WEIGHTS_ENV, "").split(os.pathsep)
             if p.strip()]
    return [*given, SHIPPED_WEIGHTS]


def resolve_weights(name: str) -> Path:
    """A bundle folder from a path, or a name in $NEUROK_WEIGHTS or the shipped bundles."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    folders = weights_folders()
    for folder in folders:
        if (folder / name).is_dir():
            return folder / name
    known = sorted({p.name for f in folders if f.is_dir() for p in f.iterdir() if p.is_dir()})
    raise InputError(f"--weights {name}: no such bundle folder"
                     + (f"; bundles by name: {', '.join(known)}" if known else "")
                     + f" (names are looked up in ${WEIGHTS_ENV}, then the shipped bundles)")


def preset_conditions(preset: str, category: str, size: float, o: Overrides
                      ) -> tuple[Conditions, float]:
    """Conditions and start height (fraction of the size) of a preset, then the user's
    explicit settings on top."""
    if preset not in PRESETS:
        raise UsageError(f"unknown --preset {preset!r}; choose one of {', '.join(PRESETS)}")
    c = Conditions()
    height = 0.0
    side = 1.5 * min(size, 1.0) ** 0.5  # m/s: a brisk push, gentler for small objects
    if preset == "drop":
        height = 0.5
    elif preset == "wobble":
        c.impulses = [Impulse("top", (side, 0.0, 0.0), 0.0)]
    elif preset == "poke":
        c.impulses = [Impulse("front", (0.0, 0.0, -side), 0.3)]
    elif preset == "flutter" or (preset == "sway" and category == "cloth"):
        # hung by its -x edge, no ground: a cloth let go level swings down and sways, damped
        # by the air ("bottom" would hold all of a sheet lying flat: nothing would move);
        # flutter adds a gusty wind blowing from the held edge across it, as on a flagpole
        # (along the held edge, +z, it met a hanging sheet edge-on: a flat sheet bent 0.019
        # rad where the engine's bent 0.041; across it, 0.035 against 0.034)
        c.pins = ["x<0.02"]
        c.ground = False
        height = 0.5
        if preset == "flutter":
            c.wind, c.gust = (4.0, 0.0, 0.0), 0.5
    elif preset == "sway":
        c.pins = ["x<0.05"] if category == "beam" else ["bottom"]
        c.ground = category != "beam"
        c.impulses = [Impulse("x>0.9" if category == "beam" else "top",
                              (0.0, 0.0, side) if category == "beam" else (side, 0.0, 0.0),
                              0.0)]
        height = 0.5 if category == "beam" else 0.0
    elif preset == "free":  # what the options and the start give, nothing more
        pass
    for name in ("gravity", "ground", "friction", "velocity", "spin", "wind", "gust"):
        value = getattr(o, name)
        if value is not None:
            setattr(c, name, value)
    if o.pins is not None:
        c.pins = list(o.pins)
    c.impulses = c.impulses + list(o.pushes)
    if o.drop is not None:
        height = o.drop
    return c, height


def _material(cfg: AnimateConfig, base: SimMaterial) -> SimMaterial:
    overrides = {k: getattr(cfg, k) for k in ("young", "density", "damping")
                 if getattr(cfg, k) is not None}
    mat = replace(base, **overrides)
    mat.check()
    if not cfg.stiffness > 0:
        raise UsageError(f"--stiffness must be > 0, got {cfg.stiffness}")
    return mat


def _to_file(frames: np.ndarray, frame: CanonicalFrame, back: float, index: np.ndarray
             ) -> np.ndarray:
    """Welded frames (T, M, 3) in metres (the physics' ground at y = 0, ``back`` above the
    file's) -> the file's vertices (T, N, 3) as float64, C-ordered: the gather and the
    affine map in one compiled pass (a 121-frame clip of 100k vertices is 290 MB a pass;
    NumPy's gather, cast, product and shift took 1.0 s, this 0.24 s)."""
    m = (frame.extent / frame.size_m) * np.asarray(frame.rotation, np.float64)
    shift = frame.from_canonical(np.array([0.0, -back, 0.0]) / frame.size_m)
    return _gather_kernel()(np.ascontiguousarray(frames), np.asarray(index, np.int64), m, shift)


@functools.cache
def _gather_kernel():
    """:func:`_gather_affine` compiled (numba, cached on disk), imported only when frames are
    written: numba's start-up is not paid by commands that never get here."""
    from ..model._jit import njit

    return njit(cache=True, nogil=True)(_gather_affine)


def _gather_affine(frames: np.ndarray, index: np.ndarray, m: np.ndarray, shift: np.ndarray
                   ) -> np.ndarray:
    """out[t, i] = frames[t, index[i]] @ m + shift, in float64."""
    out = np.empty((frames.shape[0], index.shape[0], 3))
    for t in range(frames.shape[0]):
        for i in range(index.shape[0]):
            x, y, z = frames[t, index[i], 0], frames[t, index[i], 1], frames[t, index[i], 2]
            for c in range(3):
                out[t, i, c] = x * m[0, c] + y * m[1, c] + z * m[2, c] + shift[c]
    return out


def _integrator_ready(cfg: AnimateConfig, device) -> bool:
    """False when this run will first compile the latent integrator (model/dynamics/kernel.py)."""
    if cfg.method != "rk4" or str(device) != "cpu":
        return True
    from ..model.dynamics import kernel

    return kernel.ready()


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
    asset = load_mesh(cfg.input, up=cfg.up)
    frame = canonical_frame(asset, size=cfg.size, units=cfg.units)
    check_size(frame.size_m, given=cfg.size is not None)
    check_faces(len(asset.faces), str(cfg.input))
    rigged = _rigged(cfg, asset, frame)
    if rigged is not None:
        return _animate_rig(cfg, asset, frame, rigged, say, on_frame, t0)
    import torch  # the deformable path: the model, torch and the latent motion

    from ..model import load_bundle, resolve_device
    from .body import auto_category
    from .motion import latent_motion

    device = resolve_device(cfg.device)
    compiled = _integrator_ready(cfg, device)
    bundle = resolve_weights(cfg.weights)
    model, bundle_cfg = load_bundle(bundle, device)
    torch.manual_seed(cfg.seed)
    if compiled:  # numba's start-up, beside encoding, once the input is known to be good
        from ..model.dynamics import kernel

        kernel.warm_in_background()
    welded = asset.welded()
    surface = frame.to_canonical(welded.vertices) * frame.size_m  # metres, +Y up, centred
    category, base = resolve_material(cfg.material, auto_category(surface, welded.faces))
    material = _material(cfg, base)
    cont = cfg.continuation
    preset = cfg.preset or ("free" if cont else DEFAULT_PRESET[category])
    cond, height = preset_conditions(preset, category, frame.size_m, cfg.overrides)
    ground = place_ground(frame, surface, cfg.ground_at)
    lift, back = physics_offsets(surface, ground, height * frame.size_m, cond.ground)
    start_state = None
    if cont is not None:
        ground, lift, start_state = _continue(cfg, frame, surface, ground, cond)
        back = lift
    start = surface + np.array([0.0, lift, 0.0])
    mcfg = _motion_config(cfg, bundle_cfg, category, material, cond, start_state)
    t_load = time.perf_counter()
    say("moving" if compiled else
        "moving (compiling the integrator, once: about half a minute)")
    try:
        motion = latent_motion(model, start, welded.faces, mcfg, progress=on_frame,
                              decoded=on_decode)
    except FloatingPointError as exc:
        raise NeurokError(f"{exc}; try a smaller --stiffness, more --damping or a gentler "
                          "preset") from exc
    say("writing")
    file_frames = [_to_file(m, frame, back, welded.index) for m in motion.frames]
    names = cfg.export.names or ([f"neurok_{preset}"] if cfg.samples == 1 else
                                 [f"neurok_{preset}_{i}" for i in range(cfg.samples)])
    options = replace(cfg.export, names=names, metres_per_unit=frame.size_m / frame.extent)
    out = export_motion(asset, file_frames, cfg.output, fps=cfg.fps, options=options)
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
        energy=_energy_row(motion.energy), timings=timings,
        export={"format": out.fmt, "bytes": out.bytes, **out.details},
        weights=str(bundle), device=str(device),
        warnings=[*asset.warnings, *out.warnings],
        material=_material_row(cfg.material, category, material),
        size_from=size_source(asset, cfg.size, cfg.units), input=str(cfg.input),
        pins=st["pins"], strain_limit=st["strain_limit"], strain_sweeps=st["strain_sweeps"],
        ground=ground.json(float(motion.frames[:, 0, :, 1].min())) if cond.ground else None)


def _rigged(cfg: AnimateConfig, asset, frame: CanonicalFrame):
    """An articulated object's placement and rig (None: a deformable body): asked for
    (``cfg.articulated``), or found with nothing said otherwise (the material auto, a
    preset that suits both, no option only a deformable body takes; animate_rig.found_rig)."""
    from ..rig.animate import found_rig, place

    preset = cfg.preset or "open"
    if cfg.articulated:
        _check_rig_options(cfg)
        return place(asset, frame, preset=preset, drop=cfg.overrides.drop,
                     ground_at=cfg.ground_at), None
    if cfg.material != "auto" or cfg.preset not in (None, "drop", "free"):
        return None
    try:
        _check_rig_options(cfg)
    except UsageError:
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
    t_load = time.perf_counter()
    say("moving")
    begin = rig_start(at.start, at.pieces.faces, at.pieces.piece, at.pieces.names,
                      joints=[to_physical(j, frame, at.lift) for j in cfg.joints],
                      preset=preset, density=cfg.density, drop_m=at.drop_m,
                      gravity=cfg.overrides.gravity or (0.0, -9.81, 0.0), rig=found,
                      pushes=cfg.overrides.pushes)
    motion = rig_motion(begin, seconds=cfg.seconds, fps=cfg.fps, on_frame=on_frame)
    say("writing")
    file_frames = [_to_file(motion.frames, frame, at.back, at.pieces.index)]
    options = replace(cfg.export, names=cfg.export.names or [f"neurok_{preset}"],
                      metres_per_unit=frame.size_m / frame.extent)
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
            motion.link, motion.run.q[:, joints], motion.speeds[joints]))


def _check_rig_options(cfg: AnimateConfig) -> None:
    """What an articulated object's motion does not take fails at once."""
    o = cfg.overrides
    given = [name for name, value in (
        ("--pin", o.pins), ("--velocity", o.velocity), ("--spin", o.spin), ("--wind", o.wind),
        ("--gust", o.gust), ("--friction", o.friction),
        ("--young", cfg.young), ("--damping", cfg.damping), ("--ground", o.ground))
        if value not in (None, [])]
    if cfg.samples != 1:
        given.append("--samples")
    if cfg.stiffness != 1.0:
        given.append("--stiffness")
    if cfg.material not in ("auto", ARTICULATED):
        given.append("--material " + cfg.material)
    if cfg.continuation is not None:
        given.append("a fitted start")
    if given:
        raise UsageError(f"{', '.join(given)}: not for an articulated object (rigid parts on "
                         "joints take --preset, --drop, --push, --gravity, --density and "
                         "--joint)")
    if cfg.density is not None and not (np.isfinite(cfg.density) and cfg.density > 0):
        raise UsageError(f"--density must be > 0, got {cfg.density}")


def _motion_config(cfg: AnimateConfig, bundle_cfg: dict, category: str,
                   material: SimMaterial, cond: Conditions, start) -> MotionConfig:
    """The latent motion's settings: the options, with the bundle's calibration of the
    category (stiffness and damping scales, prior spread, strain limit)."""
    from ..model.bundle import prior_spread, strain_limit
    from .motion import MotionConfig

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
        raise UsageError(f"unknown --material {cfg.material!r}; choose one of "
                         f"{', '.join(material_names())}")
    check_frames(cfg.seconds, cfg.fps)
    check_ground_at(cfg.ground_at)
    if not 1 <= cfg.samples <= 64:
        raise UsageError(f"--samples must be in 1..64, got {cfg.samples}")
    if cfg.strain_limit is not None and not cfg.strain_limit >= 0:
        raise UsageError(f"--strain-limit must be >= 0 (or inf for none), got "
                         f"{cfg.strain_limit}")


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
    up = np.array([0.0, lift, 0.0])
    R = cont.start.rotation
    start = replace(cont.start, translation=cont.start.translation * frame.size_m + up - R @ up)
    if cfg.overrides.velocity is None:
        cond.velocity = tuple(np.asarray(cont.velocity) * frame.size_m)
    if cfg.overrides.spin is None:
        cond.spin = tuple(np.asarray(cont.spin))
    return ground, lift, start


def _energy_row(e: dict) -> dict:
    """The report's energy figures: the largest kinetic energy, what was dissipated and the
    work the forces did by the end (the largest over samples), and the balance's drift."""
    return {"kinetic_max_J": float(e["kinetic"].max()),
            "dissipated_J": float(e["dissipated"][-1].max()),
            "external_work_J": float(e["work"][-1].max()),
            "drift": _drift(e)}


def _material_row(name: str, category: str, mat: SimMaterial) -> str:
    """The material as the summary shows it: its name, category and constants."""
    label = {"auto": f"auto: {category}", **{c: c for c in ("soft", "cloth", "beam")}}.get(
        name, f"{name} ({category})")
    return (f"{label}; Young's modulus {mat.young:.3g} Pa, density {mat.density:.3g} kg/m³, "
            f"Poisson {mat.poisson:g}" + (f", thickness {mat.thickness * 1e3:.2g} mm"
                                          if category == "cloth" else ""))


def _strain_limit(given: float | None, bundle: float | None) -> float | None:
    """The user's limit over the bundle's; an infinite one is none."""
    limit = given if given is not None else bundle
    return None if limit is None or np.isinf(limit) else float(limit)


def _drift(e: dict[str, np.ndarray]) -> float:
    """Largest change of kinetic + potential + dissipated - work, relative to the energy
    scale of the run (the largest kinetic energy, or the start's magnitude)."""
    total = e["total"]
    scale = max(float(e["kinetic"].max()), float(np.abs(total[0]).max()), 1e-12)
    return float(np.abs(total - total[0]).max() / scale)


def report_rows(rep: AnimateReport, verbose: bool = False) -> list[tuple[str, str]]:
    """The summary of a run in a user's words; with ``verbose``, the model's figures and the
    time of each stage too. Each row fits in 100 columns."""
    t = rep.timings
    kind = {"soft": "soft body", "cloth": "cloth", "beam": "beam"}.get(rep.category,
                                                                        rep.category)
    more = f", {rep.samples} different motions" if rep.samples > 1 else ""
    rows = [("animated", f"{rep.input or '?'}: {rep.vertices:,} vertices, a {kind}"),
            ("size", _size_row(rep.size_m, rep.size_from)),
            ("mass", f"{rep.mass_kg:.3g} kg, from the material's density"),
            ("material", rep.material.split(", Poisson")[0]),
            ("preset", rep.preset + (f"; pinned: {rep.pins['vertices']:,} vertices"
                                     if rep.pins else "")),
            ("ground", ground_row(rep.ground)),
            ("frames", f"{rep.frames} at {rep.fps:g} fps ({(rep.frames - 1) / rep.fps:.3g} s)"
                       f"{more}"),
            ("output", f"{rep.output} ({rep.export['format']}, "
                       f"{rep.export['bytes'] / 1e6:.2f} MB)"),
            *_riding_row(rep.export.get("riding_parts")),
            ("took", f"{t['total']:.1f} s")]
    if rep.rig is not None:
        return _rig_rows(rep, rows, verbose)
    if not verbose:
        return rows
    stages = ", ".join(f"{k} {t[k]:.2f}" for k in ("load", "encode", "fit", "integrate",
                                                    "decode", "export"))
    pins = [("pins", f"{rep.pins['vertices']:,} vertices, {rep.pins['points']} dynamics "
                     f"points; {rep.pins['hold']}")] if rep.pins else []
    return rows + [
        ("vertices", f"{rep.vertices:,} ({rep.welded_vertices:,} welded)"),
        *pins,
        ("latent", f"{rep.latent_dims} dims, {rep.reduced_dims} reduced, "
                   f"{rep.dynamics_points} dynamics points"),
        ("integration", f"{rep.steps:,} RK4 steps"),
        ("strain limit", f"{rep.strain_limit:.2%} of each edge's rest length, "
                         f"{rep.strain_sweeps} sweeps" if rep.strain_limit is not None
         else "none: frames as decoded"),
        ("decoder fit", f"residual {rep.fit_residual:.2%} held out, "
                        f"{rep.run_residual:.3%} of the size along the run"),
        ("energy", f"max kinetic {rep.energy['kinetic_max_J']:.3g} J, dissipated "
                   f"{rep.energy['dissipated_J']:.3g} J, drift {rep.energy['drift']:.2%}"),
        ("stages (s)", stages),
        ("device", rep.device),
        ("weights", rep.weights)]


def _rig_rows(rep: AnimateReport, rows: list[tuple[str, str]], verbose: bool
              ) -> list[tuple[str, str]]:
    """An articulated object's summary: its parts and how each joint moved."""
    from ..rig.animate import part_count, part_rows

    rows = [r for r in rows if r[0] != "took"]
    rows[0] = ("animated", f"{rep.input}: {rep.vertices:,} vertices, {part_count(rep.rig)} "
                           "rigid parts on joints")
    rows += part_rows(rep.rig)
    t = rep.timings
    rows.append(("took", f"{t['total']:.1f} s"))
    if verbose:
        rows += [("coordinates", f"{rep.latent_dims} ({rep.steps:,} RK4 steps)"),
                 ("energy", f"max kinetic {rep.energy['kinetic_max_J']:.3g} J, lost to "
                            f"damping and limits {rep.energy['dissipated_J']:.3g} J"),
                 ("stages (s)", ", ".join(f"{k} {t[k]:.2f}" for k in
                                          ("load", "rig", "integrate", "frames", "export")))]
    return rows


def _riding_row(names: list[str] | None) -> list[tuple[str, str]]:
    """A glTF's parts that its own animation moves ride on the body (io/gltf/parts.py)."""
    if not names:
        return []
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return [("parts", f"{shown} ride{'s' if len(names) == 1 else ''} on the body (moved by "
                      "the file's animation)")]


def _size_row(size_m: float, source: str) -> str:
    """The object's size and where it came from (io.mesh.size_source), shortly."""
    if source == "--size":
        return f"{size_m:.3g} m, as --size gave it"
    if source.startswith("the file's"):
        return f"{size_m:.3g} m, from {source}"
    return f"{size_m:.3g} m, assumed: the file has no units (--size or --units sets it)"

