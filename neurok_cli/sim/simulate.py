"""``neurok simulate``: the full-order physics reference (MuJoCo) on a user's asset.

load -> weld -> physical frame (metres, +Y up, ground at y = 0) -> scene -> run -> back to the
file's frame, the ground where the asset stands in it (scenario/placement.py) -> export (by
the output's extension).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..io.mesh import size_source
from ..limits import check_frames, require_material
from ..meshing.proxy import make_proxy
from ..render.export import ExportOptions, export_motion
from ..rig.articulation import JointSpec
from ..scenario.category import too_coarse
from ..scenario.conditions import PRESET_MATERIALS, Conditions, SimMaterial
from ..scenario.mass import closed_volume
from ..scenario.materials import MATERIALS, material_names, resolve_material
from ..scenario.placement import (
    check_placement,
    ground_row,
    load_placed,
    physics_offsets,
    place_ground,
)
from ..scenario.presets import (
    DEFAULT_PRESET,
    JOINT_PRESETS,
    Overrides,
    beam_clamp,
    check_preset,
    preset_conditions,
)
from .engine import ENGINE_WARNINGS, run
from .scene import SIZED_DOFS
from .setup import prepare
from .surface import engine_surface

AUTO = "auto"
ARTICULATED = "articulated"
FLAT = 0.02  # "auto" takes a mesh as cloth when its thinnest extent is under 2% of its largest


@dataclass
class SimulateConfig:
    """Options of one ``neurok simulate`` run."""

    input: Path
    output: Path
    seconds: float = 2.0
    fps: float = 30.0
    material: str = "auto"  # "soft", "cloth", "beam", or "auto": cloth when flat, else soft
    young: float | None = None  # overrides of the category's preset material
    poisson: float | None = None
    density: float | None = None
    damping: float | None = None
    thickness: float | None = None
    size: float | None = None  # largest extent in metres (unitless files)
    units: str | None = None  # the file's own units (m, cm, mm, in, ft); see canonical_frame
    up: str | None = None  # "y" or "z" (unitless files)
    drop: float | None = None  # start height over the ground, fraction of the size; None:
    # the preset's
    ground_at: float | None = None  # the ground along the file's up axis, file units; None:
    # the asset's lowest point (scenario/placement.py)
    overrides: Overrides = field(default_factory=Overrides)  # the user's settings over the
    # preset's, as animate's (the start height is ``drop``)
    conditions: Conditions | None = None  # given whole, they stand instead of the preset's
    # with the overrides (a comparison with animate's own); the preset only sets the height
    dof: str | None = None  # soft bodies: "trilinear", "quadratic", "tet" or "lattice"
    cells: tuple[int, ...] | None = None  # interpolation cells (soft bodies, beams), or the
    # lattice's cubes along the longest side (one number, dof "lattice")
    max_vertices: int = 3000  # denser cloth/tet surfaces are simulated on a proxy (5x: cells)
    export: ExportOptions = field(default_factory=ExportOptions)
    preset: str | None = None  # as animate's (scenario/presets.py); None: by the category.
    # Articulated objects: open, close, swing, drop or free (None: open)
    joints: list[JointSpec] = field(default_factory=list)  # --joint, articulated objects

    @property
    def articulated(self) -> bool:
        return (self.material == ARTICULATED or bool(self.joints)
                or self.preset in JOINT_PRESETS)


@dataclass
class SimulateReport:
    output: Path
    frames: int
    fps: float
    vertices: int
    welded_vertices: int
    simulated_vertices: int  # fewer than welded when a proxy stood in for a dense surface
    dofs: int
    dof: str  # how the engine moves the surface: full, trilinear, quadratic, tet or lattice
    cells: list[int] | None  # interpolation cells per axis (x, y, z) for trilinear/quadratic;
    # for a lattice, [cubes along the longest side, 1, 1]
    mass_kg: float
    size_m: float
    sim_wall_s: float
    sim_s_per_s: float  # wall seconds per simulated second
    rejected: str | None
    export: dict
    warnings: list[str]
    material: str = "soft"  # the category simulated ("auto" resolved)
    size_from: str = ""  # where size_m came from (see io.mesh.size_source)
    ground: dict | None = None  # where the ground is (placement.Ground.json); None: no ground
    rig: list[dict] | None = None  # an articulated object's parts and joints
    preset: str | None = None  # as animate's report; None: the conditions were given whole
    start_height_m: float = 0.0  # the preset's (or --drop's) start over the ground, metres
    conditions: dict | None = None  # the run's forces, pins and start (Conditions.json)


def _check_material_name(cfg: SimulateConfig) -> None:
    if cfg.material not in material_names():
        raise UsageError(f"unknown «material» {cfg.material!r}; choose one of "
                         f"{', '.join(material_names())}")


def _category(cfg: SimulateConfig, surface: np.ndarray) -> str:
    """The category asked for, or for "auto" cloth when the (N, 3) surface is flat (as
    ``animate`` decides), else soft. Soft bodies and beams fill their bounding box with cells,
    which a box without thickness cannot hold."""
    ext = np.sort(np.ptp(surface, axis=0))  # smallest first
    if cfg.material == AUTO:
        return "cloth" if ext[0] < FLAT * ext[2] else "soft"
    # a named material has its own kind
    category = resolve_material(cfg.material, "soft")[0] if cfg.material in MATERIALS \
        else cfg.material
    if category != "cloth" and ext[0] <= 1e-9 * ext[2]:
        raise UsageError(f"{cfg.input}: the mesh is flat (no thickness along an axis), so it "
                         f"cannot be simulated as {cfg.material}"
                         f"{f' ({category})' if category != cfg.material else ''}; use "
                         "«material» cloth or auto")
    return category


def _material(cfg: SimulateConfig, asked: str) -> SimMaterial:
    """The material of category ``cfg.material``: the named one ``asked`` for, else the
    category's default, with the user's overrides."""
    _check_material_name(cfg)
    overrides = {k: getattr(cfg, k) for k in ("young", "poisson", "density", "damping",
                                               "thickness") if getattr(cfg, k) is not None}
    base = MATERIALS[asked].material if asked in MATERIALS else PRESET_MATERIALS[cfg.material]
    mat = replace(base, **overrides)
    mat.require_physical()
    return mat


MAX_CELLS = 12  # per axis: (12 + 1)^3 trilinear nodes is already ~6,600 dofs
MAX_LATTICE = 16  # lattice cubes along the longest side: ~5,000 nodes for a ball


def _cells(cfg: SimulateConfig) -> tuple[int, int, int] | None:
    """The requested interpolation cells, checked against the material and dof."""
    if cfg.cells is None:
        return None
    if cfg.dof == "lattice":
        if len(cfg.cells) != 1 or not 2 <= int(cfg.cells[0]) <= MAX_LATTICE:
            raise UsageError("with «dof» lattice, «cells» is one whole number from 2 to "
                             f"{MAX_LATTICE}: the lattice's cubes along the longest side")
        return int(cfg.cells[0]), 1, 1
    if cfg.material == "cloth" or cfg.dof == "tet":
        raise UsageError("«cells» sets the interpolation cells of soft bodies and beams; "
                         f"{'cloth' if cfg.material == 'cloth' else '«dof» tet'} moves every "
                         "vertex itself")
    if len(cfg.cells) != 3 or not all(1 <= int(c) <= MAX_CELLS for c in cfg.cells):
        raise UsageError(f"«cells» must be three whole numbers X,Y,Z from 1 to {MAX_CELLS}, "
                         f"not {','.join(str(c) for c in cfg.cells)}")
    return tuple(int(c) for c in cfg.cells)


def simulate(cfg: SimulateConfig, *, progress: Callable[[float], None] | None = None
             ) -> SimulateReport:
    """Run the engine on ``cfg.input`` and write the motion to ``cfg.output``: the job
    ``neurok animate`` does with the same options (the preset, by the category unless
    given, and the user's settings on top), in full physics. ``progress(share)`` follows
    the simulated time, 0 to 1."""
    from ..extras import require
    from ..render.export import check_output

    check_output(cfg.output, cfg.export.fmt)  # a bad output fails before the work
    require("mujoco", "sim", "neurok simulate")
    check_frames(cfg.seconds, cfg.fps)
    check_placement(cfg.input, up=cfg.up, size=cfg.size, units=cfg.units,
                    ground_at=cfg.ground_at)
    require_material(young=cfg.young, poisson=cfg.poisson, density=cfg.density,
                     damping=cfg.damping, thickness=cfg.thickness)
    if cfg.preset is not None:
        check_preset(cfg.preset)
    if not cfg.articulated:
        _check_material_name(cfg)
    asset, frame = load_placed(cfg.input, up=cfg.up, size=cfg.size, units=cfg.units)
    rigged = _rigged(cfg, asset, frame)
    if rigged is not None:
        return _simulate_rig(cfg, asset, frame, rigged)
    return _simulate_body(cfg, asset, frame, progress)


def _options(cfg: SimulateConfig, frame) -> ExportOptions:
    """How the run's output is written: the file's units, and the page's caption."""
    return replace(cfg.export, metres_per_unit=frame.size_m / frame.extent,
                   caption=f"{Path(cfg.input).name}: the physics engine (neurok simulate)")


def _simulate_body(cfg: SimulateConfig, asset, frame, progress) -> SimulateReport:
    """A soft body, cloth or beam in the engine (``simulate``'s deformable path)."""
    welded = asset.welded()
    whole = frame.to_canonical(welded.vertices) * frame.size_m  # metres, +Y up, centred
    used = engine_surface(whole, welded.faces)  # without the vertices no face uses
    surface, faces = used.vertices, used.faces
    asked = cfg.material
    cfg = replace(cfg, material=_category(cfg, surface))
    mat = _material(cfg, asked)
    cells = _cells(cfg)
    extent = np.ptp(surface, axis=0)
    preset, cond, height_m = _run_conditions(cfg, frame.size_m, extent)
    warnings = [*asset.warnings, *filter(None, [too_coarse(surface, cfg.material)])]
    if cfg.material == "beam" and not cond.pins:  # the engine has no free beams (sim/setup.py)
        clamp = beam_clamp(extent)
        cond.pins = [clamp]
        warnings.append(f"the engine holds a beam by its -{clamp[0]} end "
                        f"(«pin region» '{clamp}'); animate lets an unpinned beam fall free")
    ground = place_ground(frame, whole, cfg.ground_at)
    sim_v, sim_f, proxy, closed = _engine_mesh(cfg, surface, faces)
    spec = prepare(sim_v, sim_f, cfg.material, mat, cond, dof=cfg.dof, cells=cells)
    # prepare puts the lowest point cond.height above y = 0, which is the user's ground
    _, back = physics_offsets(sim_v, ground, cond.height, cond.ground)
    result = run(spec, seconds=cfg.seconds, fps=cfg.fps, closed=closed, progress=progress)
    frames = result.frames - np.array([0.0, back, 0.0])
    if proxy is not None:
        frames = proxy.carry(frames, surface)
    frames = used.expand(frames, whole)
    if result.rejected:
        warnings.append(f"the simulation became unstable ({result.rejected}) at "
                        f"{result.times[-1]:.2f} s; wrote the frames before it")
    if ENGINE_WARNINGS:
        warnings.append(f"the engine warned: {ENGINE_WARNINGS[0]}")
    welded_frames = frames / frame.size_m
    file_frames = frame.from_canonical(welded_frames)[:, welded.index]
    out = export_motion(asset, [file_frames], cfg.output, fps=cfg.fps,
                        options=_options(cfg, frame))
    sim_s = max(result.times[-1], 1e-9)
    return SimulateReport(
        output=cfg.output, frames=len(file_frames), fps=cfg.fps, vertices=len(asset.vertices),
        welded_vertices=len(welded.vertices), simulated_vertices=len(sim_v),
        dofs=result.stats["nv"], dof=spec.dof,
        cells=list(spec.cells) if spec.dof in SIZED_DOFS else None,
        mass_kg=spec.mass,
        size_m=frame.size_m, sim_wall_s=result.stats["wall_s"],
        sim_s_per_s=result.stats["wall_s"] / sim_s, rejected=result.rejected,
        export={"format": out.fmt, "bytes": out.bytes, **out.details},
        warnings=warnings + out.warnings, material=cfg.material,
        size_from=size_source(asset, cfg.size, cfg.units),
        ground=ground.json(float(result.frames[0, :, 1].min())) if cond.ground else None,
        preset=preset, start_height_m=height_m, conditions=cond.json())


def _run_conditions(cfg: SimulateConfig, size_m: float, extent=None
                    ) -> tuple[str | None, Conditions, float]:
    """The run's preset, conditions (their ``height`` set) and start height in metres, as
    ``animate`` has them: the preset (by the category unless given) with the user's settings
    on top, ``--drop`` the height. Conditions given whole (``cfg.conditions``) stand as they
    are, the preset (or ``--drop``) setting only the height; the preset reported is then the
    one given, or None."""
    preset = cfg.preset or DEFAULT_PRESET[cfg.material]
    over = cfg.overrides if cfg.drop is None else replace(cfg.overrides, drop=cfg.drop)
    cond, height = preset_conditions(preset, cfg.material, size_m, over, extent)
    if cfg.conditions is not None:
        cond, preset = cfg.conditions, cfg.preset
    return preset, replace(cond, height=height * size_m), height * size_m


def _engine_mesh(cfg: SimulateConfig, surface: np.ndarray, faces: np.ndarray):
    """The mesh the engine moves: the (N, 3) surface, or a proxy where it is too dense ->
    (vertices, faces, the proxy or None, whether it is closed: soft bodies and beams keep
    their volume)."""
    closed = closed_volume(surface, faces) > 0 and cfg.material != "cloth"
    # a vertex costs three dofs in cloth and tet flexes, but only collision work when it is
    # embedded in cells (soft trilinear/quadratic, beams): those take 5x more before a proxy
    per_vertex_dofs = cfg.material == "cloth" or cfg.dof == "tet"
    limit = cfg.max_vertices if per_vertex_dofs else 5 * cfg.max_vertices
    if len(surface) <= limit:
        return surface, faces, None, closed
    proxy = make_proxy(surface, faces, limit)
    return (proxy.vertices, proxy.faces, proxy,
            closed and closed_volume(proxy.vertices, proxy.faces) > 0)


def _rig_options(cfg: SimulateConfig) -> bool:
    """Whether the options are all an articulated object takes."""
    o, c = cfg.overrides, cfg.conditions or Conditions()
    moving = [v for v in (o.wind, o.velocity, o.spin, c.wind, c.velocity, c.spin)
              if v is not None and any(v)]
    return not (cfg.material not in (AUTO, ARTICULATED) or cfg.young or cfg.poisson
                or cfg.damping or cfg.thickness or cfg.dof or cfg.cells or o.pins or c.pins
                or moving)


def _rigged(cfg: SimulateConfig, asset, frame):
    """The placement and rig of an articulated object (None: a deformable body): asked for,
    or found as ``animate`` finds it, with nothing said otherwise (the material auto, a
    preset that suits both, no option only a deformable body takes; rig.animate.found_rig)."""
    from ..rig.animate import found_rig, place

    def placed():
        return place(asset, frame, preset=cfg.preset or "open", drop=cfg.drop,
                     ground_at=cfg.ground_at)

    if cfg.articulated:
        if not _rig_options(cfg):
            raise UsageError("an articulated object takes «preset», «drop», «push», "
                             "«gravity», «density» and «joint» only")
        return placed(), None
    if cfg.material != AUTO or cfg.preset not in (None, "drop", "free") \
            or not _rig_options(cfg):
        return None
    at = placed()
    rig = found_rig(at)
    return None if rig is None else (at, rig)


def _simulate_rig(cfg: SimulateConfig, asset, frame, rigged) -> SimulateReport:
    """An articulated object in the engine: its rig (as animate finds it) as rigid bodies on
    hinges and sliders, the base free on the ground, started as the preset starts it."""
    from ..rig.animate import engine_bodies, joint_rows, rig_start, to_physical
    from .articulated import Motion, run_rig

    at, found = rigged
    c = cfg.conditions  # a rig takes gravity and pushes
    if c is None:
        c = Conditions(impulses=list(cfg.overrides.pushes))
        c.gravity = cfg.overrides.gravity or c.gravity
    begin = rig_start(at.start, at.pieces.faces, at.pieces.piece, at.pieces.names,
                      joints=[to_physical(j, frame, at.lift) for j in cfg.joints],
                      preset=cfg.preset or "open", density=cfg.density, drop_m=at.drop_m,
                      gravity=c.gravity, rig=found, pushes=c.impulses)
    rig, link = begin.rig, begin.link
    speeds = [float(v) for co, v in zip(link.coords, begin.speeds) if co.parent >= 0]
    order = np.concatenate([np.flatnonzero(rig.owner == p) for p in range(len(rig.names))])
    at_engine = np.argsort(order)  # the engine holds the parts' vertices part by part
    kicks = [(t, at_engine[idx], dv) for t, idx, dv in begin.kicks]
    result = run_rig(engine_bodies(begin, at.start, at.pieces.faces), link.density,
                     Motion(drop=at.drop_m, joint_speeds=speeds, gravity=c.gravity,
                            kicks=kicks), seconds=cfg.seconds, fps=cfg.fps)
    frames = np.empty_like(result.frames)
    frames[:, order] = result.frames
    frames = frames - np.array([0.0, at.back, 0.0])
    file_frames = frame.from_canonical(frames / frame.size_m)[:, at.pieces.index]
    out = export_motion(asset, [file_frames], cfg.output, fps=cfg.fps,
                        options=_options(cfg, frame))
    rows = joint_rows(link, result.joints, np.array(speeds))
    return SimulateReport(
        output=cfg.output, frames=len(file_frames), fps=cfg.fps, vertices=len(asset.vertices),
        welded_vertices=len(at.pieces.vertices), simulated_vertices=len(at.pieces.vertices),
        dofs=6 + len(speeds), dof="rigid", cells=None, mass_kg=result.mass,
        size_m=frame.size_m, sim_wall_s=result.wall_s,
        sim_s_per_s=result.wall_s / max(result.times[-1], 1e-9), rejected=result.rejected,
        export={"format": out.fmt, "bytes": out.bytes, **out.details},
        warnings=list(asset.warnings) + out.warnings, material=ARTICULATED,
        size_from=size_source(asset, cfg.size, cfg.units), ground=at.ground.json(at.drop_m),
        rig=rows, preset=cfg.preset or "open", start_height_m=at.drop_m, conditions=c.json())


def report_rows(rep: SimulateReport) -> list[tuple[str, str]]:
    """Human-readable rows of a report."""
    size = f"{rep.export['format']}, {rep.export['bytes'] / 1e6:.2f} MB"
    return [("output", f"{rep.output} ({size})"),
            ("frames", f"{rep.frames} at {rep.fps:g} fps"), ("material", rep.material),
            ("preset", rep.preset or "none: the conditions as given"),
            ("vertices", f"{rep.vertices:,} ({rep.welded_vertices:,} welded, "
                         f"{rep.simulated_vertices:,} simulated)"),
            ("size, mass", f"{rep.size_m:.3g} m ({rep.size_from}), {rep.mass_kg:.3g} kg"),
            ("ground", ground_row(rep.ground)),
            ("engine dofs", f"{rep.dofs:,} ({rep.dof}" + _cells_text(rep) + ")"),
            ("engine time", f"{rep.sim_wall_s:.2f} s ({rep.sim_s_per_s:.2f} s per simulated s)"),
            ("status", "rejected: " + rep.rejected if rep.rejected else "stable"),
            *_part_rows(rep.rig)]


def _cells_text(rep: SimulateReport) -> str:
    if not rep.cells:
        return ""
    if rep.dof == "lattice":
        return f", {rep.cells[0]} cubes along the longest side"
    return f", {'x'.join(str(c) for c in rep.cells)} cells"


def _part_rows(rig: list[dict] | None) -> list[tuple[str, str]]:
    from ..rig.animate import part_rows

    return part_rows(rig) if rig else []
