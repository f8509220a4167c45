"""How much of the engine's deformation the latent space, and the reduced space the dynamics
move in, can hold: the ceiling on a rollout's shape accuracy.

    python benchmarks/bench_subspace.py --data work/corpus [--split test] [--sequences 24]
        [--weights neurok-base] [--json out.json]

For each sequence (the stratified picks of ``neurok eval``'s rollouts), the frame that
deforms most once its rigid motion is removed (Kabsch onto the rest pose, as in training)
is reproduced from the rest pose by:

- ``posterior``: the deformation encoder's mean, decoded;
- ``inverse kinematics``: that guess refined by Adam on the vertices (as ``neurok eval``);
- ``active subspace``: the inverse-kinematics latent projected on the reduced directions
  ``neurok animate`` integrates (``motion.reduced_subspace``, here over the driving points
  alone): the best any latent rollout can do there.

Mean vertex error of each against the aligned frame (unit: the rest shape's bounding-box
diagonal), per category, next to the rest pose's. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from neurok_cli.data.dataset import PairDataset, SamplingConfig, canonical_transform
from neurok_cli.data.format import load_sequence
from neurok_cli.data.geometry import barycentric_points, face_normals, kabsch
from neurok_cli.data.metrics import bbox_diagonal
from neurok_cli.deform.animate import resolve_weights
from neurok_cli.deform.motion import MotionConfig, encode_object, reduced_subspace
from neurok_cli.evaluate.suite import _stratified
from neurok_cli.io.atomic import atomic_path
from neurok_cli.model import load_bundle
from neurok_cli.model.drive import farthest_point_sample

COLUMNS = ("rest", "posterior", "inverse kinematics", "active subspace")


def measure(model, seq, seed: int, ik_steps: int) -> dict:
    frames = np.asarray(seq.frames, np.float64)
    rest = frames[0]
    aligned = []
    for f in frames:
        rot, shift = kabsch(f, rest)
        aligned.append(f @ rot.T + shift)
    aligned = np.asarray(aligned)
    pick = int(np.linalg.norm(aligned - rest, axis=-1).mean(-1).argmax())
    centre, scale = canonical_transform(rest)
    vc, target = (rest - centre) * scale, (aligned[pick] - centre) * scale
    faces = np.asarray(seq.faces)
    prior, pts, fidx, bary = encode_object(model, vc, faces, seed)
    nrm = face_normals(vc, faces)[fidx]
    t = lambda a: torch.as_tensor(np.asarray(a, np.float32))[None]  # noqa: E731
    d_pts = barycentric_points(target, faces, fidx, bary) - pts
    drive = farthest_point_sample(vc, min(model.cfg.n_query, len(vc)), generator=seed).numpy()
    with torch.no_grad():
        mu_q, _ = model.encode_posterior(t(pts), t(nrm), t(d_pts), prior)
    z = model.fit_latent(prior, t(vc[drive]), t((target - vc)[drive]), steps=ik_steps,
                         points=t(pts), normals=t(nrm), delta=t(d_pts))
    with torch.no_grad():
        basis = reduced_subspace(model, prior, t(vc[drive]), MotionConfig.subspace).basis
    k_q = basis.shape[1]
    projected = prior.mu + ((z - prior.mu) @ basis) @ basis.T
    diag = bbox_diagonal(target)
    row = {"frame": pick, "k_q": k_q,
           "rest": float(np.linalg.norm(vc - target, axis=-1).mean() / diag)}
    for name, latent in (("posterior", mu_q), ("inverse kinematics", z),
                         ("active subspace", projected)):
        with torch.no_grad():
            d = model.decode(latent, prior, t(vc))[0].numpy().astype(np.float64)
        row[name] = float(np.linalg.norm(vc + d - target, axis=-1).mean() / diag)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--sequences", type=int, default=24)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--ik-steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=Path("bench_subspace.json"))
    args = ap.parse_args()
    model, _ = load_bundle(resolve_weights(args.weights), torch.device("cpu"))
    model.eval()
    ds = PairDataset(args.data, args.split, SamplingConfig(seed=args.seed), cache=False)
    rows = []
    t0 = time.perf_counter()
    for idx in _stratified(ds, args.sequences, args.seed):
        seq = load_sequence(ds.files[idx])
        rows.append({"sequence": ds.files[idx].stem, "category": seq.meta["category"],
                     **measure(model, seq, args.seed, args.ik_steps)})
    wall = time.perf_counter() - t0
    cats = sorted({r["category"] for r in rows}) + ["all"]
    table = {c: {k: float(np.mean([r[k] for r in rows if c in ("all", r["category"])]))
                 for k in (*COLUMNS, "k_q")} for c in cats}
    print(f"{'category':9} " + " ".join(f"{c:>18}" for c in COLUMNS) + f" {'k_q':>4}")
    for c in cats:
        print(f"{c:9} " + " ".join(f"{table[c][k]:18.4f}" for k in COLUMNS) +
              f" {table[c]['k_q']:4.1f}")
    print(f"{len(rows)} sequences in {wall:.0f} s")
    out = {"benchmark": "subspace", "data": str(args.data), "split": args.split,
           "weights": args.weights, "table": table, "rows": rows, "wall_s": wall}
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
