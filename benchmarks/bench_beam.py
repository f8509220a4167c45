"""Beams against theory: a clamped box cantilever in the object's own shape space (`animate
--space handles`) and in the engine (`simulate`), beside Euler-Bernoulli.

    python benchmarks/bench_beam.py [--aspects 5 10 20 40] [--no-engine] [--json out.json]

A 1 m box of square section, aspect ratio L / a, of the default beam material, clamped at
one end (``--pin 'x<0.02'``), undamped, under a gravity that sags an Euler-Bernoulli tip 1 %
of its length (small enough to stay linear). For the handle space, two figures:

- *modal*: the reduced model's own static tip deflection (its rest stiffness against the
  load) and first natural frequency (generalized eigenproblem of stiffness and mass), both
  over the coordinates the clamp leaves free;
- *motion*: `animate`'s integrator from rest for three theoretical periods: the mean tip
  deflection (the static one, undamped) and the frequency from the tip's crossings of it.

The engine runs the same box, material, gravity and clamp for the same time (``simulate``'s
default cells for a beam) and is measured as *motion*. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import trimesh

from neurok_cli.deform.own.directions import free_directions
from neurok_cli.deform.own.mechanics import build_mechanics
from neurok_cli.deform.own.motion import handle_motion
from neurok_cli.scenario.conditions import PRESET_MATERIALS, Conditions, pinned_by
from neurok_cli.scenario.spec import MotionConfig
from neurok_cli.sim.simulate import SimulateConfig, simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plausibility import _frames  # noqa: E402

PIN = "x<0.02"
SAG = 0.01  # the theoretical tip deflection, x the length


def beam_mesh(aspect: float) -> tuple[np.ndarray, np.ndarray]:
    """A 1 m box of section 1/aspect, x along its length from 0, resting 1 m up, its
    triangles' edges at most a quarter of the section."""
    a = 1.0 / aspect
    box = trimesh.creation.box(extents=[1.0, a, a])
    v, f = trimesh.remesh.subdivide_to_size(box.vertices, box.faces, max_edge=a / 4)
    mesh = trimesh.Trimesh(v, f)  # welded
    return np.asarray(mesh.vertices) + np.array([0.5, 1.0, 0.0]), np.asarray(mesh.faces)


def theory(aspect: float, material) -> dict:
    a = 1.0 / aspect
    inertia, area = a ** 4 / 12, a * a
    g = SAG * 8 * material.young * inertia / (material.density * area)
    freq = 1.875 ** 2 / (2 * math.pi) * math.sqrt(material.young * inertia
                                                   / (material.density * area))
    return {"g": g, "deflection": SAG, "freq": freq}


def modal(v, f, material, g: float) -> dict:
    """Static tip deflection and first frequency of the reduced model, clamped."""
    held = pinned_by([PIN], v)
    t0 = time.perf_counter()
    mech = build_mechanics(v, f, "beam", material, pinned=held)
    build = time.perf_counter() - t0
    N = np.kron(free_directions(mech), np.eye(3))
    K = N.T @ mech.K0 @ N
    M = N.T @ np.kron(mech.M, np.eye(3)) @ N
    load = mech.mass_rows.T @ (mech.point_mass[:, None] * np.array([0.0, -g, 0.0]))
    Z = (N @ np.linalg.solve(K, N.T @ load.reshape(-1))).reshape(-1, 3)
    tip = v[:, 0] > v[:, 0].max() - 1e-9
    deflection = -float((mech.vertex_rows[tip] @ Z)[:, 1].mean())
    import scipy.linalg as sla

    lam = sla.eigh(K, M, eigvals_only=True, subset_by_index=[0, 0])[0]
    return {"deflection": deflection, "freq": math.sqrt(max(lam, 0.0)) / (2 * math.pi),
            "handles": mech.basis.handles, "solid": mech.solid, "build_s": build}


def tip_motion(frames: np.ndarray, rest: np.ndarray, fps: float) -> dict:
    """Mean tip deflection over the clip's last two thirds, and the frequency of its
    crossings of that mean."""
    tip = rest[:, 0] > rest[:, 0].max() - 1e-6 * np.ptp(rest[:, 0])
    y = frames[:, tip, 1].mean(axis=1) - rest[tip, 1].mean()
    mean = float(y[len(y) // 3:].mean())
    sign = np.sign(y[2:] - mean)
    cross = np.flatnonzero(np.diff(sign) != 0)
    freq = (len(cross) - 1) / 2 / ((cross[-1] - cross[0]) / fps) if len(cross) > 2 else math.nan
    return {"deflection": -mean, "freq": freq}


def motion(v, f, material, g: float, seconds: float, fps: float) -> dict:
    cond = Conditions(gravity=(0.0, -g, 0.0), ground=False, pins=[PIN])
    cfg = MotionConfig(category="beam", material=material, conditions=cond, seconds=seconds,
                       fps=fps, still_air=False)
    t0 = time.perf_counter()
    m = handle_motion(v, f, cfg)
    out = tip_motion(m.frames[0], v, fps)
    out["wall_s"] = time.perf_counter() - t0
    return out


def engine(v, f, material, g: float, seconds: float, fps: float, tmp: Path) -> dict:
    src, out = tmp / "beam.obj", tmp / "beam-sim.glb"
    trimesh.Trimesh(v, f, process=False).export(src)
    cond = Conditions(gravity=(0.0, -g, 0.0), ground=False, pins=[PIN])
    t0 = time.perf_counter()
    rep = simulate(SimulateConfig(input=src, output=out, seconds=seconds, fps=fps,
                                  material="beam", damping=0.0, size=1.0, drop=0.0,
                                  conditions=cond))
    wall = time.perf_counter() - t0
    frames, _ = _frames(out)
    res = tip_motion(np.asarray(frames), np.asarray(frames)[0], fps)
    res.update({"wall_s": wall, "cells": rep.cells, "dof": rep.dof})
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aspects", nargs="+", type=float, default=[5, 10, 20, 40])
    ap.add_argument("--no-engine", action="store_true")
    ap.add_argument("--no-motion", action="store_true", help="the modal figures alone")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    material = replace(PRESET_MATERIALS["beam"], damping=0.0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for aspect in args.aspects:
            v, f = beam_mesh(aspect)
            th = theory(aspect, material)
            seconds = 3.0 / th["freq"]
            fps = max(60.0, 40 * th["freq"])
            row = {"aspect": aspect, "vertices": len(v), "theory": th,
                   "modal": modal(v, f, material, th["g"])}
            if not args.no_motion:
                row["motion"] = motion(v, f, material, th["g"], seconds, fps)
            if not args.no_engine:
                row["engine"] = engine(v, f, material, th["g"], seconds, fps, Path(tmp))
            rows.append(row)
            print(_line(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "beam", "rows": rows}, indent=2) + "\n")


def _line(r: dict) -> str:
    th = r["theory"]
    cells = [f"aspect {r['aspect']:>4g} ({r['modal']['handles']} handles)"]
    for who in ("modal", "motion", "engine"):
        if who in r:
            x = r[who]
            cells.append(f"{who} deflection {x['deflection'] / th['deflection']:.2f}x "
                         f"freq {x['freq'] / th['freq']:.2f}x")
    return " | ".join(cells)


if __name__ == "__main__":
    main()
