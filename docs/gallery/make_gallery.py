"""Rebuild the README's gallery: real `neurok animate` outputs as PNG contact sheets.

    python docs/gallery/make_gallery.py [--only NAME ...]

Every clip is made from an asset this project may redistribute: the shipped examples
(`examples/blob.obj`, `examples/flag.glb`, `examples/chest.glb`) and shapes generated here
(a rod, a square sheet).
Each clip is animated by the `neurok` command exactly as listed in CLIPS (with the shipped
weights), then four stills are rendered by `neurok preview` (at the start, 1/3, 2/3 and the
end, framed on the whole clip) and laid side by side in `docs/gallery/NAME.png`, reduced to
a 64-colour palette so the whole gallery stays a few hundred KB. A PAGES clip is written as a
web page instead (`-o NAME.html`) and its screenshot in headless Chromium, live after its
clip while the mouse pulls it (`tools/page_live.mjs`: node, `npm ci --prefix tools` and
Chromium), is the picture. About 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CELL = (256, 192)  # pixels of one still
STILLS = 4

# name -> the `neurok animate` arguments after the input and output (input: a path below
# the repository root, or a generated shape named "gen:rod" / "gen:sheet")
CLIPS = {
    "blob-drop": ("examples/blob.obj", ["--seconds", "2"]),
    "blob-jelly-poke": ("examples/blob.obj",
                        ["--seconds", "2", "--material", "jelly", "--preset", "poke"]),
    "flag-flutter": ("examples/flag.glb", ["--seconds", "2"]),
    "rod-sway": ("gen:rod", ["--seconds", "2", "--material", "jelly"]),
    "sheet-hang": ("gen:sheet", ["--seconds", "2", "--material", "silk", "--preset", "free",
                                 "--no-ground", "--pin", "x<0.05"]),
    "chest-open": ("examples/chest.glb", ["--seconds", "2"]),
}
PAGES = {"flag-page": ("examples/flag.glb", ["--seconds", "2"])}


def write_rod(path: Path, length: float = 1.0, radius: float = 0.06, rings: int = 40,
              sides: int = 12) -> Path:
    """A closed cylinder along +X (OBJ, unitless): long and slender, so `auto` makes it a
    beam."""
    x = np.linspace(0.0, length, rings)
    a = np.linspace(0.0, 2 * np.pi, sides, endpoint=False)
    ring = np.stack([np.zeros_like(a), radius * np.cos(a), radius * np.sin(a)], 1)
    v = np.concatenate([ring + [xi, 0, 0] for xi in x] + [[[0, 0, 0], [length, 0, 0]]])
    faces = []
    for i in range(rings - 1):
        for j in range(sides):
            p, q = i * sides + j, i * sides + (j + 1) % sides
            faces += [(p, q, q + sides), (p, q + sides, p + sides)]
    c0, c1 = len(v) - 2, len(v) - 1
    last = (rings - 1) * sides
    for j in range(sides):
        faces += [(c0, (j + 1) % sides, j), (c1, last + j, last + (j + 1) % sides)]
    return _write_obj(path, v, np.array(faces))


def write_sheet(path: Path, n: int = 24) -> Path:
    """A flat square sheet of n x n vertices in the XZ plane (OBJ, unitless)."""
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    v = np.stack([x.ravel(), np.zeros(n * n), z.ravel()], 1)
    q = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None]).ravel()
    faces = np.concatenate([np.stack([q, q + 1, q + n], 1), np.stack([q + 1, q + n + 1, q + n], 1)])
    return _write_obj(path, v, faces)


def _write_obj(path: Path, v: np.ndarray, faces: np.ndarray) -> Path:
    lines = [f"v {a:.6f} {b:.6f} {c:.6f}" for a, b, c in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")
    return path


def neurok(*args: str) -> None:
    """Run the `neurok` command of this Python, failing loudly."""
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", *args], capture_output=True,
                          text=True)
    if proc.returncode:
        raise SystemExit(f"neurok {' '.join(args)} failed:\n{proc.stderr}")


def make_page(name: str, tmp: Path) -> Path:
    """Animate one clip as a page and keep a screenshot of it live, pulled by the mouse."""
    src, opts = PAGES[name]
    page, shot = tmp / f"{name}.html", tmp / f"{name}.png"
    neurok("animate", str(ROOT / src), "-o", str(page), *opts)
    subprocess.run(["node", str(ROOT / "tools" / "page_live.mjs"), str(page), "0.1", "drag",
                    str(shot)], check=True, capture_output=True)
    out = HERE / f"{name}.png"
    Image.open(shot).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(
        out, optimize=True)
    return out


def make(name: str, tmp: Path) -> Path:
    """Animate one clip, render its stills and write its contact sheet."""
    if name in PAGES:
        return make_page(name, tmp)
    src, opts = CLIPS[name]
    gen = {"gen:rod": write_rod, "gen:sheet": write_sheet}
    path = gen[src](tmp / f"{src[4:]}.obj") if src in gen else ROOT / src
    clip = tmp / f"{name}.glb"
    neurok("animate", str(path), "-o", str(clip), *opts)
    seconds = float(opts[opts.index("--seconds") + 1])
    cells = []
    for i, t in enumerate(np.linspace(0.0, seconds, STILLS)):
        still = tmp / f"{name}-{i}.png"
        neurok("preview", str(clip), "-o", str(still), "--at", f"{t:.3f}",
               "--width", str(CELL[0]), "--height", str(CELL[1]))
        cells.append(np.asarray(Image.open(still).convert("RGB")))
    sheet = Image.fromarray(np.concatenate(cells, axis=1))
    out = HERE / f"{name}.png"
    sheet.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted({**CLIPS, **PAGES}),
                    default=sorted({**CLIPS, **PAGES}))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            out = make(name, Path(tmp))
            print(f"{out.relative_to(ROOT)}: {out.stat().st_size / 1024:.0f} KiB")  # noqa: T201


if __name__ == "__main__":
    main()
