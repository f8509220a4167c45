"""``neurok dataset generate``: many simulated sequences, sharded, resumable, deterministic.

Job ``i`` draws everything (category, split, shape, material, conditions) from
``default_rng([seed, i])``, so any shard or worker makes the same arrays for it, and a rerun
skips the files that exist. Test-split sequences use shape families never used in train/val.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..data.format import (
    HEADER,
    SPLITS,
    Header,
    Sequence,
    read_header,
    save_sequence,
    sequence_files,
    split_dir,
    write_header,
)
from ..errors import NeurokError, UsageError
from ..extras import require
from ..io.atomic import atomic_path, remove_partials
from ..limits import check_frames
from ..scenario.conditions import CATEGORIES, Conditions, Impulse, SimMaterial
from . import articulated as art
from .engine import SimResult, run
from .sampling import STAR_SHAPED, sample_conditions, sample_dof, sample_material
from .scene import build_xml
from .setup import lattice_cells, prepare
from .shapes import CATEGORY_FAMILIES, WIDE_FAMILIES, Shape, make_shape, shape_from_mesh

# shape families kept out of training: the test split measures generalization to new shapes
TEST_FAMILIES = {"soft": ("torus", "mushroom"), "cloth": ("disc",), "beam": ("rod",),
                 "articulated": art.TEST_FAMILIES}
# what --categories takes: articulated objects only when asked (the default corpus is the
# three deformable categories, as corpus-v1 was made)
GENERATE_CATEGORIES = (*CATEGORIES, "articulated")
FAMILIES = {**CATEGORY_FAMILIES, "articulated": art.FAMILIES}
TEST_SHARE, VAL_SHARE = 0.15, 0.1


@dataclass
class GenerateConfig:
    """Options of a dataset generation run."""

    out: Path
    count: int = 100
    seed: int = 0
    categories: tuple[str, ...] = CATEGORIES
    shapes: Path | None = None  # extra closed meshes (soft bodies, train split)
    workers: int = 1
    shard: tuple[int, int] = (0, 1)  # (i, n): this run makes jobs with index % n == i
    seconds: float = 2.0
    fps: float = 30.0
    interior_pins: float = 0.0  # share of pinned sheets held by a patch inside them
    solids: str = "cage"  # soft bodies: "cage" (corpus-v1: a shell in trilinear cells) or
    # "lattice" (tetrahedra filling the solid, stiffness by sag: meshing/lattice.py)
    splits: tuple[str, ...] = SPLITS  # the splits this run makes (the plan is the same)
    families: str = "base"  # training shapes: "base" (corpus-v1's) or "wide" (base and
    # shapes.WIDE_FAMILIES); the test split's jobs are the same either way


SOLIDS = ("cage", "lattice")
FAMILY_SETS = ("base", "wide")
# with --solids lattice, the soft families that a lattice of at most LATTICE_CELLS holds
# (when their thin parts allow): compact solids and tori. Chairs, tables and mushrooms
# stand on parts thinner than that, and user meshes are anything: they keep the cage.
LATTICE_FAMILIES = (*STAR_SHAPED, "torus")


@dataclass
class Job:
    index: int
    category: str
    split: str
    family: str
    seed: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.index:06d}_{self.category}_{self.family.replace(':', '-')}"


def _user_meshes(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    if not folder.is_dir():
        raise UsageError(f"«shapes» {folder}: not a folder")
    return sorted(p for p in folder.iterdir()
                  if p.suffix.lower() in (".obj", ".ply", ".stl", ".glb", ".gltf"))


def plan(cfg: GenerateConfig) -> list[Job]:
    """Every job of the dataset (all shards), in index order."""
    for c in cfg.categories:
        if c not in GENERATE_CATEGORIES:
            raise UsageError(f"unknown category {c!r}; choose from "
                             f"{', '.join(GENERATE_CATEGORIES)}")
    if cfg.solids not in SOLIDS:
        raise UsageError(f"«solids» {cfg.solids}: choose {' or '.join(SOLIDS)}")
    if cfg.families not in FAMILY_SETS:
        raise UsageError(f"«families» {cfg.families}: choose {' or '.join(FAMILY_SETS)}")
    user = [f"user:{p.name}" for p in _user_meshes(cfg.shapes)]
    jobs = []
    for i in range(cfg.count):
        rng = np.random.default_rng([cfg.seed, i, 0])
        category = cfg.categories[i % len(cfg.categories)]
        u = rng.random()
        split = "test" if u < TEST_SHARE else ("val" if u < TEST_SHARE + VAL_SHARE else "train")
        test = TEST_FAMILIES[category]
        if split == "test":
            family = str(rng.choice(test))
        else:
            pool = [f for f in FAMILIES[category] if f not in test]
            pool += list(WIDE_FAMILIES.get(category, ())) if cfg.families == "wide" else []
            pool += user if category == "soft" else []
            family = str(rng.choice(pool))
        jobs.append(Job(i, category, split, family, [cfg.seed, i]))
    return jobs


def _shape(job: Job, rng: np.random.Generator, shapes_dir: Path | None):
    if job.family.startswith("user:"):
        from ..io.mesh import load_mesh

        asset = load_mesh(shapes_dir / job.family[5:])
        w = asset.welded()
        return shape_from_mesh(w.vertices, w.faces, family=job.family,
                               size=float(rng.uniform(0.3, 1.2)))
    return make_shape(job.family, rng)


def job_inputs(job: Job, cfg: GenerateConfig) -> tuple[Shape, SimMaterial, Conditions, str]:
    """What a job simulates: its shape, material, conditions and dof, drawn in this order
    from the job's own generator (the order is part of what makes a corpus rebuild)."""
    rng = np.random.default_rng([*job.seed, 1])
    shape = _shape(job, rng, cfg.shapes)
    size = float(np.ptp(shape.vertices, axis=0).max())
    squash = (cfg.solids == "lattice" and job.category == "soft"
              and job.family in LATTICE_FAMILIES
              and lattice_cells(shape.vertices, shape.faces)[1])
    material = sample_material(job.category, rng, shape.vertices, by_sag=squash)
    cond = sample_conditions(job.category, rng, size, job.family, cfg.interior_pins)
    dof = sample_dof(job.category, rng, job.family)
    return shape, material, cond, "lattice" if squash else dof


