"""Speed of `neurok animate` (latent dynamics) against `neurok simulate` (full-order MuJoCo).

    python benchmarks/bench_animate.py [--quick] [--repeat 3] [--json out.json]
        [--space auto|learned|handles] [--sizes 10000 ...] [--no-durations]

Every figure is a whole command line run as a user runs it (a fresh process: start-up,
loading, encoding, integration, decoding and writing a GLB), timed from outside; animate and
simulate of the same file run in turns, ``--repeat`` times, and the medians are compared.

1. Spheres (soft, dropped) of ~1k, 10k and 100k vertices, 4 s at 30 fps: animate vs
   simulate, the ratio, and animate's stages (from its --json report).
2. Duration: the 10k sphere for 1, 4, 15 and 60 s, animate vs simulate.
3. ``neurok fit --then-animate`` of a 16-frame clip of the 10k sphere (2 s more).

The machine's load average is recorded beside the figures. ``--quick`` drops the 100k
sphere and the 60 s runs. Prints a table, writes JSON. Single-shape fits (inverse kinematics
on the test split) were timed by bench_fit.py (docs/results.md; the script is in commit
8bb475c).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trimesh


def sphere(path: Path, vertices: int) -> int:
    """A UV sphere of radius 0.25 m with about ``vertices`` vertices; returns the count."""
    n = max(int(round((vertices / 2) ** 0.5)), 4)
    mesh = trimesh.creation.uv_sphere(radius=0.25, count=[n, 2 * n])
    # the vertex count is not n x 2n (seams, poles): correct n once by the measured count
    n = max(int(round(n * (vertices / len(mesh.vertices)) ** 0.5)), 4)
    mesh = trimesh.creation.uv_sphere(radius=0.25, count=[n, 2 * n])
    mesh.export(path)
    return len(mesh.vertices)


def timed(args: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", *args, "--json"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: neurok {' '.join(args)}\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


SPACE = "auto"  # animate's --space (set by --space)


def animate(src: Path, seconds: float, out: Path, weights: str) -> dict:
    extra = ["--space", SPACE] + (["--weights", weights] if SPACE == "learned" else [])
    wall, rep = timed(["animate", str(src), "-o", str(out), "--seconds", str(seconds),
                       "--material", "soft", *extra])
    return {"wall_s": wall, "stages": rep["timings"], "steps": rep["steps"],
            "drift": rep["energy"]["drift"]}


def simulate(src: Path, seconds: float, out: Path) -> dict:
    wall, rep = timed(["simulate", str(src), "-o", str(out), "--seconds", str(seconds),
                       "--material", "soft"])
    return {"wall_s": wall, "engine_s": rep["sim_wall_s"]}


def pair(src: Path, seconds: float, tmp: Path, weights: str, repeat: int, vertices: int) -> dict:
    """animate and simulate of ``src`` in turns, ``repeat`` times: medians and the ratio."""
    runs = {"animate": [], "simulate": []}
    for _ in range(repeat):
        runs["animate"].append(animate(src, seconds, tmp / "a.glb", weights))
        runs["simulate"].append(simulate(src, seconds, tmp / "s.glb"))
    a = statistics.median(r["wall_s"] for r in runs["animate"])
    s = statistics.median(r["wall_s"] for r in runs["simulate"])
    last = runs["animate"][-1]
    return {"vertices": vertices, "seconds": seconds, "animate_s": a, "simulate_s": s,
            "ratio": s / a, "animate_runs": [r["wall_s"] for r in runs["animate"]],
            "simulate_runs": [r["wall_s"] for r in runs["simulate"]],
            "stages": last["stages"], "steps": last["steps"], "load": os.getloadavg()[0]}


def fit_then_animate(src: Path, tmp: Path, weights: str) -> dict:
    """A 16-frame clip of ``src`` (animate, 0.5 s at 30 fps), fitted and continued for 2 s."""
    clip = tmp / "clip.glb"
    animate(src, 0.5, clip, weights)
    wall, _ = timed(["fit", str(clip), "-o", str(tmp / "fit.json"), "--weights", weights,
                     "--then-animate", str(tmp / "more.glb"), "--seconds", "2"])
    return {"frames": 16, "wall_s": wall, "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--space", default="auto", choices=("auto", "learned", "handles"),
                    help="animate's shape space (as its --space)")
    ap.add_argument("--sizes", nargs="+", type=int, default=None,
                    help="sphere vertex counts (default: 1k, 10k and, without --quick, 100k)")
    ap.add_argument("--no-durations", action="store_true",
                    help="only the 4 s drops (no 1/15/60 s runs, no fit)")
    args = ap.parse_args()
    global SPACE
    SPACE = args.space
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sizes = args.sizes or [1_000, 10_000] + ([] if args.quick else [100_000])
        spheres, counts = {}, {}
        for n in sizes:
            spheres[n] = tmp / f"sphere{n}.obj"
            counts[n] = sphere(spheres[n], n)
        animate(spheres[sizes[0]], 0.1, tmp / "warm.glb", args.weights)  # compiled code cached
        for n in sizes:
            rows.append(pair(spheres[n], 4.0, tmp, args.weights, args.repeat, counts[n]))
        fit = None
        if not args.no_durations and 10_000 in spheres:
            for seconds in [1.0, 15.0] + ([] if args.quick else [60.0]):
                rows.append(pair(spheres[10_000], seconds, tmp, args.weights,
                                 1 if seconds > 4 else args.repeat, counts[10_000]))
            fit = fit_then_animate(spheres[10_000], tmp, args.weights)
    head = (f"{'vertices':>9} {'seconds':>8} {'animate s':>10} {'simulate s':>11} "
            f"{'ratio':>6}  {'animate stages (s)':<60}")
    print(head)
    print("-" * len(head))
    for r in sorted(rows, key=lambda r: (r["seconds"] != 4.0, r["vertices"], r["seconds"])):
        st = r["stages"]
        stages = ", ".join(f"{k} {st[k]:.2f}" for k in ("load", "encode", "fit", "integrate",
                                                         "decode", "export") if k in st)
        print(f"{r['vertices']:>9,} {r['seconds']:>8g} {r['animate_s']:>10.2f} "
              f"{r['simulate_s']:>11.2f} {r['ratio']:>5.1f}x  {stages}")
    if fit is not None:
        print(f"fit --then-animate of a {fit['frames']}-frame clip (10k sphere): "
              f"{fit['wall_s']:.1f} s")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    result = {"benchmark": "animate", "space": args.space, "repeat": args.repeat, "rows": rows,
              "fit": fit,
              "cpus": os.cpu_count()}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
