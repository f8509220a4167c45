"""Preview rendering and encoding speed: a ~20k-triangle deforming mesh at 640x480.

Usage: python benchmarks/bench_preview.py [--frames 120] [--numpy-frames 12] [--json out.json]

Times ``render_frames`` per backend (gl on every frame; numpy, being slower, on fewer frames
and reported per frame), then the MP4 and GIF encodes of the rendered frames. The target is
120 GL frames in <= 10 s on a 2-core CPU with Mesa llvmpipe.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import trimesh

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from neurok_cli.render import renderer as render
from neurok_cli.render.renderer import Camera, RenderPart, available_backends, render_frames
from neurok_cli.render.video import write_video


def deforming_sphere(n_frames: int) -> tuple[np.ndarray, np.ndarray]:
    """A bouncing, wobbling icosphere: faces (20480, 3) and positions (T, 10242, 3)."""
    mesh = trimesh.creation.icosphere(subdivisions=5)
    v = np.asarray(mesh.vertices, np.float32)
    t = np.linspace(0.0, 2.0, n_frames, dtype=np.float32)[:, None, None]  # seconds
    wobble = 1.0 + 0.12 * np.sin(4.0 * v[None, :, 1:2] + 6.0 * t) * np.cos(3.0 * v[None, :, :1])
    height = 1.0 + 1.5 * np.abs(np.cos(np.pi * t))  # bounces on the floor
    pos = v[None] * wobble + np.concatenate([0.3 * t, height, 0.0 * t], axis=2)
    return np.asarray(mesh.faces, np.int32), pos.astype(np.float32)


def time_render(faces: np.ndarray, pos: np.ndarray, backend: str) -> dict:
    """Seconds for the first frame (set-up included) and for all frames."""
    start = time.perf_counter()
    frames = render_frames([RenderPart(faces)], [pos], Camera(640, 480), backend=backend)
    out = [next(frames)]
    first = time.perf_counter() - start
    out.extend(frames)
    total = time.perf_counter() - start
    return {"frames": len(out), "first_s": first, "total_s": total,
            "per_frame_ms": 1e3 * total / len(out), "images": out}


def time_encode(images: list[np.ndarray], suffix: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"bench{suffix}"
        start = time.perf_counter()
        n = write_video(images, path, fps=30)
        total = time.perf_counter() - start
        size = path.stat().st_size
    return {"frames": n, "total_s": total, "per_frame_ms": 1e3 * total / n, "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--numpy-frames", type=int, default=12)
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here")
    args = parser.parse_args()

    faces, pos = deforming_sphere(args.frames)
    backends = available_backends()
    info = {"triangles": len(faces), "vertices": pos.shape[1], "size": [640, 480],
            "cpus": os.cpu_count(), "python": platform.python_version(), "backends": backends}
    if "gl" in backends:
        info["gl_renderer"] = render._gl_state().ctx.info["GL_RENDERER"]
    results: dict[str, dict] = {}
    if "gl" in backends:
        results["render_gl"] = time_render(faces, pos, "gl")
    results["render_numpy"] = time_render(faces, pos[: args.numpy_frames], "numpy")
    images = (results.get("render_gl") or results["render_numpy"])["images"]
    results["encode_mp4"] = time_encode(images, ".mp4")
    results["encode_gif"] = time_encode(images, ".gif")

    print(f"{info['triangles']} triangles, {info['vertices']} vertices, 640x480, "
          f"{info['cpus']} CPUs, {info.get('gl_renderer', 'no GL')}")
    print(f"{'step':<14}{'frames':>8}{'total s':>10}{'ms/frame':>10}{'first s':>9}")
    for name, r in results.items():
        first = f"{r['first_s']:.2f}" if "first_s" in r else "-"
        print(f"{name:<14}{r['frames']:>8}{r['total_s']:>10.2f}{r['per_frame_ms']:>10.1f}"
              f"{first:>9}")
    if "render_gl" in results:
        ok = results["render_gl"]["total_s"] * 120 / results["render_gl"]["frames"] <= 10.0
        print(f"target 120 GL frames <= 10 s: {'met' if ok else 'MISSED'}")
    if args.json:
        clean = {k: {m: x for m, x in r.items() if m != "images"} for k, r in results.items()}
        args.json.write_text(json.dumps({"info": info, "results": clean}, indent=2) + "\n")


if __name__ == "__main__":
    main()
