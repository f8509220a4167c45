"""Every shared asset x every preset through `neurok animate`: finite, bounded motion and a
glTF the Khronos validator accepts.

    python benchmarks/robustness.py [--seconds 30] [--json out.json] [--weights neurok-base]
        [--assets penguin chair ...] [--presets drop sway ...] [--material auto|soft|cloth|beam]

A full 30 s sweep (8 assets x 6 presets) takes hours on a 2-core CPU; --assets and --presets
split it into parts. ``--material`` makes every asset that material (default: each one's
own, as ``neurok animate`` guesses it), e.g. ``beam`` to run the beam dynamics on shapes that
are not beams.

Bounded: no vertex ever farther than 5 x the asset's size from where it started (objects
fall, slide and bounce, but nothing flies off), and a closed solid ends with at least
MIN_VOLUME of its volume. Prints a table, writes JSON; exits 1 when any
run fails a check.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.deform.animate import JOINT_PRESETS, PRESETS
from neurok_cli.evaluate.plausibility import plausibility
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.gltf.read import read_animated
from neurok_cli.io.mesh import load_mesh
from neurok_cli.scenario.conditions import CATEGORIES

MIN_VOLUME = 0.9
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ASSETS = {"penguin": ("penguin.obj", ["--size", "0.5"]),
          "spot": ("spot/spot_triangulated.obj", ["--size", "0.6"]),
          "chair": ("chair_model.obj", ["--size", "0.9"]),
          "teapot": ("teapot.stl", ["--size", "0.3"]),
          "capsule": ("capsule/capsule.obj", ["--size", "0.4"]),
          "truck": ("CesiumMilkTruck.glb", []),
          "mountain": ("mountain.obj", ["--size", "2"]),
          "simplemorph": ("SimpleMorph.gltf", [])}


def validate(path: Path) -> tuple[int, int]:
    proc = subprocess.run(["node", str(ROOT / "tools" / "validate_gltf.mjs"), str(path)],
                          capture_output=True, text=True, check=True)
    report = json.loads(proc.stdout.splitlines()[0])
    return report["numErrors"], report["numWarnings"]


def check(name: str, preset: str, seconds: float, weights: str, tmp: Path,
          material: str = "auto") -> dict:
    src, extra = ASSETS[name]
    out = tmp / f"{name}-{preset}.glb"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", "animate", str(SHARED / src),
                           "-o", str(out), "--preset", preset, "--seconds", str(seconds),
                           "--weights", weights, "--material", material, "--json", *extra],
                          capture_output=True,
                          text=True)
    row = {"asset": name, "preset": preset, "wall_s": time.perf_counter() - t0}
    if proc.returncode != 0:
        return {**row, "ok": False, "error": proc.stderr.strip()[-300:]}
    rep = json.loads(proc.stdout)
    doc = load_document(out)
    ours = [i for i, a in enumerate(doc.gltf.animations) if (a.name or "").startswith("neurok_")]
    scene = read_animated(out, animations=ours)
    frames = scene.frames
    rest = load_mesh(SHARED / src).vertices
    size = float(np.ptp(rest, axis=0).max())
    finite = bool(np.isfinite(frames).all())
    travel = float(np.linalg.norm(frames - frames[:1], axis=-1).max() / size) if finite else 1e9
    volume = plausibility(frames, scene.faces).volume_end if finite else None
    errors, warnings = validate(out)
    ok = (finite and travel < 5.0 and errors == 0 and warnings == 0
          and (volume is None or volume >= MIN_VOLUME))
    out.unlink()
    return {**row, "ok": ok, "finite": finite, "max_travel_sizes": travel,
            "validator_errors": errors, "validator_warnings": warnings, "volume_end": volume,
            "category": rep["category"], "drift": rep["energy"]["drift"],
            "steps": rep["steps"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--assets", nargs="*", default=list(ASSETS))
    # a one-piece asset has no joint to open: those presets fail it with a one-line error
    ap.add_argument("--presets", nargs="*",
                    default=[p for p in PRESETS if p not in JOINT_PRESETS])
    ap.add_argument("--material", default="auto", choices=("auto", *CATEGORIES))
    args = ap.parse_args()
    unknown = sorted(set(args.assets) - set(ASSETS)) + sorted(set(args.presets) - set(PRESETS))
    if unknown:
        sys.exit(f"robustness: unknown asset or preset {', '.join(unknown)}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.assets:
            for preset in args.presets:
                row = check(name, preset, args.seconds, args.weights, Path(tmp),
                            args.material)
                rows.append(row)
                if args.json:  # after every run: a long sweep cut short keeps what it did
                    write_json(args.json, args.seconds, rows)
                status = "ok" if row["ok"] else "FAIL " + row.get("error", "")
                sys.stdout.write(f"{name:<12} {preset:<8} {row['wall_s']:7.1f} s  "
                                 f"{row.get('max_travel_sizes', float('nan')):6.2f} sizes  "
                                 f"{status}\n")
                sys.stdout.flush()
    failed = sum(not r["ok"] for r in rows)
    sys.stdout.write(f"{len(rows) - failed} of {len(rows)} runs passed\n")
    sys.exit(1 if failed else 0)


def write_json(path: Path, seconds: float, rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"benchmark": "robustness", "seconds": seconds, "rows": rows},
                              indent=2) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    main()
