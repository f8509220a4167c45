"""Write the results section of docs/results.md from the benchmarks' JSON files.

    python benchmarks/results.py --from DIR [--readme docs/results.md] [--check]

Reads ``bench_fit.json``, ``bench_accuracy.json`` and ``bench_animate.json`` from DIR (those
present), renders them as Markdown tables and replaces what lies between the
``<!-- results:begin -->`` and ``<!-- results:end -->`` lines of docs/results.md. ``--check``
prints the section instead of writing it.

The full run that fills DIR (about 12 minutes on a 2-core CPU; one benchmark at a time --
two torch processes on 2 cores slow each other down many times over):

    python benchmarks/bench_fit.py --data work/corpus --json DIR/bench_fit.json
    python benchmarks/bench_accuracy.py --data work/corpus --json DIR/bench_accuracy.json
    python benchmarks/bench_animate.py --quick --json DIR/bench_animate.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def fit_table(d: dict) -> list[str]:
    s = d["summary"]
    out = [f"**Inverse kinematics** (`neurok fit`, {s['all']['pairs']} held-out deformed shapes "
           f"of the {d['split']} split; Chamfer-L1, unit: bounding-box diagonal; `floor`: what "
           "2,048 points leave even for a perfect fit)", "",
           "| category | mesh (same topology) | rest pose | 2,048-point cloud | rest pose "
           "| floor | s per fit |", "|---|---|---|---|---|---|---|"]
    for c, r in s.items():
        out.append(f"| {c} | {r['mesh_chamfer']:.4f} | {r['mesh_rest_chamfer']:.4f} | "
                   f"{r['cloud_chamfer']:.4f} | {r['cloud_rest_chamfer']:.4f} | "
                   f"{r['cloud_floor']:.4f} | "
                   f"{(r['mesh_seconds'] + r['cloud_seconds']) / 2:.1f} |")
    return out


def accuracy_table(d: dict) -> list[str]:
    shape = all("decoder_shape" in r for r in d["table"].values())
    out = [f"**Rollout accuracy** against the engine ({d['seconds']:g} s from each held-out "
           "sequence's first frame under its own conditions; mean vertex error, unit: "
           "bounding-box diagonal; an unstable run counts as 1.0"
           + ("; shape: the same once every frame is aligned rigidly with the engine's"
              if shape else "") + ")", "",
           "| category | runs | latent (decoder) | unstable | linear modes | unstable "
           "| rest pose |" + (" shape: latent | linear modes | rest pose |" if shape else ""),
           "|---|---|---|---|---|---|---|" + ("---|---|---|" if shape else "")]
    for c, r in d["table"].items():
        row = (f"| {c} | {r['runs']} | {r['decoder']:.4f} | {r['decoder_failed']:.0%} | "
               f"{r['linear_modes']:.4f} | {r['linear_modes_failed']:.0%} | "
               f"{r['rest']:.4f} |")
        if shape:
            row += (f" {r['decoder_shape']:.4f} | {r['linear_modes_shape']:.4f} | "
                    f"{r['rest_shape']:.4f} |")
        out.append(row)
    return out


def animate_table(d: dict) -> list[str]:
    out = ["**Speed**, whole commands (start-up to written GLB), a soft sphere dropped, "
           "30 fps", "", "| vertices | seconds simulated | animate, s | simulate, s |",
           "|---|---|---|---|"]
    rows: dict[tuple, dict] = {}
    for r in d["rows"]:
        rows.setdefault((r["vertices"], r["seconds"]), {})[r["command"]] = r["wall_s"]
    for (v, sec), r in sorted(rows.items()):
        sim = f"{r['simulate']:.1f}" if "simulate" in r else "–"
        out.append(f"| {v:,} | {sec:g} | {r.get('animate', float('nan')):.1f} | {sim} |")
    return out


def section(folder: Path) -> str:
    parts = []
    for name, render in (("bench_fit.json", fit_table), ("bench_accuracy.json", accuracy_table),
                         ("bench_animate.json", animate_table)):
        path = folder / name
        if path.is_file():
            parts.append("\n".join(render(json.loads(path.read_text()))))
    if not parts:
        sys.exit(f"no benchmark JSON in {folder}")
    return "\n\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="folder", type=Path, required=True)
    ap.add_argument("--readme", type=Path, default=Path(__file__).resolve().parents[1]
                    / "docs" / "results.md", help="the Markdown file holding the block")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    body = section(args.folder)
    if args.check:
        sys.stdout.write(body + "\n")
        return
    text = args.readme.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{args.readme}: no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    args.readme.write_text(f"{head}{BEGIN}\n{body}\n{END}{tail}")


if __name__ == "__main__":
    main()
