"""How much of a dataset's deformations smooth polynomial fields hold: the measure behind the
decoder's smooth head (model/smooth.py) and its latent size.

    python benchmarks/bench_smooth.py --data work/corpus [--pairs 48] [--train-pairs 1500]
        [--weights BUNDLE] [--fit-steps 300] [--json bench_smooth.json]

On the split's inverse-kinematics pairs (as ``neurok eval`` takes them: two frames of one
sequence, the rigid motion removed, the first frame's canonical units), per category, the
mean vertex error (unit: the target's bounding-box diagonal) of
- ``rest``: the first frame itself (what ``neurok eval`` calls the rest pose);
- ``degN``: the least-squares polynomial displacement field of degree N of the first frame's
  coordinates, one per pair (20 monomials per axis at degree 3): what a smooth head could
  draw with free coefficients;
- ``kK``: the same cubic fields restricted to the K leading directions of the training
  pairs' own fields (per category, by SVD of their coefficients): what a linear latent of K
  dims over them could draw;
- with ``--weights``, ``recon``: the bundle's posterior mean decoded at every vertex (as
  ``neurok eval`` reconstructs), and ``oracle``: its z fitted by Adam to every vertex's true
  displacement (what the bundle's latent space holds at best, correspondences known).
Ratios to ``rest`` are printed. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from neurok_cli.data.dataset import PairDataset, SamplingConfig
from neurok_cli.data.metrics import bbox_diagonal, mean_vertex_error
from neurok_cli.evaluate.suite import pair_frames
from neurok_cli.io.atomic import atomic_path
from neurok_cli.model.bundle import load_bundle
from neurok_cli.model.smooth import exponents

DEGREES = (1, 2, 3, 4)
DIMS = (8, 16, 32)


def features(x: np.ndarray, degree: int) -> np.ndarray:
    """The monomials of 2x up to ``degree`` (as the smooth head takes them), (n, m)."""
    s = 2 * x
    return np.stack([s[:, 0]**a * s[:, 1]**b * s[:, 2]**c
                     for a, b, c in exponents(degree)], axis=1)


def pairs(data: Path, split: str, count: int, n_points: int = 64) -> list[dict]:
    """The split's fixed pairs, each as its category, first and second frame (canonical)
    and the model's inputs (n_points surface samples, as ``neurok eval`` takes them)."""
    ds = PairDataset(data, split, SamplingConfig(n_points=n_points, n_query=64, seed=0)
                     .without_augmentation())
    out = []
    for it in ds.fixed_pairs(count):
        a, b = pair_frames(ds.sequence(int(it["seq"])).frames, int(it["frame_a"]),
                           int(it["frame_b"]))
        out.append({"category": ds.category_of[int(it["seq"])], "a": a, "b": b,
                    "inputs": [it[k] for k in ("points", "normals", "delta_points")]})
    return out


def model_errors(test: list[dict], weights: str, steps: int) -> dict[str, dict[str, list]]:
    """Per category, the bundle's reconstruction and oracle-fitted vertex errors."""
    model = load_bundle(weights)[0]
    errors: dict[str, dict[str, list]] = {}
    for p in test:
        a, b = p["a"], p["b"]
        t = lambda x: torch.as_tensor(np.asarray(x, np.float32))[None]  # noqa: E731
        points, normals, delta = (t(x) for x in p["inputs"])
        with torch.no_grad():
            prior = model.encode_prior(points, normals)
            mu_q, _ = model.encode_posterior(points, normals, delta, prior)
        z = model.fit_latent(prior, t(a), t(b - a), steps=steps, points=points,
                             normals=normals, delta=delta)
        diag = bbox_diagonal(b)
        row = errors.setdefault(p["category"], {})
        with torch.no_grad():
            for key, code in (("recon", mu_q), ("oracle", z)):
                moved = a + model.decode(code, prior, t(a))[0].numpy()
                row.setdefault(key, []).append(mean_vertex_error(moved, b, diag))
    return errors


def fitted(p: dict, degree: int) -> np.ndarray:
    """The pair's least-squares polynomial field's coefficients, (m, 3)."""
    coef, *_ = np.linalg.lstsq(features(p["a"], degree), p["b"] - p["a"], rcond=None)
    return coef


def measure(test: list[dict], train: list[dict], weights: str | None = None,
            steps: int = 300) -> dict:
    directions = {}
    cats = sorted({p["category"] for p in test})
    for cat in cats:
        rows = np.array([fitted(p, 3).T.ravel() for p in train if p["category"] == cat])
        directions[cat] = np.linalg.svd(rows, full_matrices=False)[2] if len(rows) else None
    errors: dict[str, dict[str, list[float]]] = {c: {} for c in cats}
    for p in test:
        a, b, cat = p["a"], p["b"], p["category"]
        diag = bbox_diagonal(b)
        row = errors[cat]
        row.setdefault("rest", []).append(mean_vertex_error(a, b, diag))
        for degree in DEGREES:
            moved = a + features(a, degree) @ fitted(p, degree)
            row.setdefault(f"deg{degree}", []).append(mean_vertex_error(moved, b, diag))
        basis = directions[cat]
        if basis is None:
            continue
        F = features(a, 3)
        m = F.shape[1]
        for k in DIMS:  # each direction as the field it draws at the frame's vertices
            G = np.stack([(F @ d.reshape(3, m).T).ravel() for d in basis[:k]], axis=1)
            w, *_ = np.linalg.lstsq(G, (b - a).ravel(), rcond=None)
            row.setdefault(f"k{k}", []).append(
                mean_vertex_error(a + (G @ w).reshape(-1, 3), b, diag))
    if weights:
        for cat, row in model_errors(test, weights, steps).items():
            errors[cat].update(row)
    return {c: {key: float(np.mean(v)) for key, v in row.items()} | {"n": len(row["rest"])}
            for c, row in errors.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--pairs", type=int, default=48)
    ap.add_argument("--train-pairs", type=int, default=1500)
    ap.add_argument("--weights", help="also a bundle's reconstruction and oracle fit")
    ap.add_argument("--fit-steps", type=int, default=300)
    ap.add_argument("--json", type=Path, default=Path("bench_smooth.json"))
    args = ap.parse_args()
    torch.set_num_threads(2)
    n_points = load_bundle(args.weights)[0].cfg.n_points if args.weights else 64
    summary = measure(pairs(args.data, args.split, args.pairs, n_points),
                      pairs(args.data, "train", args.train_pairs), args.weights,
                      args.fit_steps)
    keys = ["rest", *(f"deg{d}" for d in DEGREES), *(f"k{k}" for k in DIMS)]
    keys += ["recon", "oracle"] if args.weights else []
    print(f"{'category':9} {'n':>3} " + " ".join(f"{k:>14}" for k in keys))
    for cat, row in summary.items():
        cells = [f"{row['rest']:14.4f}"] + [
            f"{row[k]:8.4f} {row[k] / row['rest']:4.2f}x" if k in row else f"{'':>14}"
            for k in keys[1:]]
        print(f"{cat:9} {row['n']:3d} " + " ".join(cells))
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps({"data": str(args.data), "split": args.split,
                                   "pairs": args.pairs, "train_pairs": args.train_pairs,
                                   "weights": args.weights, "fit_steps": args.fit_steps,
                                   "summary": summary}, indent=1))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
