"""Encodings of the shared assets' default clips: bones at 16/32/64 joints and the default,
against morph targets, for error, size and time.

    python benchmarks/bench_bones.py [--assets penguin spot ...] [--json out.json]

Each asset's default `neurok animate` clip (4 s at 30 fps) is written exactly (one morph
target a frame, ``--encoding exact``); that file is then re-encoded by `neurok convert` as
bones (``--bones 16/32/64`` and the default) and as compact morph targets, and each result
is played back (``read_animated``) against the exact clip: the mean and largest vertex
error over all frames as a fraction of the bounding-box diagonal, the file's size and the
encoding's time. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.deform.animate import AnimateConfig, animate
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.gltf.convert import convert_animated
from neurok_cli.render.export import ExportOptions

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"
SOURCES = {"penguin": ASSETS / "penguin.obj", "spot": ASSETS / "spot" / "spot_triangulated.obj",
           "capsule": ASSETS / "capsule" / "capsule.obj", "teapot": ASSETS / "teapot.stl",
           "chair": ASSETS / "chair_model.obj", "mountain": ASSETS / "mountain.obj",
           "truck": ASSETS / "CesiumMilkTruck.glb", "flag": ROOT / "examples" / "flag.glb",
           "blob": ROOT / "examples" / "blob.obj"}
SETTINGS = [("bones", 16), ("bones", 32), ("bones", 64), ("bones", None), ("compact", None)]


def measure(name: str, folder: Path) -> list[dict]:
    exact = folder / f"{name}_exact.glb"
    animate(AnimateConfig(input=SOURCES[name], output=exact,
                          export=ExportOptions(encoding="exact")))
    clip = read_animated(exact, fps=30, animations=[0]).frames
    diag = float(np.linalg.norm(np.ptp(clip[0], axis=0)))
    rows = [{"asset": name, "encoding": "exact", "bones": None, "mean": 0.0, "max": 0.0,
             "mb": exact.stat().st_size / 1e6, "seconds": None}]
    for encoding, bones in SETTINGS:
        out = folder / f"{name}_{encoding}_{bones}.glb"
        t = time.perf_counter()
        rep = convert_animated(exact, out, encoding=encoding, bones=bones)
        took = time.perf_counter() - t
        played = read_animated(out, fps=30, animations=[0]).frames[:len(clip)]
        err = np.linalg.norm(played - clip, axis=2) / diag
        rows.append({"asset": name, "encoding": encoding,
                     "bones": rep.bones if encoding == "bones" else None,
                     "asked": bones, "targets": rep.targets, "mean": float(err.mean()),
                     "max": float(err.max()), "mb": out.stat().st_size / 1e6,
                     "seconds": took})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    print(f"{'asset':9} {'encoding':16} {'mean %':>8} {'max %':>7} {'MB':>7} {'x exact':>8} "
          f"{'s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.assets:
            if not SOURCES[name].is_file():
                print(f"{name}: {SOURCES[name]} not found, skipped", file=sys.stderr)
                continue
            got = measure(name, Path(tmp))
            for r in got:
                label = r["encoding"] + (f" {r['bones']}" + ("" if r.get("asked") else " (default)")
                                         if r["encoding"] == "bones" else
                                         f" {r['targets']}" if r["encoding"] == "compact" else "")
                secs = f"{r['seconds']:6.1f}" if r["seconds"] is not None else "     -"
                print(f"{name:9} {label:16} {100 * r['mean']:8.3f} {100 * r['max']:7.2f} "
                      f"{r['mb']:7.2f} {r['mb'] / got[0]['mb']:8.3f} {secs}", flush=True)
            rows += got
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
