"""Does `neurok animate` look as physical as the engine it learned from? Both commands on the
shared assets (and a plain sheet it makes) under the same conditions, side by side
(docs/design.md, "Decoded frames, volume, bending and air").

    python benchmarks/plausibility.py [--assets penguin spot capsule] [--presets drop]
        [--seconds 4] [--size 0.3] [--json out.json] [--sheet out.png] [--weights NAME]
        [--over-time] [--engine-cells M] [--engine-max-vertices N]

For each asset x preset: `animate` as a user runs it (defaults: the asset's own size and
material), then `simulate` with the same material category, size, conditions and start
height. Measures (neurok_cli/evaluate/plausibility.py): crumple, volume min and end (closed
solids), mean edge strain, tilt, height above the clip's lowest point, travel, the largest
shape change with rigid motion removed, and for sheets the mean bend. Prints a table,
writes JSON, and a PNG contact sheet: one row per run, the latent motion's frames at 0,
1/3, 2/3 and the end beside the engine's. ``--over-time`` adds each clip's crumple every
0.25 s, over the whole surface and away from the ground: when the latent body crumples
more than the engine's (the landing, the rebound, at rest). ``--engine-cells M`` adds the
engine at M times its default cells along each axis, where a soft body's shape has
converged (its surface crumples more at each refinement: docs/results.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from neurok_cli.deform.animate import AnimateConfig, animate
from neurok_cli.evaluate.plausibility import crumple, plausibility
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.gltf.anim import first_of_ours
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.render.renderer import Camera, RenderPart, render_frames
from neurok_cli.render.video import write_image
from neurok_cli.scenario.presets import Overrides, preset_conditions
from neurok_cli.sim.simulate import SimulateConfig, simulate

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ASSETS = {"sheet": None, "penguin": "penguin.obj", "spot": "spot/spot_triangulated.obj",
          "capsule": "capsule/capsule.obj", "chair": "chair_model.obj",
          "teapot": "teapot.stl", "truck": "CesiumMilkTruck.glb",
          "mountain": "mountain.obj", "simplemorph": "SimpleMorph.gltf"}
MEASURES = ("crumple", "volume_min", "volume_end", "strain", "bend", "tilt_deg",
            "height_end", "travel_end", "deform")


def _frames(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(T, N, 3) frames of the first animation neurok wrote in ``path``, and its faces."""
    doc = load_document(path)
    scene = read_animated(path, fps=None, animations=[first_of_ours(doc)])
    return scene.frames, scene.faces


def write_sheet(path: Path, n: int = 24) -> Path:
    """A flat square sheet of n x n vertices (OBJ, unitless): the plain cloth test."""
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    lines = [f"v {a:.6f} 0 {b:.6f}" for a, b in zip(x.ravel(), z.ravel())]
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j + 1, i * n + j + 2, (i + 1) * n + j + 1, (i + 1) * n + j + 2
            lines += [f"f {a} {b} {c}", f"f {b} {d} {c}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_pair(name: str, preset: str, seconds: float, size: float | None, weights: str,
             tmp: Path, engine: bool = True, material: str = "auto", space: str = "auto",
             cells: int = 1, max_vertices: int | None = None, handles: int | None = None
             ) -> tuple[dict, dict]:
    """One asset under one preset, through both commands: a row and the frames of each
    (``engine=False``: `neurok animate` alone). ``material``: as ``--material`` (auto: the
    engine simulates the category animate chose). ``cells`` > 1: the engine also runs with
    that many times its default interpolation cells along each axis (row key
    ``engine_cells``: its measures and cells), where a soft body's shape has converged.
    ``max_vertices``: as simulate's ``--max-vertices`` (a denser sheet's proxy, or none).
    ``handles``: as animate's ``--handles`` (the own space's count; None: the category's)."""
    src = SHARED / ASSETS[name] if ASSETS[name] else write_sheet(tmp / f"{name}.obj")
    t0 = time.perf_counter()
    a_out = tmp / f"{name}-{preset}-animate.glb"
    rep = animate(AnimateConfig(input=src, output=a_out, seconds=seconds, preset=preset,
                                size=size, weights=weights, material=material, space=space,
                                handles=handles))
    animate_s = time.perf_counter() - t0
    clips = {"animate": _frames(a_out)}
    t1 = time.perf_counter()
    s_out = tmp / f"{name}-{preset}-simulate.glb"
    if engine:  # (as animate: a beam's row turned onto its length)
        extent = np.ptp(clips["animate"][0][0], axis=0)
        cond, height = preset_conditions(preset, rep.category, rep.size_m, Overrides(),
                                         extent=extent)
        sim = SimulateConfig(input=src, output=s_out, seconds=seconds,
                             material=rep.category if material == "auto" else material,
                             size=rep.size_m if size is None else size, drop=height,
                             conditions=cond, **({"max_vertices": max_vertices}
                                                 if max_vertices else {}))
        s_rep = simulate(sim)
    t2 = time.perf_counter()
    row = {"asset": name, "preset": preset, "category": rep.category, "size_m": rep.size_m,
           "mass_kg": rep.mass_kg, "animate_s": animate_s, "simulate_s": t2 - t1,
           "steps": rep.steps, "material": material, "space": space, "handles": handles}
    if engine:
        clips["engine"] = _frames(s_out)
    for who, (frames, faces) in clips.items():
        row[who] = plausibility(frames, faces).as_dict()
    if engine and cells > 1 and s_rep.cells:
        finer = tuple(c * cells for c in s_rep.cells)
        f_out = tmp / f"{name}-{preset}-simulate-cells.glb"
        simulate(replace(sim, output=f_out, cells=finer))
        frames, faces = _frames(f_out)
        row["engine_cells"] = {"cells": list(finer), **plausibility(frames, faces).as_dict()}
    return row, clips


