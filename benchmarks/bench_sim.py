"""The data engine's speed: dataset throughput per category, and `neurok simulate` per asset.

    python benchmarks/bench_sim.py [--per-category 12] [--workers 2] [--json out.json]

1. Generates ``--per-category`` sequences of each category (2 s at 30 fps, the corpus
   settings) with ``--workers`` processes and reports sequences per minute.
2. Runs the full-order simulation of every shared asset (../shared/assets) for 1 s as the
   command line does (soft; the open mountain as pinned cloth) and reports wall seconds per
   simulated second.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from neurok_cli.scenario.conditions import Conditions
from neurok_cli.sim.generate import GenerateConfig, generate
from neurok_cli.sim.simulate import SimulateConfig, simulate

SHARED = Path(__file__).resolve().parents[2] / "shared" / "assets"
ASSETS = [("penguin.obj", "soft", []), ("spot/spot_triangulated.obj", "soft", []),
          ("chair_model.obj", "soft", []), ("teapot.stl", "soft", []),
          ("capsule/capsule.obj", "soft", []), ("CesiumMilkTruck.glb", "soft", []),
          ("mountain.obj", "cloth", ["x<0.02"])]


def throughput(per_category: int, workers: int) -> list[dict]:
    rows = []
    for category in ("soft", "cloth", "beam"):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = GenerateConfig(out=Path(tmp), count=per_category, seed=7,
                                 categories=(category,), workers=workers, seconds=2.0)
            t0 = time.perf_counter()
            header = generate(cfg)
            wall = time.perf_counter() - t0
        made = sum(c.get(category, 0) for c in header.counts.values())
        rows.append({"category": category, "sequences": made,
                     "rejected": sum(header.rejected.values()), "wall_s": wall,
                     "per_minute": 60 * per_category / wall, "workers": workers})
    return rows


def simulate_assets(seconds: float) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, material, pins in ASSETS:
            src = SHARED / name
            if not src.is_file():
                continue
            cfg = SimulateConfig(input=src, output=Path(tmp) / "out.glb", seconds=seconds,
                                 material=material, size=1.0, conditions=Conditions(pins=pins))
            t0 = time.perf_counter()
            rep = simulate(cfg)
            total = time.perf_counter() - t0
            rows.append({"asset": name, "material": material, "vertices": rep.vertices,
                         "simulated_vertices": rep.simulated_vertices, "dofs": rep.dofs,
                         "engine_s_per_s": rep.sim_s_per_s, "command_s": total,
                         "seconds": seconds, "rejected": rep.rejected})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-category", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    gen = throughput(args.per_category, args.workers)
    print(f"{'category':10} {'seqs':>5} {'rejected':>8} {'wall s':>8} {'seq/min':>8}")
    for r in gen:
        print(f"{r['category']:10} {r['sequences']:5d} {r['rejected']:8d} {r['wall_s']:8.1f} "
              f"{r['per_minute']:8.1f}")
    sims = simulate_assets(args.seconds)
    print(f"\n{'asset':28} {'material':8} {'verts':>7} {'simulated':>9} {'dofs':>6} "
          f"{'engine s/s':>10} {'command s':>9}")
    for r in sims:
        print(f"{r['asset']:28} {r['material']:8} {r['vertices']:7d} "
              f"{r['simulated_vertices']:9d} {r['dofs']:6d} {r['engine_s_per_s']:10.2f} "
              f"{r['command_s']:9.2f}")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "sim", "generation": gen,
                                         "simulate": sims}, indent=2))


if __name__ == "__main__":
    main()
