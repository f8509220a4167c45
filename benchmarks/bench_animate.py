"""Speed of `neurok animate` against `neurok simulate`, cold and warm, stage by stage.

    python benchmarks/bench_animate.py [--repeat 3] [--json out.json] [--assets blob ...]
        [--durations]

Every figure is a whole command line run as a user runs it (a fresh process: start-up,
loading, the shape space, integration and writing a GLB), timed from outside, with each
command's defaults (a soft drop of 4 s at 30 fps). For each asset, ``--repeat`` rounds, each
in turns:

- **cold**: `animate` as the first run after installing, on a mesh never seen: numba's
  compiled code and the shape-space cache in new, empty folders (``NUMBA_CACHE_DIR``,
  ``NEUROK_CACHE``);
- **warm**: `animate` again on the same mesh, both caches filled (by an untimed run first);
- **simulate**: `neurok simulate` of the same file.

Medians are compared; the stages come from the runs' ``--json`` timings (median of each).
Assets: the blob (``examples/blob.obj``), the penguin (``../shared/assets``; skipped
without it) and UV spheres of about 10k and 100k vertices. Also timed (median of 5):
`neurok --help` and an option error (a missing file). ``--durations`` adds the 10k
sphere's 1, 15 and 60 s drops (warm, against simulate, one round). The machine's load
average is recorded beside the figures. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trimesh

ROOT = Path(__file__).resolve().parents[1]
FILES = {"blob": ROOT / "examples" / "blob.obj",
         "penguin": ROOT.parent / "shared" / "assets" / "penguin.obj"}
SPHERES = {"sphere10k": 10_000, "sphere100k": 100_000}
STAGES = ("load", "fit", "integrate", "export")


def sphere(path: Path, vertices: int) -> int:
    """A UV sphere of radius 0.25 m with about ``vertices`` vertices; returns the count."""
    n = max(int(round((vertices / 2) ** 0.5)), 4)
    mesh = trimesh.creation.uv_sphere(radius=0.25, count=[n, 2 * n])
    # the vertex count is not n x 2n (seams, poles): correct n once by the measured count
    n = max(int(round(n * (vertices / len(mesh.vertices)) ** 0.5)), 4)
    mesh = trimesh.creation.uv_sphere(radius=0.25, count=[n, 2 * n])
    mesh.export(path)
    return len(mesh.vertices)


def timed(args: list[str], env: dict | None = None, report: bool = True
          ) -> tuple[float, dict]:
    """Wall seconds of ``neurok ARGS`` in a fresh process, and its ``--json`` report."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", *args,
                           *(["--json"] if report else [])],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if report and proc.returncode != 0:
        raise SystemExit(f"failed: neurok {' '.join(args)}\n{proc.stderr}")
    return wall, json.loads(proc.stdout) if report else {}


def caches(folder: Path) -> dict:
    """The environment that puts both caches in ``folder`` (made empty)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"NUMBA_CACHE_DIR": str(folder / "numba"), "NEUROK_CACHE": str(folder / "neurok")}


def summary(runs: list[tuple[float, dict]]) -> dict:
    walls = [w for w, _ in runs]
    out = {"wall_s": statistics.median(walls), "runs": walls}
    if runs[0][1].get("timings"):
        out["stages"] = {k: statistics.median(r["timings"][k] for _, r in runs)
                         for k in STAGES}
    return out


def measure(name: str, src: Path, vertices: int, tmp: Path, repeat: int,
            seconds: float = 4.0) -> dict:
    """Cold and warm animate and simulate of ``src``, in turns, ``repeat`` rounds."""
    warm_env = caches(tmp / f"warm_{name}")
    args = [str(src), "--seconds", f"{seconds:g}"]
    timed(["animate", *args, "-o", str(tmp / "a.glb")], warm_env)  # fills the warm caches
    cold, warm, sim = [], [], []
    for i in range(repeat):
        cold_env = caches(Path(tempfile.mkdtemp(dir=tmp, prefix=f"cold_{name}_{i}_")))
        cold.append(timed(["animate", *args, "-o", str(tmp / "c.glb")], cold_env))
        warm.append(timed(["animate", *args, "-o", str(tmp / "a.glb")], warm_env))
        sim.append(timed(["simulate", *args, "-o", str(tmp / "s.glb")]))
    row = {"asset": name, "vertices": vertices, "seconds": seconds, "cold": summary(cold),
           "warm": summary(warm), "simulate": summary(sim), "load": os.getloadavg()[0]}
    row["ratio_warm"] = row["simulate"]["wall_s"] / row["warm"]["wall_s"]
    row["ratio_cold"] = row["simulate"]["wall_s"] / row["cold"]["wall_s"]
    return row


def start_up(tmp: Path) -> dict:
    """Medians of 5: `neurok --help` and a missing file's one-line error."""
    helps = [timed(["--help"], report=False)[0] for _ in range(5)]
    errors = [timed(["animate", str(tmp / "missing.obj")], report=False)[0] for _ in range(5)]
    return {"help_s": statistics.median(helps), "error_s": statistics.median(errors)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", nargs="+", default=[*FILES, *SPHERES],
                    choices=[*FILES, *SPHERES])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--durations", action="store_true",
                    help="also the 10k sphere's 1, 15 and 60 s drops (warm, one round)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows, durations = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        first = start_up(tmp)
        for name in args.assets:
            if name in SPHERES:
                src = tmp / f"{name}.obj"
                vertices = sphere(src, SPHERES[name])
            else:
                src = FILES[name]
                if not src.is_file():
                    print(f"{name}: {src} not found, skipped", file=sys.stderr)
                    continue
                vertices = len(trimesh.load_mesh(src, process=False).vertices)
            rows.append(measure(name, src, vertices, tmp, args.repeat))
            print(_line(rows[-1]), flush=True)
            if name == "sphere10k" and args.durations:
                durations += [measure(name, src, vertices, tmp, 1, s) for s in (1.0, 15.0, 60.0)]
    print(f"\n{'asset':11} {'vertices':>8} {'cold s':>7} {'warm s':>7} {'simulate s':>10} "
          f"{'sim/warm':>8}  warm stages (s)")
    for r in rows + durations:
        print(_line(r))
    print(f"neurok --help {first['help_s']:.2f} s, an option error {first['error_s']:.2f} s; "
          f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({
            "benchmark": "animate", "repeat": args.repeat, "rows": rows,
            "durations": durations, "start_up": first, "cpus": os.cpu_count(),
            "date": datetime.datetime.now().isoformat(timespec="minutes")}, indent=1) + "\n")


def _line(r: dict) -> str:
    stages = ", ".join(f"{k} {r['warm']['stages'][k]:.2f}" for k in STAGES)
    name = r["asset"] + (f" {r['seconds']:g} s" if r["seconds"] != 4.0 else "")
    return (f"{name:11} {r['vertices']:>8,} {r['cold']['wall_s']:>7.2f} "
            f"{r['warm']['wall_s']:>7.2f} {r['simulate']['wall_s']:>10.2f} "
            f"{r['ratio_warm']:>7.1f}x  {stages}")


if __name__ == "__main__":
    main()
