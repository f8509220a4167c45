"""How far the engine's own motion moves when its conditions change by less than anyone
could specify: the floor under any rollout error measured against it.

    python benchmarks/bench_predictability.py --data work/corpus [--split test]
        [--rollouts 24] [--seconds 2] [--finer 3 4] [--categories soft] [--json out.json]

The same held-out sequences as ``neurok eval``'s rollouts (same stratified picks) are run
again through the engine from their stored scene, once unchanged (``again``: the engine is
deterministic, so this differs only by the start's rounding to float32, as the dataset
stores it) and once under each small perturbation:

- ``timestep/2``: half the engine's time step (numerics only, the same physics);
- ``young+1%``: Young's modulus 1 % higher;
- ``height+1mm``: the start 1 mm higher;
- ``yaw+0.5deg``: the object turned 0.5 degrees about the vertical through its centre;
- ``cells x2``: soft bodies and beams only (cloth moves every vertex): twice the
  interpolation cells per axis, the same physics resolved more finely. Where this moves the
  motion far more than the perturbations above, the stored motion is a property of the
  engine's discretization, not of the object. ``x2 shape``: the same run with every frame
  moved rigidly onto the stored one first (the shape's convergence, which way it rolled
  aside).

For each, the mean vertex error against the stored sequence over the clip (unit: the rest
shape's bounding-box diagonal, as in ``neurok eval``), per category, next to the rest
pose's. A perturbed run the engine rejects (unstable) is counted, not averaged. Prints a
table, writes JSON.

``--finer 3 4`` also runs three and four times the cells per axis (``cells x3``,
``cells x4``) and compares each resolution with the next (``x2~x3``, ``x3~x4``): where those
differences do not shrink, no resolution settles the motion (a mushroom toppling one way or
another), and no model can be held to one run of it.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from neurok_cli.data.dataset import PairDataset, SamplingConfig
from neurok_cli.data.format import load_sequence
from neurok_cli.data.metrics import bbox_diagonal, rigid_residual
from neurok_cli.evaluate.suite import _stratified
from neurok_cli.io.atomic import atomic_path
from neurok_cli.sim.generate import replay, scene_of
from neurok_cli.sim.scene import SIZED_DOFS

SHAPE_X2 = "x2 shape"  # cells x2 with every frame moved rigidly onto the stored one first
VARIANTS = ("again", "timestep/2", "young+1%", "height+1mm", "yaw+0.5deg", "cells x2")


def cells_multiple(variant: str) -> int | None:
    """N of a ``cells xN`` variant, else None."""
    return int(variant[len("cells x"):]) if variant.startswith("cells x") else None


def applies(seq, variant: str) -> bool:
    """Whether ``variant`` means anything for this sequence (cells: interpolated bodies and
    lattices, whose cubes along the longest side are the first of their ``cells``)."""
    return cells_multiple(variant) is None or seq.meta["dof"] in SIZED_DOFS


def _yaw(v: np.ndarray, degrees: float) -> np.ndarray:
    a = np.radians(degrees)
    rot = np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0], [-np.sin(a), 0.0, np.cos(a)]])
    centre = v.mean(axis=0)
    return (v - centre) @ rot.T + centre


def rerun(seq, variant: str, seconds: float) -> np.ndarray | None:
    """The sequence's scene through the engine again under ``variant``; None if rejected."""
    material, cond = scene_of(seq.meta)
    change = {"timestep/2": {"timestep": float(seq.meta["timestep"]) / 2},
              "young+1%": {"material": replace(material, young=material.young * 1.01)},
              "height+1mm": {"conditions": replace(cond, height=cond.height + 0.001)},
              "yaw+0.5deg": {"vertices": _yaw(np.asarray(seq.frames[0], np.float64), 0.5)},
              }.get(variant, {})
    if cells_multiple(variant):
        change = {"cells": tuple(cells_multiple(variant) * c for c in seq.meta["cells"])}
    result = replay(seq, seconds, **change)
    return None if result.rejected else result.frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--rollouts", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=Path("bench_predictability.json"))
    ap.add_argument("--finer", type=int, nargs="*", default=[],
                    help="more cell multiples to run, e.g. 3 4 (slow: cells grow as N^3)")
    ap.add_argument("--categories", nargs="*", default=[],
                    help="only these of neurok eval's picks, e.g. soft (default: all)")
    args = ap.parse_args()
    multiples = sorted({2, *args.finer})
    variants = VARIANTS + tuple(f"cells x{n}" for n in multiples if n != 2)
    steps = {f"x{a}~x{b}": (a, b) for a, b in zip(multiples, multiples[1:])}
    pairs = list(steps)
    ds = PairDataset(args.data, args.split, SamplingConfig(seed=args.seed), cache=False)
    picks = [i for i in _stratified(ds, args.rollouts, args.seed)
             if not args.categories or ds.category_of[i] in args.categories]
    rows = []
    t0 = time.perf_counter()
    for idx in picks:
        seq = load_sequence(ds.files[idx])
        n = min(len(seq.frames), int(round(args.seconds * seq.fps)) + 1)
        seconds = (n - 1) / float(seq.fps)
        truth = np.asarray(seq.frames[:n], np.float64)
        diag = bbox_diagonal(truth[0])
        row = {"sequence": ds.files[idx].stem, "category": seq.meta["category"],
               "rest": float((np.linalg.norm(truth - truth[0], axis=-1).mean(-1) / diag).mean())}
        by_cells = {}
        for variant in filter(lambda v: applies(seq, v), variants):
            frames = rerun(seq, variant, seconds)
            row[variant] = None if frames is None else float(
                (np.linalg.norm(frames[:n] - truth, axis=-1).mean(-1) / diag).mean())
            if cells_multiple(variant) and frames is not None:
                by_cells[cells_multiple(variant)] = frames[:n]
            if variant == "cells x2" and frames is not None:  # the shape alone, path aside
                row[SHAPE_X2] = float(rigid_residual(frames[:n], truth).mean() / diag)
        for pair, (a, b) in steps.items() if applies(seq, "cells x2") else ():
            row[pair] = float((np.linalg.norm(by_cells[a] - by_cells[b], axis=-1).mean(-1)
                               / diag).mean()) if a in by_cells and b in by_cells else None
        rows.append(row)
    wall = time.perf_counter() - t0
    cats = sorted({r["category"] for r in rows}) + ["all"]
    table = {}
    for cat in cats:
        mine = [r for r in rows if cat in ("all", r["category"])]
        table[cat] = {"runs": len(mine), "rest": float(np.mean([r["rest"] for r in mine]))}
        for variant in (*variants, SHAPE_X2, *pairs):
            ran = [r[variant] for r in mine if variant in r]
            ok = [e for e in ran if e is not None]
            table[cat][variant] = float(np.mean(ok)) if ok else None
            table[cat][variant + " rejected"] = len(ran) - len(ok)
    columns = (*variants, SHAPE_X2, *pairs)
    head = f"{'category':9} {'runs':>4} " + " ".join(f"{v:>11}" for v in columns) + \
        f" {'rest pose':>9}"
    print(head)
    for cat in cats:
        t = table[cat]
        cells = " ".join(f"{t[v]:11.4f}" if t[v] is not None else f"{'-':>11}"
                         for v in columns)
        print(f"{cat:9} {t['runs']:4d} {cells} {t['rest']:9.4f}")
    print(f"{len(rows)} sequences x {len(variants)} runs in {wall:.0f} s")
    out = {"benchmark": "predictability", "data": str(args.data), "split": args.split,
           "seconds": args.seconds, "variants": list(variants), "pairs": pairs,
           "table": table, "rows": rows, "wall_s": wall}
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
