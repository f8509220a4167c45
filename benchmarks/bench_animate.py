"""Speed of `neurok animate` (latent dynamics) against `neurok simulate` (full-order MuJoCo).

    python benchmarks/bench_animate.py [--quick] [--json out.json] [--weights neurok-base]

Every figure is a whole command line run as a user runs it (a fresh process: start-up,
loading, encoding, integration, decoding and writing a GLB), timed from outside.

1. A 10k-vertex sphere (soft, dropped), 4 s at 30 fps: animate vs simulate, and the ratio.
2. Vertex count: spheres of ~1k, 10k and 100k vertices, 4 s (animate; simulate at 1k, 10k).
3. Duration: the 10k sphere for 1, 4, 15 and 60 s (animate).

``--quick`` drops the 100k asset and the 60 s run. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
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


def animate(src: Path, seconds: float, out: Path, weights: str) -> dict:
    wall, rep = timed(["animate", str(src), "-o", str(out), "--seconds", str(seconds),
                       "--material", "soft", "--weights", weights])
    return {"command": "animate", "wall_s": wall, "integrate_s": rep["timings"]["integrate"],
            "steps": rep["steps"], "drift": rep["energy"]["drift"]}


def simulate(src: Path, seconds: float, out: Path) -> dict:
    wall, rep = timed(["simulate", str(src), "-o", str(out), "--seconds", str(seconds),
                       "--material", "soft"])
    return {"command": "simulate", "wall_s": wall, "engine_s": rep["sim_wall_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--weights", default="neurok-base")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sizes = [1_000, 10_000] + ([] if args.quick else [100_000])
        spheres, counts = {}, {}
        for n in sizes:
            spheres[n] = tmp / f"sphere{n}.obj"
            count = counts[n] = sphere(spheres[n], n)
            row = {"vertices": count, "seconds": 4.0, **animate(spheres[n], 4.0, tmp / "a.glb",
                                                                args.weights)}
            rows.append(row)
            if n <= 10_000:
                sim = {"vertices": count, "seconds": 4.0, **simulate(spheres[n], 4.0,
                                                                       tmp / "s.glb")}
                sim["ratio"] = sim["wall_s"] / row["wall_s"]
                rows.append(sim)
        for seconds in [1.0, 15.0] + ([] if args.quick else [60.0]):
            rows.append({"vertices": counts[10_000], "seconds": seconds,
                         **animate(spheres[10_000], seconds, tmp / "a.glb", args.weights)})
    head = f"{'command':<9} {'vertices':>9} {'seconds':>8} {'wall s':>8} {'detail':>30}"
    print(head)
    print("-" * len(head))
    for r in rows:
        if r["command"] == "animate":
            detail = f"integrate {r['integrate_s']:.2f} s, {r['steps']} steps"
        else:
            detail = f"engine {r['engine_s']:.2f} s, {r['ratio']:.1f}x animate"
        print(f"{r['command']:<9} {r['vertices']:>9,} {r['seconds']:>8g} {r['wall_s']:>8.2f} "
              f"{detail:>30}")
    result = {"benchmark": "animate", "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
