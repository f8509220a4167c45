"""How much a dataset's soft bodies deform, and how cleanly: the figures that tell corpus-v1's
shells in trilinear cages from corpus-v2's lattices.

    python benchmarks/bench_corpus.py --data work/corpus2 [--split train] [--category soft]
        [--json bench_corpus.json]

Per family (and dof), over its sequences:
- ``deform``: the largest shape change over the clip (mean vertex distance once the frame is
  moved rigidly onto the rest shape, / the rest shape's diagonal);
- ``squash``: the most any of the rest shape's principal extents shrinks over the clip (the
  frame moved rigidly onto the rest shape first), e.g. 0.2 for a ball that flattens by 20 %;
- ``recover``: the same at the last frame (what the body keeps once it has sprung back);
- ``crumple``: the 95th percentile of the dihedral angles' change, mean over frames (rad);
- ``volume``: the smallest enclosed volume over the clip / the rest volume;
- ``engine s``: the engine's wall time per clip (as generated).
Medians, with the 90th percentile of deform and squash. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from neurok_cli.data.format import load_sequence, sequence_files
from neurok_cli.data.metrics import rigid_residual
from neurok_cli.evaluate.plausibility import crumple
from neurok_cli.io.atomic import atomic_path
from neurok_cli.scenario.mass import closed_volume


def _aligned(frames: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Every frame moved rigidly onto the rest shape (Kabsch)."""
    rc = rest - rest.mean(axis=0)
    out = np.empty_like(frames)
    for t, x in enumerate(frames):
        xc = x - x.mean(axis=0)
        u, _, vt = np.linalg.svd(xc.T @ rc)
        d = np.sign(np.linalg.det(u @ vt))
        rot = u @ np.diag([1.0, 1.0, d]) @ vt
        out[t] = xc @ rot + rest.mean(axis=0)
    return out


def measure(path: Path) -> dict:
    seq = load_sequence(path)
    x = np.asarray(seq.frames, np.float64)
    faces = np.asarray(seq.faces)
    rest = x[0]
    diag = float(np.linalg.norm(np.ptp(rest, axis=0)))
    aligned = _aligned(x, rest)
    centred = rest - rest.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    extent0 = np.ptp(centred @ axes.T, axis=0)
    extents = np.ptp((aligned - aligned.mean(axis=1, keepdims=True)) @ axes.T, axis=1)
    shrink = 1.0 - extents / np.maximum(extent0, 1e-12)
    vol0 = closed_volume(rest, faces)
    meta = seq.meta
    return {"name": path.stem, "family": meta["family"], "dof": meta["dof"],
            "cells": meta["cells"], "young": meta["material"]["young"],
            "deform": float(rigid_residual(x, np.repeat(x[:1], len(x), 0)).max() / diag),
            "squash": float(shrink.max()), "recover": float(shrink[-1].max()),
            "crumple": float(crumple(rest, x, faces).mean()),
            "volume": float(min(closed_volume(f, faces) for f in x) / vol0) if vol0 > 0
            else float("nan"),
            "engine_s": float(meta.get("sim_wall_s", float("nan")))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="train")
    ap.add_argument("--category", default="soft")
    ap.add_argument("--json", type=Path, default=Path("bench_corpus.json"))
    args = ap.parse_args()
    rows = [measure(p) for p in sequence_files(args.data, args.split)
            if f"_{args.category}_" in p.name]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["family"], r["dof"])].append(r)
    groups[("all", "")] = rows
    print(f"{'family':14} {'dof':9} {'n':>4} {'deform':>13} {'squash':>13} {'recover':>8} "
          f"{'crumple':>8} {'volume':>7} {'engine s':>8}")
    summary = {}
    for (fam, dof), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        col = {k: np.array([r[k] for r in rs]) for k in
               ("deform", "squash", "recover", "crumple", "volume", "engine_s")}
        s = {"n": len(rs), **{k: float(np.nanmedian(v)) for k, v in col.items()},
             "deform_p90": float(np.quantile(col["deform"], 0.9)),
             "squash_p90": float(np.quantile(col["squash"], 0.9))}
        summary[f"{fam}/{dof}" if dof else fam] = s
        print(f"{fam:14} {dof:9} {s['n']:4d} {s['deform']:6.3f}/{s['deform_p90']:.3f} "
              f"{s['squash']:6.3f}/{s['squash_p90']:.3f} {s['recover']:8.3f} "
              f"{s['crumple']:8.3f} {s['volume']:7.3f} {s['engine_s']:8.2f}")
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps({"data": str(args.data), "split": args.split,
                                   "summary": summary, "rows": rows}, indent=1))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
