"""What the engine's soft bodies become as their interpolation cells grow: the question under
any corpus in which solids "deform like solids".

    python benchmarks/bench_cells.py [--jobs 12] [--multiples 1 2 4 8] [--seconds 2]
        [--dof trilinear|quadratic] [--json bench_cells.json]

The corpus's soft bodies are surfaces embedded in a cage of trilinear cells over their bounding
box (sim/scene.py), from 1 to 3 cells per axis (sim/setup.auto_cells: a ball is one cell, 8
nodes). Here the first ``--jobs`` soft training jobs of the corpus's plan (`neurok dataset
generate --count 1620 --seed 2026`: the same shapes, materials and conditions) are simulated
again with the cells of that policy times each multiple (``--dof quadratic``: the same cells,
each interpolating quadratically over 27 nodes instead of 8), and per run reported:

- ``deform``: the largest shape change over the clip (vertex distance left once the frame is
  moved rigidly onto the rest shape, mean over vertices, / the rest shape's diagonal);
- ``crumple``: the 95th percentile of the dihedral angles' change, mean over frames (radians);
- ``~next``: the shape difference to the next multiple's run (rigidly aligned frame by frame,
  mean over frames, / diagonal): under 0.02 where the motion has converged;
- the engine's wall time for the clip.
Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from neurok_cli.data.metrics import rigid_residual
from neurok_cli.evaluate.plausibility import crumple
from neurok_cli.io.atomic import atomic_path
from neurok_cli.sim.engine import run
from neurok_cli.sim.generate import GenerateConfig, job_inputs, plan
from neurok_cli.sim.setup import auto_cells, prepare


def soft_jobs(count: int) -> list:
    """The first ``count`` trilinear soft training jobs of corpus-v1's plan, each with the
    shape, material and conditions the generator draws for it."""
    cfg = GenerateConfig(out=Path("unused"), count=1620, seed=2026)
    out = []
    for job in plan(cfg):
        if job.category != "soft" or job.split != "train":
            continue
        shape, material, cond, dof = job_inputs(job, cfg)
        if dof == "trilinear":
            out.append((job.name, shape, material, cond))
        if len(out) == count:
            break
    return out


def one_job(name: str, shape, material, cond, multiples: list[int], seconds: float,
            dof: str = "trilinear") -> dict:
    base = auto_cells(np.ptp(shape.vertices, axis=0), "soft", "trilinear")
    row: dict = {"job": name, "young": material.young, "cells": list(base), "dof": dof,
                 "runs": {}}
    frames = {}
    for m in multiples:
        cells = tuple(c * m for c in base)
        spec = prepare(shape.vertices, shape.faces, "soft", material, cond, dof=dof,
                       cells=cells)
        t0 = time.perf_counter()
        result = run(spec, seconds=seconds, fps=30.0, closed=True, still_air=False)
        wall = time.perf_counter() - t0
        if result.rejected:
            row["runs"][m] = {"rejected": result.rejected}
            continue
        x = np.asarray(result.frames, np.float64)
        diag = float(np.linalg.norm(np.ptp(x[0], axis=0)))
        frames[m] = (x, diag)
        rest = np.repeat(x[:1], len(x), axis=0)
        row["runs"][m] = {"cells": list(cells), "wall_s": wall,
                          "deform": float(rigid_residual(x, rest).max() / diag),
                          "crumple": float(crumple(x[0], x, shape.faces).mean())}
    for a, b in zip(multiples, multiples[1:]):
        if a in frames and b in frames:
            (xa, diag), (xb, _) = frames[a], frames[b]
            row["runs"][a]["~next"] = float(rigid_residual(xa, xb).mean() / diag)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--multiples", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--dof", choices=["trilinear", "quadratic"], default="trilinear")
    ap.add_argument("--json", type=Path, default=Path("bench_cells.json"))
    args = ap.parse_args()
    rows = []
    head = f"{'job':28} {'E kPa':>6} " + " ".join(
        f"{f'x{m} deform/crumple/~next/s':>28}" for m in args.multiples)
    print(head)
    for name, shape, material, cond in soft_jobs(args.jobs):
        row = one_job(name, shape, material, cond, args.multiples, args.seconds, args.dof)
        rows.append(row)
        cols = []
        for m in args.multiples:
            r = row["runs"].get(m, {})
            if "deform" not in r:
                cols.append(f"{r.get('rejected', '-'):>28}")
                continue
            nxt = f"{r['~next']:.3f}" if "~next" in r else "  -  "
            cols.append(f"{r['deform']:.3f}/{r['crumple']:.3f}/{nxt}/{r['wall_s']:5.1f}".rjust(28))
        print(f"{name:28} {material.young / 1e3:6.0f} " + " ".join(cols), flush=True)
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps({"multiples": args.multiples, "seconds": args.seconds,
                                   "dof": args.dof, "rows": rows}, indent=1))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
