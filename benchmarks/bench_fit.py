"""Inverse kinematics through ``neurok fit`` on held-out deformed shapes of a dataset split.

    python benchmarks/bench_fit.py --data work/corpus [--split test] [--pairs 12] [--json out]

For each pair (a sequence of the split, frame a as rest, frame b as the observed shape; the
same stratified pairs as ``neurok eval``) it writes the rest and the deformed frame as OBJ and
2,048 points of the deformed surface as XYZ, and fits both: the same-topology mesh and the
point cloud. Chamfer-L1 (unit: the observed bounding-box diagonal) per category, next to the
rest pose; for the cloud also the floor that 2,048 points leave (the Chamfer-L1 between the
true surface and the cloud itself); seconds per fit (mean, and the slowest). Prints a table
and the load average, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.data.dataset import PairDataset, SamplingConfig
from neurok_cli.data.geometry import sample_surface
from neurok_cli.data.metrics import chamfer_l1
from neurok_cli.deform.fit import FitConfig, fit

CLOUD = 2048


def write_obj(path: Path, v: np.ndarray, f: np.ndarray) -> None:
    lines = [f"v {a:.7g} {b:.7g} {c:.7g}" for a, b, c in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in f]
    path.write_text("\n".join(lines) + "\n")


def run(data: Path, split: str, pairs: int, weights: str, seed: int) -> list[dict]:
    ds = PairDataset(data, split, SamplingConfig(seed=seed).without_augmentation())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for j, it in enumerate(ds.fixed_pairs(pairs)):
            seq = int(it["seq"])
            entry = ds.sequence(seq)
            a, b = int(it["frame_a"]), int(it["frame_b"])
            rest, shape = tmp / f"rest{j}.obj", tmp / f"shape{j}.obj"
            write_obj(rest, entry.frames[a], entry.faces)
            write_obj(shape, entry.frames[b], entry.faces)
            rng = np.random.default_rng([seed, 23, j])
            cloud, _, _ = sample_surface(entry.frames[b].astype(np.float64), entry.faces,
                                         CLOUD, rng)
            dense, _, _ = sample_surface(entry.frames[b].astype(np.float64), entry.faces,
                                         10_000, rng)
            np.savetxt(tmp / f"cloud{j}.xyz", cloud)
            row = {"category": ds.category_of[seq], "sequence": seq, "frames": [a, b],
                   "cloud_floor": chamfer_l1(cloud, dense)}
            for kind, path in (("mesh", shape), ("cloud", tmp / f"cloud{j}.xyz")):
                t0 = time.perf_counter()
                res = fit(FitConfig(observed=path, rest=rest, weights=weights, seed=seed))
                f = res.fits[0]
                row[kind] = {"chamfer": f.chamfer, "rest_chamfer": f.rest_chamfer,
                             "vertex_error": f.vertex_error,
                             "seconds": time.perf_counter() - t0}
            rows.append(row)
            print(f"pair {j + 1}/{pairs} {row['category']}: mesh {row['mesh']['chamfer']:.4f}"
                  f" cloud {row['cloud']['chamfer']:.4f}", flush=True)
    return rows


def summary(rows: list[dict]) -> dict:
    cats = sorted({r["category"] for r in rows}) + ["all"]
    out = {}
    for c in cats:
        sel = [r for r in rows if c in ("all", r["category"])]
        out[c] = {"pairs": len(sel),
                  **{f"{k}_{m}": float(np.mean([r[k][m] for r in sel]))
                     for k in ("mesh", "cloud") for m in ("chamfer", "rest_chamfer",
                                                           "seconds")},
                  "max_seconds": max(r[k]["seconds"] for r in sel for k in ("mesh", "cloud")),
                  "mesh_vertex_error": float(np.mean([r["mesh"]["vertex_error"] for r in sel])),
                  "cloud_floor": float(np.mean([r["cloud_floor"] for r in sel]))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--pairs", type=int, default=12)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=Path("bench_fit.json"))
    args = ap.parse_args()
    rows = run(args.data, args.split, args.pairs, args.weights, args.seed)
    table = summary(rows)
    head = (f"{'category':9} {'pairs':>5} {'mesh':>8} {'rest':>8} {'vert err':>8} "
            f"{'cloud':>8} {'rest':>8} {'floor':>8} {'s/fit':>6} {'max s':>6}")
    print(head)
    for c, s in table.items():
        print(f"{c:9} {s['pairs']:5d} {s['mesh_chamfer']:8.4f} {s['mesh_rest_chamfer']:8.4f} "
              f"{s['mesh_vertex_error']:8.4f} {s['cloud_chamfer']:8.4f} "
              f"{s['cloud_rest_chamfer']:8.4f} {s['cloud_floor']:8.4f} "
              f"{(s['mesh_seconds'] + s['cloud_seconds']) / 2:6.1f} {s['max_seconds']:6.1f}")
    load = os.getloadavg()  # the timings mean little without it on a shared machine
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    args.json.write_text(json.dumps({"split": args.split, "weights": args.weights,
                                     "load_average": load, "summary": table, "pairs": rows},
                                    indent=1) + "\n")


if __name__ == "__main__":
    main()
