"""Closed toy-like meshes in odd units, animated as a user would: with no options at all.

    python benchmarks/unitless_toys.py [--seconds 4] [--json out.json]

A unitless file (OBJ) carries no unit, and files in the wild come in millimetres,
centimetres, inches or metres: the same toy may be 0.3 or 300 units across. Each toy here
is a closed shape of the data engine's families (blob, superquadric, torus, mushroom,
capsule, chair), plus the shared penguin and spot, written at a scale drawn from 0.01 to
1,000 units, then animated with defaults (`neurok animate TOY.obj -o OUT.glb`: a drop).
Reported: the size the tool chose and why, and the volume (welded surface) at its lowest
and at the end. A toy passes when it ends with at least 0.9 of its volume.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from neurok_cli.deform.animate import AnimateConfig, animate
from neurok_cli.evaluate.plausibility import plausibility
from neurok_cli.io.gltf.anim import first_of_ours
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.gltf.read import read_animated
from neurok_cli.io.mesh import load_mesh
from neurok_cli.sim.shapes import make_shape

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
FAMILIES = ("blob", "superquadric", "torus", "mushroom", "capsule", "chair")
SHARED_TOYS = {"penguin": "penguin.obj", "spot": "spot/spot_triangulated.obj"}
MIN_VOLUME = 0.9


def write_obj(path: Path, vertices: np.ndarray, faces: np.ndarray) -> Path:
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")
    return path


def toys(tmp: Path, rng: np.random.Generator) -> list[tuple[str, Path, float]]:
    """(name, OBJ path, units across) of every toy, each at a drawn scale."""
    out = []
    sources = []
    for family in FAMILIES:
        shape = make_shape(family, rng)
        sources.append((family, shape.vertices, shape.faces))
    for name, rel in SHARED_TOYS.items():
        if (SHARED / rel).is_file():
            asset = load_mesh(SHARED / rel)
            sources.append((name, asset.vertices, asset.faces))
    for name, vertices, faces in sources:
        v = vertices - vertices.mean(axis=0)
        across = float(10 ** rng.uniform(-2, 3))
        v = v / float(np.ptp(v, axis=0).max()) * across
        out.append((name, write_obj(tmp / f"{name}.obj", v, faces), across))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name, path, across in toys(tmp, np.random.default_rng(args.seed)):
            out = tmp / f"{name}.glb"
            rep = animate(AnimateConfig(input=path, output=out, seconds=args.seconds))
            doc = load_document(out)
            scene = read_animated(out, animations=[first_of_ours(doc)])
            p = plausibility(scene.frames, scene.faces)
            rows.append({"toy": name, "units_across": across, "size_m": rep.size_m,
                         "size_from": rep.size_from, "material": rep.material,
                         "volume_min": p.volume_min, "volume_end": p.volume_end,
                         "crumple": p.crumple, "ok": p.volume_end is not None
                         and p.volume_end >= MIN_VOLUME})
    print("| toy | units across | size used, m | volume min | volume end | crumple | ok |")  # noqa: T201
    print("|---|---|---|---|---|---|---|")  # noqa: T201
    for r in rows:
        vmin = "-" if r["volume_min"] is None else f"{r['volume_min']:.3f}"
        vend = "-" if r["volume_end"] is None else f"{r['volume_end']:.3f}"
        print(f"| {r['toy']} | {r['units_across']:.4g} | {r['size_m']:.3g} | {vmin} | "  # noqa: T201
              f"{vend} | {r['crumple']:.3f} | {'yes' if r['ok'] else 'NO'} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    raise SystemExit(0 if all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
