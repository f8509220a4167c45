"""Cloth in the written files: stretch, intersections and speed against the engine.

For each case, ``neurok animate`` writes a clip; its frames are read back from the file and
measured on the cloth's own edges (those that move: a flag's pole is not cloth):

- stretch per frame: the mean and the 99th percentile of |l / l0 - 1| over the edges, and the
  largest of each over the clip;
- intersections: ipctk's ``has_intersections`` on every frame's cloth triangles;
- speed: the whole ``neurok animate`` command beside ``neurok simulate`` of the same job, in
  turns, warm, the median of ``--repeat`` runs each, and the clip's own integration time (the
  ``--json`` report's) against the clip's length.

Cases: the flag (defaults), the mountain under ``--material cloth --preset flutter --seconds 3``,
a silk strip dropped in a heap (80 x 8 vertices over 2 x 0.2 m, each raised to 0.3 sin 3x) and a
silk sheet (1 m, 40 x 40 vertices) dropped with a spin.

    python benchmarks/bench_cloth.py [--cases flag mountain strip sheet] [--engine]
        [--repeat 3] [--json FILE] [--sheets DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from neurok_cli.io.gltf import read_animated  # noqa: E402
from neurok_cli.io.gltf.anim import first_of_ours  # noqa: E402
from neurok_cli.io.gltf.doc import load_document  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"


def grid_obj(path: Path, cols: int, rows: int, width: float, depth: float,
             wave: float = 0.0) -> Path:
    """A sheet of ``cols`` x ``rows`` vertices over x in [0, width], z in [0, depth], each
    raised to y = ``wave`` sin(3x), triangulated as a grid (OBJ)."""
    x, z = np.meshgrid(np.linspace(0, width, cols), np.linspace(0, depth, rows), indexing="ij")
    y = wave * np.sin(3 * x)
    lines = [f"v {a:.6f} {b:.6f} {c:.6f}" for a, b, c in zip(x.ravel(), y.ravel(), z.ravel())]
    for i in range(cols - 1):
        for j in range(rows - 1):
            a, b = i * rows + j + 1, i * rows + j + 2
            c, d = (i + 1) * rows + j + 1, (i + 1) * rows + j + 2
            lines += [f"f {a} {b} {c}", f"f {b} {d} {c}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def cases(tmp: Path) -> dict[str, tuple[Path, list[str]]]:
    strip = grid_obj(tmp / "strip.obj", 80, 8, 2.0, 0.2, wave=0.3)
    sheet = grid_obj(tmp / "sheet.obj", 40, 40, 1.0, 1.0)
    return {
        "flag": (ROOT / "examples" / "flag.glb", []),
        "mountain": (SHARED / "mountain.obj", ["--material", "cloth", "--preset", "flutter",
                                                "--seconds", "3"]),
        "strip": (strip, ["--material", "silk", "--preset", "drop", "--size", "2", "--drop",
                          "1", "--seconds", "3"]),
        "sheet": (sheet, ["--material", "silk", "--preset", "drop", "--size", "1", "--drop",
                          "1", "--spin", "1,3,0", "--seconds", "3"]),
    }


def frames_of(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(T, N, 3) frames of the first animation neurok wrote in ``path``, and its faces."""
    scene = read_animated(path, fps=None, animations=[first_of_ours(load_document(path))])
    return scene.frames.astype(np.float64), np.asarray(scene.faces)


def cloth_faces(frames: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The triangles whose corners all move over the clip (not a fixed pole's)."""
    moves = np.ptp(frames, axis=0).max(axis=1) > 1e-9
    return faces[moves[faces].all(axis=1)]


def stretch(frames: np.ndarray, faces: np.ndarray) -> dict:
    """Per frame, the mean and the 99th percentile of |l / l0 - 1| over the edges of
    ``faces``; the largest of each over the clip."""
    e = np.unique(np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]],
                                          faces[:, [2, 0]]]), axis=1), axis=0)
    l0 = np.linalg.norm(frames[0, e[:, 0]] - frames[0, e[:, 1]], axis=1)
    e, l0 = e[l0 > 1e-12], l0[l0 > 1e-12]
    s = np.abs(np.linalg.norm(frames[:, e[:, 0]] - frames[:, e[:, 1]], axis=2) / l0 - 1)
    return {"mean_max": float(s.mean(axis=1).max()),
            "p99_max": float(np.percentile(s, 99, axis=1).max()),
            "mean_clip": float(s.mean())}