def run_job(job: Job, cfg: GenerateConfig) -> tuple[str, str | None, float]:
    """Simulate one job and save it; returns (name, rejection reason or None, seconds)."""
    from .. import __version__

    t0 = time.perf_counter()
    if job.category == "articulated":
        return _run_articulated(job, cfg, t0)
    shape, material, cond, dof = job_inputs(job, cfg)
    try:
        spec = prepare(shape.vertices, shape.faces, job.category, material, cond, dof=dof)
    except NeurokError as e:  # e.g. a pin region that misses this shape: count, go on
        _record_rejection(cfg.out, job, "setup", str(e))
        return job.name, "setup", time.perf_counter() - t0
    closed = shape.kind != "sheet"
    result = run(spec, seconds=cfg.seconds, fps=cfg.fps, closed=closed, still_air=False)
    if result.rejected:
        _record_rejection(cfg.out, job, result.rejected)
        return job.name, result.rejected, time.perf_counter() - t0
    mujoco = require("mujoco", "sim")

    meta = {"category": job.category, "family": job.family, "split": job.split,
            "shape": shape.params, "kind": shape.kind, "material": asdict(material),
            "conditions": asdict(cond), "dof": spec.dof, "cells": list(spec.cells),
            "mass": spec.mass, "timestep": spec.timestep, "seed": job.seed,
            "engine": {"name": "mujoco", "version": mujoco.__version__, "xml": build_xml(spec)},
            "generator": f"neurok-cli {__version__}", "sim_wall_s": result.stats["wall_s"]}
    seq = Sequence(rest_vertices=result.frames[0].astype(np.float32),
                   faces=spec.faces.astype(np.int32), frames=result.frames.astype(np.float32),
                   fps=cfg.fps, gravity=np.asarray(cond.gravity, np.float32), meta=meta)
    save_sequence(seq, split_dir(cfg.out, job.split) / f"{job.name}.npz")
    return job.name, None, time.perf_counter() - t0


