"""Frame times of the web page (`-o clip.html`) as it plays, in headless Chromium.

    python benchmarks/bench_page.py [--sizes 10000 100000] [--seconds 3] [--json out.json]

For UV spheres of about each size (dropped, `neurok animate`'s defaults), the page is written,
opened from file:// and played for ``--seconds`` while `tools/page_frames.mjs` records the
intervals between requestAnimationFrame callbacks at 800 x 600. Chromium here draws with
SwiftShader, its software renderer, on the CPU (2 cores): a machine with a GPU gives its own
figures. Prints a table (median and 95th percentile frame time, frames per second, the
page's size), writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_animate import sphere  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            src, page = Path(tmp) / f"sphere{n}.obj", Path(tmp) / f"sphere{n}.html"
            vertices = sphere(src, n)
            subprocess.run([sys.executable, "-m", "neurok_cli", "animate", str(src), "-o",
                            str(page)], check=True, capture_output=True)
            proc = subprocess.run(["node", str(ROOT / "tools" / "page_frames.mjs"), str(page),
                                   str(args.seconds)], check=True, capture_output=True,
                                  text=True)
            ms = json.loads(proc.stdout)["intervals_ms"]
            rows.append({"vertices": vertices, "page_mb": page.stat().st_size / 1e6,
                         "frames": len(ms), "median_ms": statistics.median(ms),
                         "p95_ms": float(np.percentile(ms, 95)),
                         "fps": 1000.0 / statistics.median(ms)})
            r = rows[-1]
            print(f"{vertices:>8,} vertices: page {r['page_mb']:.2f} MB, {r['frames']} frames, "
                  f"median {r['median_ms']:.1f} ms ({r['fps']:.1f} fps), 95th percentile "
                  f"{r['p95_ms']:.1f} ms", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "page", "renderer": "SwiftShader",
                                         "seconds": args.seconds, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