def intersecting(frames: np.ndarray, faces: np.ndarray) -> list[int]:
    """The frames whose triangles intersect one another (ipctk)."""
    import ipctk

    f = np.asfortranarray(faces, np.int32)
    mesh = ipctk.CollisionMesh(np.asfortranarray(frames[0]),
                               np.asfortranarray(ipctk.edges(f), np.int32), f)
    return [i for i, x in enumerate(frames) if ipctk.has_intersections(mesh,
                                                                        np.asfortranarray(x))]


def run(cmd: list[str]) -> tuple[float, dict | None]:
    """Wall seconds of ``cmd`` and its JSON report (when it prints one)."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr.strip().splitlines()[-1]}")
    try:
        return wall, json.loads(out.stdout)
    except json.JSONDecodeError:
        return wall, None


def measure(name: str, src: Path, args: list[str], tmp: Path, engine: bool, repeat: int,
            clips: dict | None = None) -> dict:
    """One case's row (see the module's docstring); ``clips``: gets the case's frames and
    faces, animate's and (with ``engine``) simulate's, for a contact sheet."""
    neurok = [sys.executable, "-m", "neurok_cli"]
    out = tmp / f"{name}.glb"
    animate = [*neurok, "animate", str(src), *args, "-o", str(out), "--json"]
    simulate = [*neurok, "simulate", str(src), *args, "-o", str(tmp / f"{name}-engine.glb")]
    times: dict[str, list[float]] = {"animate": [], "simulate": []}
    report = None
    for _ in range(repeat):
        wall, report = run(animate)
        times["animate"].append(wall)
        if engine:
            times["simulate"].append(run(simulate)[0])
    frames, faces = frames_of(out)
    cloth = cloth_faces(frames, faces)
    seconds = (len(frames) - 1) / float(report["fps"])
    row = {"case": name, "args": " ".join(args), "frames": len(frames),
           "vertices": int(report["vertices"]), **stretch(frames, cloth),
           "intersecting": len(intersecting(frames, cloth)),
           "integrate_s": float(report["timings"]["integrate"]), "clip_s": seconds,
           "animate_s": statistics.median(times["animate"])}
    if engine:
        row["simulate_s"] = statistics.median(times["simulate"])
        row["speedup"] = row["simulate_s"] / row["animate_s"]
    if clips is not None:
        clips[name] = {"animate": (frames, faces)}
        if engine:
            clips[name]["engine"] = frames_of(tmp / f"{name}-engine.glb")
    return row


def table(rows: list[dict]) -> str:
    out = ["| case | frames | mean strain (worst frame) | p99 strain (worst frame) | "
           "intersecting frames | integrate / clip s | animate s | simulate s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sim = f"{r['simulate_s']:.1f} ({r['speedup']:.1f}x)" if "simulate_s" in r else "-"
        out.append(f"| {r['case']} | {r['frames']} | {r['mean_max']:.4f} | {r['p99_max']:.4f} "
                   f"| {r['intersecting']} | {r['integrate_s']:.2f} / {r['clip_s']:.1f} | "
                   f"{r['animate_s']:.1f} | {sim} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["flag", "mountain", "strip", "sheet"])
    ap.add_argument("--engine", action="store_true", help="time neurok simulate beside")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--sheets", type=Path, default=None, metavar="DIR",
                    help="write each case's contact sheet (four frames of animate's clip, "
                         "then four of the engine's) here, as CASE.png (needs --engine)")
    a = ap.parse_args()
    clips: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        known = cases(tmp)
        rows = [measure(c, *known[c], tmp, a.engine, a.repeat, clips) for c in a.cases]
    if a.sheets and a.engine:
        from plausibility import contact_sheet

        a.sheets.mkdir(parents=True, exist_ok=True)
        for name, pair in clips.items():
            contact_sheet([(name, pair)], a.sheets / f"{name}.png", width=320)
    print(table(rows))
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "date": time.strftime("%Y-%m-%d")},
                                     indent=1) + "\n")


if __name__ == "__main__":
    main()
