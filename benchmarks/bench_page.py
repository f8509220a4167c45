"""Frame times of the web page (`-o clip.html`) as it plays, in headless Chromium.

    python benchmarks/bench_page.py [--sizes 10000 100000] [--seconds 3] [--json out.json]

For UV spheres of about each size (dropped, `neurok animate`'s defaults) and the example
flag (its flutter), the page is written, opened from file:// and played for ``--seconds``
while `tools/page_frames.mjs` records the intervals between requestAnimationFrame callbacks
at 800 x 600: the clip as it plays, then the object live (stepped by the page itself from the
clip's end; its rate is the motion's seconds a second, 1 where it keeps up). Chromium here
draws with SwiftShader, its software renderer, on the CPU (2 cores): a machine with a GPU
gives its own figures. The page's steps alone are timed in node too (2 s from the clip's
start, as the live page keeps its factors; `tools/reduced_run.mjs`, which steps a cloth's
model, the flag's, with the cloth's own steps, render/web/cloth.js): milliseconds a step and
the motion's rate without drawing. Prints a table (median and 95th percentile frame time,
frames per second, the page's size), writes JSON.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import statistics
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_animate import sphere  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from neurok_cli.io.reduced import unpack  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--no-flag", action="store_true", help="leave out the example flag")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sources = []
        for n in args.sizes:
            src = Path(tmp) / f"sphere{n}.obj"
            sources.append((f"sphere {sphere(src, n):,}", src))
        if not args.no_flag:
            sources.append(("flag", ROOT / "examples" / "flag.glb"))
        for name, src in sources:
            page = Path(tmp) / f"{src.stem}.html"
            subprocess.run([sys.executable, "-m", "neurok_cli", "animate", str(src), "-o",
                            str(page)], check=True, capture_output=True)
            model = Path(tmp) / f"{src.stem}.model"
            model.write_bytes(zlib.decompress(base64.b64decode(re.search(
                r'id="neurok-live">([^<]*)<', page.read_text()).group(1))))
            kind = unpack(model.read_bytes()).values.get("kind", "handles")
            name = f"{name} ({kind})"
            alone = json.loads(subprocess.run(
                ["node", str(ROOT / "tools" / "reduced_run.mjs"), str(model), "2",
                 str(Path(tmp) / "frames.bin"), "8"], check=True, capture_output=True,
                text=True).stdout)
            step_ms = alone["step_s"] * 1000
            print(f"{name:>24} steps in node: {alone['step_ms']:.1f} ms a step of "
                  f"{step_ms:.1f} ms, motion {step_ms / alone['step_ms']:.2f}x life", flush=True)
            for mode in ("clip", "live"):
                proc = subprocess.run(["node", str(ROOT / "tools" / "page_frames.mjs"),
                                       str(page), str(args.seconds), "800", "600", mode],
                                      check=True, capture_output=True, text=True)
                got = json.loads(proc.stdout)
                ms = got["intervals_ms"]
                rows.append({"asset": name, "kind": kind, "mode": mode,
                             "page_mb": page.stat().st_size / 1e6, "frames": len(ms),
                             "median_ms": statistics.median(ms),
                             "p95_ms": float(np.percentile(ms, 95)),
                             "fps": 1000.0 / statistics.median(ms), "rate": got["rate"],
                             "node_step_ms": alone["step_ms"], "step_ms": alone["step_s"] * 1000})
                r = rows[-1]
                live = f", motion {r['rate']:.2f}x life" if mode == "live" else ""
                print(f"{name:>24} {mode}: page {r['page_mb']:.2f} MB, {r['frames']} frames, "
                      f"median {r['median_ms']:.1f} ms ({r['fps']:.1f} fps), 95th "
                      f"percentile {r['p95_ms']:.1f} ms{live}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "page", "renderer": "SwiftShader",
                                         "seconds": args.seconds, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
