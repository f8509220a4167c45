"""Animated-glTF export: time, size, morph targets and error, exact vs compact.

    python benchmarks/bench_export.py [--frames 120] [--large] [--json out.json]

Each shared asset (../shared/assets) and a 10k-vertex procedural cloth get a smooth synthetic
motion of ``--frames`` frames; both encodings are written, read back and compared. ``--large``
adds a 100k-vertex cloth: the writer's cost per vertex (basis search, normals) shows there.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.io.asset import Asset, Part
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.gltf.read import read_animated
from neurok_cli.io.gltf.write import write_animated
from neurok_cli.io.mesh import load_mesh

SHARED = Path(__file__).resolve().parents[2] / "shared" / "assets"
FILES = ["penguin.obj", "spot/spot_triangulated.obj", "chair_model.obj", "teapot.stl",
         "CesiumMilkTruck.glb", "mountain.obj"]


def cloth(n: int = 100) -> Asset:
    """A 1 m square sheet of n x n vertices."""
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    rest = np.stack([u, np.zeros_like(u), v], -1).reshape(-1, 3)
    q = np.arange(n * n).reshape(n, n)[:-1, :-1].reshape(-1)
    faces = np.concatenate([np.stack([q, q + 1, q + n + 1], 1),
                            np.stack([q, q + n + 1, q + n], 1)])
    return Asset(path=Path("cloth.obj"), format="obj", parts=[Part("cloth", rest, faces)])


def motion(vertices: np.ndarray, frames: int) -> np.ndarray:
    """A travelling wave plus a narrow bump sweeping across the object: a motion that is far
    from low-rank (the bump alone needs many basis shapes)."""
    v = vertices
    ext = np.ptp(v, axis=0).max()
    rel = (v - v.min(axis=0)) / ext
    t = np.arange(frames)[:, None] / 30.0
    out = np.repeat(v[None], frames, axis=0)
    out[..., 1] += ext * 0.04 * np.sin(2 * np.pi * (t - rel[None, :, 0]))
    centre = np.linspace(-0.2, 1.2, frames)[:, None]
    out[..., 1] += ext * 0.03 * np.exp(-((rel[None, :, 2] - centre) ** 2) / 0.01)
    return out


def run(frames: int, large: bool = False) -> list[dict]:
    assets = [("cloth 100x100", cloth())] + ([("cloth 317x317", cloth(317))] if large else [])
    assets += [(f, load_mesh(SHARED / f)) for f in FILES if (SHARED / f).is_file()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, asset in assets:
            m = motion(asset.vertices, frames)
            diag = float(np.linalg.norm(np.ptp(asset.vertices, axis=0)))
            for enc in ("exact", "compact"):
                path = Path(tmp) / f"x_{enc}.glb"
                t0 = time.perf_counter()
                rep = write_animated(asset, [m], path, fps=30, encoding=enc)
                t_write = time.perf_counter() - t0
                ours = len(load_document(path).gltf.animations) - 1
                t0 = time.perf_counter()
                back = read_animated(path, animations=[ours]).frames
                t_read = time.perf_counter() - t0
                err = float(np.linalg.norm(back - m, axis=-1).max() / diag)
                rows.append({"asset": name, "vertices": len(asset.vertices), "frames": frames,
                             "encoding": enc, "targets": rep.targets, "mb": rep.bytes / 1e6,
                             "write_s": t_write, "read_s": t_read, "max_err_rel_diag": err})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--large", action="store_true", help="add a 100k-vertex cloth")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = run(args.frames, args.large)
    head = f"{'asset':28} {'verts':>7} {'enc':>8} {'targets':>7} {'MB':>7} {'write s':>8} " \
           f"{'read s':>7} {'max err/diag':>12}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['asset']:28} {r['vertices']:7d} {r['encoding']:>8} {r['targets']:7d} "
              f"{r['mb']:7.2f} {r['write_s']:8.2f} {r['read_s']:7.2f} "
              f"{r['max_err_rel_diag']:12.2e}")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "export", "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