def _run_articulated(job: Job, cfg: GenerateConfig, t0: float) -> tuple[str, str | None, float]:
    """One articulated job: the object and its motion drawn from the job's generator, moved
    by the engine, saved with its joints' layout and positions in the meta."""
    mujoco = require("mujoco", "sim")

    from .. import __version__

    rng = np.random.default_rng([*job.seed, 1])
    obj = art.make_articulated(job.family, rng)
    motion = art.sample_motion(obj, rng)
    result = art.run_articulated(obj, motion, seconds=cfg.seconds, fps=cfg.fps)
    if result.rejected:
        _record_rejection(cfg.out, job, result.rejected)
        return job.name, result.rejected, time.perf_counter() - t0
    meta = {"category": job.category, "family": job.family, "split": job.split,
            "shape": obj.params, "kind": "articulated", "density": obj.density,
            "parts": [p.name for p in obj.parts], "vertex_part": result.owner.tolist(),
            "joints": obj.layout(), "joint_positions": result.joints.round(6).tolist(),
            "motion": asdict(motion), "mass": result.mass, "timestep": art.TIMESTEP,
            "seed": job.seed, "engine": {"name": "mujoco", "version": mujoco.__version__,
                                         "xml": art.build_xml(obj, motion)},
            "generator": f"neurok-cli {__version__}", "sim_wall_s": time.perf_counter() - t0}
    seq = Sequence(rest_vertices=result.frames[0].astype(np.float32),
                   faces=result.faces.astype(np.int32), frames=result.frames.astype(np.float32),
                   fps=cfg.fps, gravity=np.asarray(motion.gravity, np.float32), meta=meta)
    save_sequence(seq, split_dir(cfg.out, job.split) / f"{job.name}.npz")
    return job.name, None, time.perf_counter() - t0


def scene_of(meta: dict) -> tuple[SimMaterial, Conditions]:
    """The material and conditions a dataset sequence was made with (from its meta)."""
    c = dict(meta["conditions"])
    impulses = [Impulse(region=i["region"], velocity=tuple(i["velocity"]), time=i["time"])
                for i in c.pop("impulses", [])]
    return SimMaterial(**meta["material"]), Conditions(**{**c, "impulses": impulses})


def replay(seq: Sequence, seconds: float, *, material: SimMaterial | None = None,
           conditions: Conditions | None = None, vertices: np.ndarray | None = None,
           timestep: float | None = None, cells: tuple[int, int, int] | None = None
           ) -> SimResult:
    """Run a stored sequence's scene through the engine again, for ``seconds``; any of its
    material, conditions, start vertices, time step or interpolation cells (soft bodies and
    beams) may be replaced. Unchanged, the frames are the stored ones up to the start's
    rounding to float32 (as the dataset stores it)."""
    meta = seq.meta
    stored_material, stored_conditions = scene_of(meta)
    start = np.asarray(seq.frames[0] if vertices is None else vertices, np.float64)
    spec = prepare(start, np.asarray(seq.faces), meta["category"],
                   material or stored_material, conditions or stored_conditions,
                   dof=meta["dof"], cells=tuple(meta["cells"]) if cells is None else cells)
    spec.timestep = float(meta["timestep"] if timestep is None else timestep)
    return run(spec, seconds=seconds, fps=float(seq.fps), closed=meta["kind"] != "sheet",
               still_air=False)


def _record_rejection(out: Path, job: Job, reason: str, detail: str = "") -> None:
    folder = out / "rejected"
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / f"{job.name}.json") as tmp:
        tmp.write_text(json.dumps({"job": asdict(job), "reason": reason, "detail": detail}))


def _done(out: Path, job: Job) -> bool:
    return ((out / job.split / f"{job.name}.npz").exists()
            or (out / "rejected" / f"{job.name}.json").exists())


def _worker(args: tuple[Job, GenerateConfig]) -> tuple[str, str | None, float]:
    return run_job(*args)


def _generator(cfg: GenerateConfig) -> dict:
    """The header's record of the options that decide what each job makes."""
    return {"command": "neurok dataset generate", "count": cfg.count, "seed": cfg.seed,
            "categories": list(cfg.categories), "seconds": cfg.seconds, "fps": cfg.fps,
            "shapes": str(cfg.shapes) if cfg.shapes else None,
            # recorded when used, so a header made without it reads as before
            **({"interior_pins": cfg.interior_pins} if cfg.interior_pins else {}),
            **({"solids": cfg.solids} if cfg.solids != "cage" else {}),
            **({"families": cfg.families} if cfg.families != "base" else {})}


# options a resumed run must share with the one that began the folder (--count may grow)
SAME_ON_RESUME = {"seed": None, "categories": None, "seconds": None, "fps": None,
                  "shapes": None, "interior_pins": 0.0, "solids": "cage", "families": "base"}


