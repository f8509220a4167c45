"""Stiff materials: does the inertia given to modes past FASTEST_MODE change the motion?

    python benchmarks/stiff_materials.py [--materials rubber plastic wood]
        [--assets penguin spot] [--json out.json]

Each asset dropped in each material through `neurok animate` twice, as shipped and with no
inertia added (``dynamics.FASTEST_MODE`` set to infinity: the step then follows the fastest
mode's stability), then `neurok simulate` under the same conditions. Prints crumple,
smallest volume, tilt, travel, the RK4 steps and the seconds of each; about 2 minutes on
a 2-core CPU (the unlifted wooden drops take most of it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import neurok_cli.model.dynamics.core as dynamics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plausibility import ASSETS, run_pair  # noqa: E402

MEASURES = ("crumple", "volume_min", "tilt_deg", "travel_end")


def drops(asset: str, material: str, seconds: float, weights: str, tmp: Path) -> dict:
    """One asset in one material: animate without and with the lifted inertia, the engine."""
    shipped = dynamics.FASTEST_MODE
    out = {"asset": asset, "material": material}
    try:
        dynamics.FASTEST_MODE = float("inf")
        out["unlifted"], _ = run_pair(asset, "drop", seconds, None, weights, tmp,
                                      engine=False, material=material)
    finally:
        dynamics.FASTEST_MODE = shipped
    out["shipped"], _ = run_pair(asset, "drop", seconds, None, weights, tmp,
                                 material=material)
    return out


def table(rows: list[dict]) -> str:
    lines = ["| asset | material | " + " | ".join(f"{m} (unlifted / shipped / engine)"
                                                for m in MEASURES)
             + " | RK4 steps (unlifted / shipped) | s (unlifted / shipped / simulate) |",
             "|" + "---|" * (4 + len(MEASURES))]
    for r in rows:
        u, s = r["unlifted"], r["shipped"]
        cells = [f"{u['animate'][m]:.3f} / {s['animate'][m]:.3f} / {s['engine'][m]:.3f}"
                 for m in MEASURES]
        lines.append(f"| {r['asset']} | {r['material']} | " + " | ".join(cells)
                     + f" | {u['steps']:,} / {s['steps']:,} | {u['animate_s']:.1f} / "
                       f"{s['animate_s']:.1f} / {s['simulate_s']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--materials", nargs="+", default=["rubber", "plastic", "wood"])
    ap.add_argument("--assets", nargs="+", default=["penguin", "spot"], choices=sorted(ASSETS))
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [drops(a, m, args.seconds, args.weights, Path(tmp))
                for a in args.assets for m in args.materials]
    print(table(rows))  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
