"""`neurok fit` in the object's own space against the learned one, on a dataset's sequences
(docs/design.md, "The object's own shape space").

    python benchmarks/bench_fit.py work/corpus3 [--split test] [--most 8] [--every 6]
        [--cloud] [--json out.json]

Each sequence of ``neurok dataset generate`` is written as a frame folder (every
``--every``-th frame, the rest's topology) and fitted by `neurok fit` twice: ``--space
handles`` (the rest's own affine handles, least squares over its vertices) and ``--space
learned`` (the shipped bundle's latent z, its encoder's guess refined on the Chamfer
distance). Per category: the fitted frames' Chamfer-L1 and mean vertex error (both over the
bounding-box diagonal; the first frame, the rest itself, left out), the rest pose's
Chamfer-L1 beside them, and the seconds each fit took. ``--cloud`` fits each kept frame
but the first as a point cloud instead (2,048 points of its surface, turned 17 degrees
about +Y and moved, against the rest mesh: no correspondences; the vertex error is then
not measured and reads 0), one `neurok fit` a frame, timed per frame. Prints a table,
writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from neurok_cli.data.format import load_sequence, sequence_files
from neurok_cli.data.geometry import kabsch, sample_surface
from neurok_cli.deform.fit import FitConfig, fit

SPACES = ("handles", "learned")


def frame_folder(path: Path, every: int, folder: Path) -> None:
    """A sequence's every ``every``-th frame as numbered OBJ files in ``folder``."""
    seq = load_sequence(path)
    faces = "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in seq.faces)
    for i, frame in enumerate(seq.frames[::every]):
        (folder / f"frame_{i:04d}.obj").write_text(
            "".join(f"v {a:.7g} {b:.7g} {c:.7g}\n" for a, b, c in frame) + faces)


def clouds(path: Path, every: int, folder: Path
           ) -> tuple[Path, list[Path], list[np.ndarray]]:
    """The rest as an OBJ and each ``every``-th frame but the first as 2,048 points of its
    surface, turned 17 degrees about +Y and moved (files in ``folder``), with each cloud's
    true rotation from the rest (the turn after the frame's own, a rigid fit's)."""
    seq = load_sequence(path)
    faces = "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in seq.faces)
    rest = folder / "rest.obj"
    rest.write_text("".join(f"v {a:.7g} {b:.7g} {c:.7g}\n" for a, b, c in seq.rest_vertices)
                    + faces)
    turn = Rotation.from_rotvec([0.0, 0.3, 0.0]).as_matrix()
    out, turns = [], []
    for i, frame in enumerate(seq.frames[::every][1:]):
        rng = np.random.default_rng([2026, i])
        cloud, _, _ = sample_surface(frame.astype(np.float64), seq.faces, 2048, rng)
        out.append(folder / f"cloud_{i:04d}.xyz")
        np.savetxt(out[-1], cloud @ turn.T + np.array([0.2, 0.5, -0.1]))
        turns.append(turn @ kabsch(seq.rest_vertices.astype(np.float64),
                                   frame.astype(np.float64))[0])
    return rest, out, turns


def one(path: Path, every: int, cloud: bool = False) -> dict:
    """Both fits of one sequence (``cloud``: of its frames as point clouds, one by one)."""
    row = {"file": path.name, "category": path.stem.split("_")[1]}
    with tempfile.TemporaryDirectory() as tmp:
        turns = None
        if cloud:
            rest, files, turns = clouds(path, every, Path(tmp))
            jobs = [FitConfig(observed=f, rest=rest, samples=4000) for f in files]
        else:
            frame_folder(path, every, Path(tmp))
            jobs = [FitConfig(observed=Path(tmp), samples=4000)]
        for space in SPACES:
            t0 = time.perf_counter()
            shapes = [f for job in jobs for f in fit(replace(job, space=space)).fits]
            shapes = shapes if cloud else shapes[1:]
            row[space] = {"chamfer": float(np.mean([f.chamfer for f in shapes])),
                          "rest_chamfer": float(np.mean([f.rest_chamfer for f in shapes])),
                          "vertex_error": float(np.mean([f.vertex_error or 0.0
                                                         for f in shapes])),
                          "seconds": (time.perf_counter() - t0) / len(jobs)}
            if turns is not None:  # how far the fitted rotation is from the true one
                # (the frame's canonical frame is the rest's: both are centred alike)
                row[space]["turn_deg"] = float(np.mean([np.degrees(Rotation.from_matrix(
                    f.rotation @ R.T).magnitude()) for f, R in zip(shapes, turns)]))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--split", default="test")
    ap.add_argument("--most", type=int, default=8, help="sequences per category")
    ap.add_argument("--every", type=int, default=6, help="keep every N-th frame")
    ap.add_argument("--cloud", action="store_true",
                    help="fit each frame as a point cloud, turned and moved, on its own")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows, taken = [], {}
    for path in sequence_files(args.data, args.split):
        cat = path.stem.split("_")[1]
        if taken.get(cat, 0) >= args.most:
            continue
        taken[cat] = taken.get(cat, 0) + 1
        rows.append(one(path, args.every, args.cloud))
        print(f"{path.name}: " + ", ".join(
            f"{s} {rows[-1][s]['chamfer']:.4f} in {rows[-1][s]['seconds']:.1f} s"
            for s in SPACES), file=sys.stderr)
    summary = []
    for cat in dict.fromkeys(r["category"] for r in rows):
        sel = [r for r in rows if r["category"] == cat]
        mean = lambda s, k, sel=sel: float(np.mean([r[s][k] for r in sel]))  # noqa: E731
        keys = ("chamfer", "vertex_error", "seconds", *(("turn_deg",) if args.cloud else ()))
        summary.append({"category": cat, "sequences": len(sel),
                        **{f"{s}_{k}": mean(s, k) for s in SPACES for k in keys},
                        "rest_chamfer": mean("handles", "rest_chamfer")})
    second = "rotation error, degrees" if args.cloud else "vertex error"
    print(f"| category | sequences | Chamfer-L1, own / learned / rest pose | {second}, own / "
          "learned | seconds, own / learned |")
    print("|---|---|---|---|---|")
    for s in summary:
        k, f = ("turn_deg", ".1f") if args.cloud else ("vertex_error", ".4f")
        print(f"| {s['category']} | {s['sequences']} | {s['handles_chamfer']:.4f} / "
              f"{s['learned_chamfer']:.4f} / {s['rest_chamfer']:.4f} | "
              f"{s['handles_' + k]:{f}} / {s['learned_' + k]:{f}} | "
              f"{s['handles_seconds']:.1f} / {s['learned_seconds']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "fit", "split": args.split,
                                         "every": args.every, "cloud": args.cloud,
                                         "summary": summary, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