def contact_sheet(rows: list[tuple[str, dict]], path: Path, width: int = 200) -> None:
    """One image row per run: four frames of the latent motion, then four of the engine's."""
    strips = []
    for _, clips in rows:
        cells = []
        for who in ("animate", "engine"):
            frames, faces = clips[who]
            pick = np.linspace(0, len(frames) - 1, 4).round().astype(int)
            cam = Camera(width=width, height=int(width * 0.75))
            part = RenderPart(faces=faces.astype(np.int32),
                              base_color=(0.55, 0.7, 0.9, 1) if who == "animate"
                              else (0.9, 0.7, 0.5, 1))
            cells += list(render_frames([part], [frames.astype(np.float32)], cam,
                                        select=pick))
        strips.append(np.concatenate(cells, axis=1))
    write_image(np.concatenate(strips, axis=0), path)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def table(rows: list[dict]) -> str:
    """animate / engine per measure; with the finer engine (``engine_cells``), its figure
    third."""
    finer = any("engine_cells" in r for r in rows)
    who = "animate / engine" + (" / engine, finer cells" if finer else "")
    head = "| asset | preset | " + " | ".join(f"{m} ({who})" for m in MEASURES) + " |"
    lines = [head, "|" + "---|" * (2 + len(MEASURES))]
    for r in rows:
        cells = [" / ".join(_fmt(r[k][m]) for k in ("animate", "engine", "engine_cells")
                            if k in r) for m in MEASURES]
        lines.append(f"| {r['asset']} | {r['preset']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", nargs="+", default=["penguin", "spot", "capsule"],
                    choices=sorted(ASSETS))
    ap.add_argument("--presets", nargs="+", default=["drop"])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--size", type=float, default=None, help="metres (default: the file's)")
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--space", default="auto", choices=("auto", "learned", "handles"),
                    help="animate's shape space (as its --space)")
    ap.add_argument("--handles", type=int, default=None, metavar="N",
                    help="as animate's --handles: the object's own space with N handles")
    ap.add_argument("--engine-cells", type=int, default=1, metavar="M",
                    help="also run the engine with M times its default cells along each axis "
                         "(soft bodies: where their shape has converged)")
    ap.add_argument("--engine-max-vertices", type=int, default=None, metavar="N",
                    help="as simulate's --max-vertices: the engine on a finer proxy of a "
                         "dense sheet (or the whole mesh)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--sheet", type=Path, default=None)
    ap.add_argument("--over-time", action="store_true",
                    help="also print each clip's crumple every 0.25 s, over the whole surface "
                         "and away from the ground (edges above 5 %% of the size)")
    args = ap.parse_args()
    rows, sheet = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.assets:
            for preset in args.presets:
                row, clips = run_pair(name, preset, args.seconds, args.size, args.weights,
                                      Path(tmp), space=args.space,
                                      cells=args.engine_cells,
                                      max_vertices=args.engine_max_vertices,
                                      handles=args.handles)
                rows.append(row)
                sheet.append((f"{name} {preset}", clips))
                if args.over_time:
                    row["over_time"] = over_time(clips)
    text = table(rows)
    if args.over_time:
        text += "\n\n" + timeline(rows)
    report(text, rows, sheet, args.json, args.sheet)


ABOVE = 0.05  # "away from the ground": edges higher than this share of the size


def over_time(clips: dict) -> dict:
    """Each clip's crumple every 0.25 s (30 fps clips: every 8th frame from the first), over
    the whole surface and away from the ground."""
    out = {}
    for who, (frames, faces) in clips.items():
        frames = np.asarray(frames, np.float64)
        pick = np.arange(0, len(frames), 8)
        out[who] = {"t": (pick / 30.0).tolist(),
                    "crumple": crumple(frames[0], frames[pick], faces).tolist(),
                    "away": crumple(frames[0], frames[pick], faces, above=ABOVE).tolist()}
    return out


def timeline(rows: list[dict]) -> str:
    """The rows' crumple over time as text: one line per clip and measure."""
    lines = []
    for r in rows:
        for who, c in r["over_time"].items():
            for key in ("crumple", "away"):
                cells = " ".join(f"{v:.3f}" for v in c[key])
                lines.append(f"{r['asset']} {r['preset']} {who:8s} {key:8s} {cells}")
    t = next(iter(rows[0]["over_time"].values()))["t"] if rows else []
    return "\n".join([f"crumple every 0.25 s (t = 0 ... {t[-1] if t else 0:.2f} s):", *lines])


def report(text: str, rows: list[dict], sheet: list, json_path: Path | None,
           sheet_path: Path | None) -> None:
    """Print the table; write the rows as JSON and the contact sheet where asked."""
    print(text)  # noqa: T201
    if json_path:
        json_path.write_text(json.dumps(rows, indent=2))
    if sheet_path:
        contact_sheet(sheet, sheet_path)


if __name__ == "__main__":
    main()