def _check_resume(cfg: GenerateConfig) -> None:
    """A folder that already holds a dataset is resumed only with the options that made it:
    otherwise its finished sequences would be skipped and the rest made differently."""
    if not (cfg.out / HEADER).is_file():
        return
    before = read_header(cfg.out).generator
    if before.get("command") != "neurok dataset generate":
        raise UsageError(f"{cfg.out} holds a dataset made by {before.get('command') or 'hand'}"
                         "; generate into a new folder")
    now = _generator(cfg)
    for key, default in SAME_ON_RESUME.items():
        was, wants = (",".join(v) if isinstance(v, list) else v
                      for v in (before.get(key, default), now.get(key, default)))
        if was != wants:
            raise UsageError(f"{cfg.out} was made with --{key.replace('_', '-')} {was}, not "
                             f"{wants}; resume it with the same options or use a new folder")


def summarize(cfg: GenerateConfig, jobs: list[Job]) -> Header:
    """The header from what is on disk (all shards' work so far)."""
    counts: dict[str, Counter] = {s: Counter() for s in SPLITS}
    by_name = {j.name: j for j in jobs}
    for s in SPLITS:
        for f in sequence_files(cfg.out, s):
            job = by_name.get(f.stem)
            counts[s][job.category if job else "other"] += 1
    rejected: Counter = Counter()
    for f in (cfg.out / "rejected").glob("*.json") if (cfg.out / "rejected").is_dir() else []:
        if not f.name.startswith("."):
            rejected[json.loads(f.read_text())["reason"]] += 1
    mujoco = require("mujoco", "sim")

    return Header(
        generator=_generator(cfg),
        engine={"name": "mujoco", "version": mujoco.__version__},
        counts={s: dict(sorted(c.items())) for s, c in counts.items()},
        rejected=dict(sorted(rejected.items())),
        extra={"test_families": {c: f for c, f in TEST_FAMILIES.items()
                                 if c in cfg.categories or c in CATEGORIES},
               "frames": int(cfg.seconds * cfg.fps) + 1})



STOP_WAIT = 10.0  # s a pool's workers get to end on SIGTERM before they are killed


def _terminate(pool) -> None:
    """``pool.terminate()``, which sends its workers SIGTERM (they clean up as the command
    does: cli/_common.py) and joins them, with any worker still alive after STOP_WAIT
    killed: one blocked on the task queue's lock, which a worker ended mid-read still
    held, never returned, and the join waited for ever."""
    import threading

    workers = mp.active_children()
    timer = threading.Timer(STOP_WAIT, lambda: [w.kill() for w in workers if w.is_alive()])
    timer.daemon = True
    timer.start()
    try:
        pool.terminate()
    finally:
        timer.cancel()

def generate(cfg: GenerateConfig, *, progress: Callable[[int, int, dict], None] | None = None
             ) -> Header:
    """Make this shard's missing sequences (in parallel), then write ``dataset.json``."""
    i, n = cfg.shard
    if not (0 <= i < n):
        raise UsageError(f"«shard» {i}/{n}: need 0 <= i < n")
    if not cfg.splits or set(cfg.splits) - set(SPLITS):
        raise UsageError(f"«splits» takes {', '.join(SPLITS)}, not {','.join(cfg.splits)}")
    if cfg.count < 1 or cfg.workers < 1:
        raise UsageError("«count» and «workers» must be at least 1")
    check_frames(cfg.seconds, cfg.fps)
    if not 0.0 <= cfg.interior_pins <= 1.0:
        raise UsageError(f"«interior pins» must be in [0, 1], got {cfg.interior_pins:g}")
    require("mujoco", "sim", "neurok dataset generate")
    _check_resume(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    for folder in (cfg.out, *(cfg.out / s for s in SPLITS), cfg.out / "rejected"):
        remove_partials(folder)  # what a run killed inside a write left
    jobs = plan(cfg)
    todo = [j for j in jobs if j.index % n == i and j.split in cfg.splits
            and not _done(cfg.out, j)]
    tally: Counter = Counter()
    if todo:
        # fork: cheap to start and free of __main__ re-imports; the parent holds no engine state
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(method) if cfg.workers > 1 else None
        pool = ctx.Pool(cfg.workers) if ctx else None
        results = (pool.imap_unordered(_worker, [(j, cfg) for j in todo]) if pool
                   else (run_job(j, cfg) for j in todo))
        try:
            for k, (_, reason, _) in enumerate(results, 1):
                tally[reason or "ok"] += 1
                if progress:
                    progress(k, len(todo), dict(tally))
        finally:
            if pool:
                _terminate(pool)
    header = summarize(cfg, jobs)
    write_header(cfg.out, header)
    return header
