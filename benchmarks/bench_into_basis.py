"""The learned decoder decoding into each object's own basis (docs/design.md, "The object's
own shape space"): its reconstructions of a dataset split's pairs, as decoded and projected
onto the basis `animate` builds for frame a, beside the basis's ceiling and the rest pose.

    python benchmarks/bench_into_basis.py work/corpus3 [--bundles DIR ...] [--split test]
        [--pairs 48] [--json out.json]

For each bundle and each of the split's fixed pairs (`neurok eval`'s, stratified by
category; frame a the rest): the deformation encoder's posterior mean z for the pair, the
decoder's displacements at every vertex of frame a, and

- *raw*: those displacements as decoded;
- *into basis*: their least-squares projection over every vertex onto frame a's own basis
  (no elastic term), which is what a decoder into the basis can give at best with that z;
- *ceiling*: the target's own projection (what any motion in the basis can hold).

Per category, the mean vertex error over the target's bounding-box diagonal, the mean edge
strain |l/l0 - 1| (the data's beside it) and the crumple (the 95th percentile of the
dihedral angles' change, radians; the data's beside it). Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from neurok_cli.data.dataset import PairDataset, SamplingConfig
from neurok_cli.data.metrics import bbox_diagonal, mean_vertex_error
from neurok_cli.deform.own.fit import coordinates_fit
from neurok_cli.deform.own.handles import mesh_edges
from neurok_cli.deform.own.mechanics import build_mechanics
from neurok_cli.evaluate.plausibility import crumple
from neurok_cli.evaluate.strain import edge_strain
from neurok_cli.evaluate.suite import pair_frames
from neurok_cli.model.bundle import load_bundle
from neurok_cli.scenario.materials import resolve_material

SHIPPED = Path(__file__).resolve().parents[1] / "neurok_cli" / "weights" / "neurok-base"
MEASURES = ("error", "strain", "crumple")
KINDS = ("raw", "into basis", "ceiling")


def measure(bundle: Path, data: Path, split: str, pairs: int) -> dict:
    model, _ = load_bundle(bundle)
    mc = model.cfg
    ds = PairDataset(data, split, SamplingConfig(n_points=mc.n_points, n_query=mc.n_query,
                                                 seed=0).without_augmentation())

    def t(x):
        return torch.as_tensor(np.asarray(x, np.float32))[None]

    rows: dict[str, list] = {}
    for it in ds.fixed_pairs(pairs):
        seq = int(it["seq"])
        category = ds.category_of[seq]
        entry = ds.sequence(seq)
        faces = np.asarray(entry.faces)
        va, vb = pair_frames(entry.frames, int(it["frame_a"]), int(it["frame_b"]))
        with torch.no_grad():
            prior = model.encode_prior(t(it["points"]), t(it["normals"]))
            mu, _ = model.encode_posterior(t(it["points"]), t(it["normals"]),
                                           t(it["delta_points"]), prior)
            decoded = model.decode(mu, prior, t(va))[0].numpy().astype(np.float64)
        _, material = resolve_material(category, category)
        mech = build_mechanics(va, faces, category, material)
        solve = coordinates_fit(mech, elastic=0.0)
        shapes = {"raw": va + decoded, "into basis": va + mech.vertex_rows @ solve(decoded),
                  "ceiling": va + mech.vertex_rows @ solve(vb - va)}
        diag, edges = bbox_diagonal(vb), mesh_edges(faces)
        row = {}
        for kind, x in shapes.items():
            row[kind] = {"error": mean_vertex_error(x, vb, diag),
                         "strain": float(edge_strain(va, x, edges).mean()),
                         "crumple": float(crumple(va, x[None], faces)[0])}
        row["data"] = {"error": mean_vertex_error(va, vb, diag),
                       "strain": float(edge_strain(va, vb, edges).mean()),
                       "crumple": float(crumple(va, vb[None], faces)[0])}
        rows.setdefault(category, []).append(row)
    return {cat: {"pairs": len(r), **{kind: {m: float(np.mean([x[kind][m] for x in r]))
                                              for m in MEASURES} for kind in (*KINDS, "data")}}
            for cat, r in sorted(rows.items())}


def table(results: dict) -> str:
    lines = ["| bundle | category | pairs | error: raw / into basis / ceiling / rest pose | "
             "strain: raw / into basis / data | crumple: raw / into basis / data |",
             "|---|---|---|---|---|---|"]
    for name, by_cat in results.items():
        for cat, r in by_cat.items():
            e = " / ".join(f"{r[k]['error']:.4f}" for k in KINDS) + f" / {r['data']['error']:.4f}"
            s = " / ".join(f"{r[k]['strain']:.4f}" for k in ("raw", "into basis", "data"))
            c = " / ".join(f"{r[k]['crumple']:.3f}" for k in ("raw", "into basis", "data"))
            lines.append(f"| {name} | {cat} | {r['pairs']} | {e} | {s} | {c} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--bundles", type=Path, nargs="+", default=[SHIPPED])
    ap.add_argument("--split", default="test")
    ap.add_argument("--pairs", type=int, default=48)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results, started = {}, time.perf_counter()
    for bundle in args.bundles:  # (a run's bundle by its run's folder)
        name = bundle.parent.name if bundle.name == "bundle" else bundle.name
        results[name] = measure(bundle, args.data, args.split, args.pairs)
    print(table(results))
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "into_basis", "split": args.split,
                                         "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
