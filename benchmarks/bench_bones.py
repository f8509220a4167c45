"""Encodings of the shared assets' default clips: bones at 16/32/64 joints and the default,
against morph targets, each also meshopt-compressed, for error, size and time.

    python benchmarks/bench_bones.py [--assets penguin spot ...] [--json out.json]

Each asset's default `neurok animate` clip (4 s at 30 fps) is written exactly (one morph
target a frame, ``--encoding exact``); that file is then re-encoded by `neurok convert` as
bones (``--bones 16/32/64`` and the default) and as compact morph targets, the defaults and
the exact clip also with ``--meshopt``, and each result is played back (``read_animated``)
against the exact clip: the mean and largest vertex error over all frames as a fraction of
the bounding-box diagonal, the file's size and the encoding's time. For reference,
gltfpack (``tools/node_modules``; ``-cc -af 0``: meshopt with its quantization, the clip's
keys kept) compresses the exact and compact files where it is installed. Prints a table,
writes JSON.
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
from scipy.spatial import cKDTree

from neurok_cli.deform.animate import AnimateConfig, animate
from neurok_cli.errors import InputError
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
SETTINGS = [("bones", 16, False), ("bones", 32, False), ("bones", 64, False),
            ("bones", None, False), ("compact", None, False), ("exact", None, True),
            ("compact", None, True), ("bones", None, True)]
GLTFPACK = ROOT / "tools" / "node_modules" / ".bin" / "gltfpack"


def measure(name: str, folder: Path) -> list[dict]:
    exact = folder / f"{name}_exact.glb"
    animate(AnimateConfig(input=SOURCES[name], output=exact,
                          export=ExportOptions(encoding="exact")))
    clip = read_animated(exact, fps=30, animations=[0]).frames
    diag = float(np.linalg.norm(np.ptp(clip[0], axis=0)))
    rows = [{"asset": name, "encoding": "exact", "bones": None, "mean": 0.0, "max": 0.0,
             "mb": exact.stat().st_size / 1e6, "seconds": None, "meshopt": False}]
    for encoding, bones, meshopt in SETTINGS:
        out = folder / f"{name}_{encoding}_{bones}_{meshopt}.glb"
        t = time.perf_counter()
        rep = convert_animated(exact, out, encoding=encoding, bones=bones, meshopt=meshopt)
        took = time.perf_counter() - t
        rows.append({"asset": name, "encoding": encoding,
                     "bones": rep.bones if encoding == "bones" else None, "asked": bones,
                     "targets": rep.targets, "meshopt": meshopt, "seconds": took,
                     **_played(out, clip, diag)})
        if GLTFPACK.is_file() and encoding == "compact" and not meshopt:
            rows += [_gltfpack(name, "exact", exact, clip, diag, folder, 0),
                     _gltfpack(name, "compact", out, clip, diag, folder, rep.targets)]
    return rows


def _gltfpack(name: str, encoding: str, source: Path, clip: np.ndarray, diag: float,
              folder: Path, targets: int) -> dict:
    packed = folder / f"{name}_{encoding}_gltfpack.glb"
    t = time.perf_counter()
    subprocess.run([str(GLTFPACK), "-i", str(source), "-o", str(packed), "-cc", "-af", "0"],
                   check=True, capture_output=True)
    row = {"asset": name, "encoding": encoding, "bones": None, "targets": targets,
           "meshopt": "gltfpack", "seconds": time.perf_counter() - t,
           "mean": None, "max": None, "mb": packed.stat().st_size / 1e6}
    try:
        row.update(_played(packed, clip, diag, reordered=True))
    except InputError as e:  # the chair's: weight tracks on meshes it left without targets
        row["invalid"] = str(e).split(": ", 1)[1]
    return row


def _played(path: Path, clip: np.ndarray, diag: float, reordered: bool = False) -> dict:
    """Error against the clip; ``reordered``: the file's vertices are in another order
    (gltfpack's), each matched to the clip's vertex whose whole path is nearest."""
    played = read_animated(path, fps=30, animations=[0]).frames[:len(clip)]
    if reordered:
        paths = lambda x: x.transpose(1, 0, 2).reshape(x.shape[1], -1)  # noqa: E731
        _, nearest = cKDTree(paths(played)).query(paths(clip))
        played = played[:, nearest]
    err = np.linalg.norm(played - clip, axis=2) / diag
    return {"mean": float(err.mean()), "max": float(err.max()), "mb": path.stat().st_size / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    print(f"{'asset':9} {'encoding':26} {'mean %':>8} {'max %':>7} {'MB':>7} {'x exact':>8} "
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
                label += {True: " meshopt", "gltfpack": " gltfpack"}.get(r["meshopt"], "")
                secs = f"{r['seconds']:6.1f}" if r["seconds"] is not None else "     -"
                if r["mean"] is None:
                    print(f"{name:9} {label:26} {'invalid glTF: ' + r['invalid'][:60]}")
                    continue
                print(f"{name:9} {label:26} {100 * r['mean']:8.3f} {100 * r['max']:7.2f} "
                      f"{r['mb']:7.2f} {r['mb'] / got[0]['mb']:8.3f} {secs}", flush=True)
            rows += got
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
