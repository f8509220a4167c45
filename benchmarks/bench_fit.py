"""`neurok fit` in the object's own space against the learned one, on a dataset's sequences
(docs/design.md, "The object's own shape space").

    python benchmarks/bench_fit.py work/corpus3 [--split test] [--most 8] [--every 6]
        [--json out.json]

Each sequence of ``neurok dataset generate`` is written as a frame folder (every
``--every``-th frame, the rest's topology) and fitted by `neurok fit` twice: ``--space
handles`` (the rest's own affine handles, least squares over its vertices) and ``--space
learned`` (the shipped bundle's latent z, its encoder's guess refined on the Chamfer
distance). Per category: the fitted frames' Chamfer-L1 and mean vertex error (both over the
bounding-box diagonal; the first frame, the rest itself, left out), the rest pose's
Chamfer-L1 beside them, and the seconds each fit took. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from neurok_cli.data.format import load_sequence, sequence_files
from neurok_cli.deform.fit import FitConfig, fit

SPACES = ("handles", "learned")


def frame_folder(path: Path, every: int, folder: Path) -> None:
    """A sequence's every ``every``-th frame as numbered OBJ files in ``folder``."""
    seq = load_sequence(path)
    faces = "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in seq.faces)
    for i, frame in enumerate(seq.frames[::every]):
        (folder / f"frame_{i:04d}.obj").write_text(
            "".join(f"v {a:.7g} {b:.7g} {c:.7g}\n" for a, b, c in frame) + faces)


def one(path: Path, every: int) -> dict:
    """Both fits of one sequence."""
    row = {"file": path.name, "category": path.stem.split("_")[1]}
    with tempfile.TemporaryDirectory() as tmp:
        frame_folder(path, every, Path(tmp))
        for space in SPACES:
            t0 = time.perf_counter()
            result = fit(FitConfig(observed=Path(tmp), space=space, samples=4000))
            shapes = result.fits[1:]
            row[space] = {"chamfer": float(np.mean([f.chamfer for f in shapes])),
                          "rest_chamfer": float(np.mean([f.rest_chamfer for f in shapes])),
                          "vertex_error": float(np.mean([f.vertex_error for f in shapes])),
                          "seconds": time.perf_counter() - t0}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--split", default="test")
    ap.add_argument("--most", type=int, default=8, help="sequences per category")
    ap.add_argument("--every", type=int, default=6, help="keep every N-th frame")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows, taken = [], {}
    for path in sequence_files(args.data, args.split):
        cat = path.stem.split("_")[1]
        if taken.get(cat, 0) >= args.most:
            continue
        taken[cat] = taken.get(cat, 0) + 1
        rows.append(one(path, args.every))
        print(f"{path.name}: " + ", ".join(
            f"{s} {rows[-1][s]['chamfer']:.4f} in {rows[-1][s]['seconds']:.1f} s"
            for s in SPACES), file=sys.stderr)
    summary = []
    for cat in dict.fromkeys(r["category"] for r in rows):
        sel = [r for r in rows if r["category"] == cat]
        mean = lambda s, k, sel=sel: float(np.mean([r[s][k] for r in sel]))  # noqa: E731
        summary.append({"category": cat, "sequences": len(sel),
                        **{f"{s}_{k}": mean(s, k) for s in SPACES
                           for k in ("chamfer", "vertex_error", "seconds")},
                        "rest_chamfer": mean("handles", "rest_chamfer")})
    print("| category | sequences | Chamfer-L1, own / learned / rest pose | vertex error, own "
          "/ learned | seconds, own / learned |")
    print("|---|---|---|---|---|")
    for s in summary:
        print(f"| {s['category']} | {s['sequences']} | {s['handles_chamfer']:.4f} / "
              f"{s['learned_chamfer']:.4f} / {s['rest_chamfer']:.4f} | "
              f"{s['handles_vertex_error']:.4f} / {s['learned_vertex_error']:.4f} | "
              f"{s['handles_seconds']:.1f} / {s['learned_seconds']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "fit", "split": args.split,
                                         "every": args.every, "summary": summary,
                                         "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
