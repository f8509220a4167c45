"""Which soft stiffness scale makes `neurok animate`'s drops look like the engine's?

    python benchmarks/soft_stiffness.py [--scales 1 2 3 10] [--assets penguin spot capsule]
        [--weights neurok-base] [--json out.json]

For each scale, a copy of the bundle with ``calibration.soft.stiffness`` set to it drops
each asset as benchmarks/plausibility.py does (`neurok animate` with defaults, then `neurok
simulate` under the same conditions), and compares crumple and smallest volume with the
engine's. The distance of a scale: the sum over assets of |crumple - engine's| (radians)
and |smallest volume - engine's| (fraction of the rest volume). Prints a table and the
scale of the smallest distance; about 2 minutes for the defaults on a 2-core CPU. This is
how the shipped soft stiffness (x3) was chosen: `neurok calibrate` fits it to corpus-v1's
soft bodies, which barely deform, and runs to the top of any grid.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.model.bundle import read_bundle_config, update_bundle_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plausibility import run_pair  # noqa: E402

MEASURES = ("crumple", "volume_min")


def with_scale(bundle: Path, scale: float, into: Path) -> Path:
    """A copy of ``bundle`` in ``into`` whose soft stiffness scale is ``scale``."""
    folder = into / f"soft-x{scale:g}"
    shutil.copytree(bundle, folder)
    cal = read_bundle_config(folder)["calibration"]
    update_bundle_config(folder, calibration={**cal, "soft": {**cal["soft"],
                                                              "stiffness": float(scale)}})
    return folder


def distance(rows: list[dict]) -> float:
    """How far the drops are from the engine's: crumple and smallest volume, summed."""
    return sum(abs(r["animate"][m] - r["engine"][m]) for r in rows for m in MEASURES)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", nargs="+", type=float, default=[1.0, 2.0, 3.0, 10.0])
    ap.add_argument("--assets", nargs="+", default=["penguin", "spot", "capsule"])
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    bundle = resolve_weights(args.weights)
    results, engine = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            folder = with_scale(bundle, scale, Path(tmp))
            rows = []
            for a in args.assets:  # the engine's drop is the same for every scale: once
                row = run_pair(a, "drop", args.seconds, None, str(folder), Path(tmp),
                               engine=a not in engine)[0]
                engine.setdefault(a, row.get("engine"))
                rows.append({**row, "engine": engine[a]})
            results.append({"scale": scale, "distance": distance(rows), "rows": rows})
    lines = ["| soft stiffness | " + " | ".join(args.assets) + " | distance |",
             "|---" * (len(args.assets) + 2) + "|"]
    for res in results + [{"scale": None, "rows": results[0]["rows"]}]:
        who = "engine" if res["scale"] is None else "animate"
        cells = [f"{r[who]['crumple']:.3f}, {r[who]['volume_min']:.3f}, tilt "
                 f"{r[who]['tilt_deg']:.0f}" for r in res["rows"]]
        label = "engine" if res["scale"] is None else f"x{res['scale']:g}"
        dist = "" if res["scale"] is None else f"{res['distance']:.3f}"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {dist} |")
    best = min(results, key=lambda r: r["distance"])
    print("\n".join(lines))  # noqa: T201
    print(f"closest to the engine (crumple and smallest volume): x{best['scale']:g}")  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "soft_stiffness", "results": results,
                                         "best": best["scale"]}, indent=2))


if __name__ == "__main__":
    main()
