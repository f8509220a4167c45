"""The handle space's ceiling: how much of the engine's motion each object's own basis can
hold at all (docs/design.md, "The object's own shape space").

    python benchmarks/bench_ceiling.py work/corpus3 [--splits test val] [--most 40]
        [--stretch W | --lengths W] [--handles N] [--json out.json]

For each sequence of a dataset made by ``neurok dataset generate``: the basis `animate
--space handles` builds for its rest mesh (the category's handle count, its pinned regions
as handles of their own), and every frame's displacement projected onto it by least
squares. The projection's residual is what no motion in that space can reach, whatever
integrates it. Two figures per sequence, over all frames:

- *error*: the residual's RMS over vertices, x the rest mesh's bounding-box diagonal;
- *kept*: 1 - |residual| / |deformation|, where the deformation is the displacement less
  its best affine fit (the part a rigid or affine body cannot make): 1 keeps all of it;
- *over rest*: the mean vertex distance of the projected frames from the data's over the
  rest pose's mean distance from them (the basis's ceiling as the test split's figures
  are read: the rest pose is 1);
- *strain*: the projected frames' mean edge strain |l/l0 - 1| over the data's (1: the
  basis stretches the surface as much as the engine did).

``--stretch W`` (W > 0) fits each sheet's frames in a strain-aware way instead: the
area-weighted mean squared distance from the data over the squared diagonal, plus W times
the membrane's energy (compression costing as much as a stretch) over what a unit strain
of the whole sheet would store, from the least-squares fit (L-BFGS). A smooth basis
reaches a fold's positions only by stretching between its handles; this trades some of the
positions for less of that stretch, as a motion that pays the membrane's energy does.
``--lengths W`` fits them with W times the edges' mean squared strain (l / l0 - 1)^2 instead,
the figure the strain column reads (L-BFGS, at most 1,000 iterations a frame; the membrane's
300). Solids keep the least-squares fit.

Prints a table per category and split (median and 90th percentile), writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from neurok_cli.data.format import load_sequence, sequence_files
from neurok_cli.deform.own.handles import mesh_edges
from neurok_cli.deform.own.mechanics import build_mechanics
from neurok_cli.evaluate.strain import edge_strain
from neurok_cli.scenario.conditions import pinned_by
from neurok_cli.scenario.materials import resolve_material


def _affine_residual(rest: np.ndarray, disp: np.ndarray) -> np.ndarray:
    """Each frame's displacement (T, N, 3) less its least-squares affine fit."""
    X = np.concatenate([rest, np.ones((len(rest), 1))], axis=1)
    coef, *_ = np.linalg.lstsq(X, disp.transpose(1, 0, 2).reshape(len(rest), -1), rcond=None)
    fit = (X @ coef).reshape(len(rest), len(disp), 3).transpose(1, 0, 2)
    return disp - fit


def _fit(mech, disp: np.ndarray, Z: np.ndarray, diag: float, penalty, maxiter: int
         ) -> np.ndarray:
    """Each frame's coordinates (T, 4H, 3) fitted to its displacement (T, N, 3) from the
    least-squares ``Z`` (T, 4H, 3): the area-weighted mean squared distance over the squared
    diagonal plus ``penalty(z, du) -> (value, gradient in z)`` (L-BFGS)."""
    from scipy.optimize import minimize

    Phi, a = mech.vertex_rows, mech.areas
    norm = float(a.sum()) * diag ** 2
    out = np.empty_like(Z)
    for i, u in enumerate(disp):
        def objective(flat, u=u):
            z = flat.reshape(-1, 3)
            du = Phi @ z
            r = du - u
            value, grad = penalty(z, du)
            value += 0.5 * float(np.sum(a[:, None] * r * r)) / norm
            return value, ((Phi.T @ (a[:, None] * r)) / norm + grad).ravel()

        out[i] = minimize(objective, Z[i].ravel(), jac=True, method="L-BFGS-B",
                          options={"maxiter": maxiter}).x.reshape(-1, 3)
    return out


def _membrane(mech, weight: float):
    """``--stretch``: W x the membrane's energy, compression at full cost, over what a unit
    strain of the whole sheet would store."""
    from copy import copy

    law = copy(mech.law)
    law.compression = 1.0
    law.share = 0.0  # each triangle's own strain, the patches' mean aside
    unit = law.mu * float(mech.elements.measure.sum())  # J at a unit strain everywhere

    def penalty(z, du):
        e, g = law.energy_grad(mech.elements, z)
        return weight * e / unit, weight * g / unit
    return penalty


def _lengths(mech, rest: np.ndarray, edges: np.ndarray, weight: float):
    """``--lengths``: W x the edges' mean squared strain (l / l0 - 1)^2, what the strain
    column reads."""
    l0 = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)

    def penalty(z, du):
        d = (rest + du)[edges[:, 0]] - (rest + du)[edges[:, 1]]
        length = np.linalg.norm(d, axis=1)
        s = length / l0 - 1
        ge = (2 * weight * s / (len(edges) * l0 * np.maximum(length, 1e-30)))[:, None] * d
        g = np.zeros_like(rest)
        np.add.at(g, edges[:, 0], ge)
        np.add.at(g, edges[:, 1], -ge)
        return weight * float(np.mean(s * s)), mech.vertex_rows.T @ g
    return penalty


def ceiling(path: Path, stretch: float = 0.0, handles: int | None = None,
            lengths: float = 0.0) -> dict:
    """One sequence's projection error and kept share (module docstring)."""
    seq = load_sequence(path)
    meta = seq.meta
    category = meta["category"]
    rest = seq.rest_vertices.astype(np.float64)
    _, material = resolve_material(category, category)
    regions = meta["conditions"].get("pins") or []
    pinned = pinned_by(regions, rest) if regions else None
    t0 = time.perf_counter()
    mech = build_mechanics(rest, seq.faces, category, material, handles, pinned=pinned)
    built = time.perf_counter() - t0
    Phi = mech.vertex_rows  # (N, 4H)
    disp = seq.frames.astype(np.float64) - rest[None]
    T, N, _ = disp.shape
    B = disp.transpose(1, 0, 2).reshape(N, -1)  # (N, 3T)
    gram = (Phi.T @ Phi).toarray()
    gram += 1e-12 * np.trace(gram) / len(gram) * np.eye(len(gram))
    Z = np.linalg.solve(gram, Phi.T @ B)
    diag = float(np.linalg.norm(np.ptp(rest, axis=0)))
    edges = mesh_edges(seq.faces)
    if (stretch > 0 or lengths > 0) and not mech.solid:
        penalty, maxiter = ((_membrane(mech, stretch), 300) if stretch > 0 else
                            (_lengths(mech, rest, edges, lengths), 1000))
        Z = _fit(mech, disp, Z.reshape(-1, T, 3).transpose(1, 0, 2), diag, penalty, maxiter)
        Z = Z.transpose(1, 0, 2).reshape(-1, 3 * T)
    resid = (B - Phi @ Z).reshape(N, T, 3).transpose(1, 0, 2)
    deform = _affine_residual(rest, disp)
    r2, d2 = float((resid ** 2).sum()), float((deform ** 2).sum())
    moved = np.linalg.norm(disp[1:], axis=2).mean()  # the rest pose's distance (frame 0: 0)
    projected = seq.frames.astype(np.float64) - resid
    strain = float(np.mean(edge_strain(rest, projected[1:], edges)))
    data_strain = float(np.mean(edge_strain(rest, seq.frames[1:].astype(np.float64), edges)))
    return {"file": path.name, "category": category, "family": meta.get("family"),
            "vertices": N, "handles": mech.basis.handles, "solid": mech.solid,
            "error": float(np.sqrt(r2 / (T * N))) / diag,
            "deformation": float(np.sqrt(d2 / (T * N))) / diag,
            "kept": 1.0 - float(np.sqrt(r2 / max(d2, 1e-30))),
            "over_rest": float(np.linalg.norm(resid[1:], axis=2).mean() / max(moved, 1e-30)),
            "strain": strain, "data_strain": data_strain,
            "strain_ratio": strain / max(data_strain, 1e-30), "build_s": built}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--splits", nargs="+", default=["test", "val"])
    ap.add_argument("--most", type=int, default=40, help="sequences per split and category")
    ap.add_argument("--stretch", type=float, default=0.0, metavar="W",
                    help="fit sheets with W x the membrane's energy (see above)")
    ap.add_argument("--lengths", type=float, default=0.0, metavar="W",
                    help="fit sheets with W x the edges' mean squared strain (see above)")
    ap.add_argument("--handles", type=int, metavar="N",
                    help="at most N handles (default: the category's, as animate's)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for split in args.splits:
        files = sequence_files(args.data, split)
        taken: dict[str, int] = {}
        for path in files:
            cat = path.stem.split("_")[1]
            if taken.get(cat, 0) >= args.most:
                continue
            taken[cat] = taken.get(cat, 0) + 1
            row = {"split": split, **ceiling(path, args.stretch, args.handles, args.lengths)}
            rows.append(row)
            print(f"{split} {row['file']}: error {row['error']:.4f} kept {row['kept']:.2f} "
                  f"({row['handles']} handles)", file=sys.stderr)
    summary = _summary(rows)
    print("| split | category | sequences | error (x diagonal) median / p90 | deformation "
          "median | kept median / p10 | over rest, mean / max | strain, over the data's |")
    print("|---|---|---|---|---|---|---|---|")
    for s in summary:
        print(f"| {s['split']} | {s['category']} | {s['sequences']} | {s['error_median']:.5f} / "
              f"{s['error_p90']:.5f} | {s['deformation_median']:.5f} | {s['kept_median']:.2f} / "
              f"{s['kept_p10']:.2f} | {s['over_rest_mean']:.3f} / {s['over_rest_max']:.3f} | "
              f"{s['strain_ratio_mean']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "ceiling", "summary": summary,
                                         "rows": rows}, indent=2) + "\n")


def _summary(rows: list[dict]) -> list[dict]:
    out = []
    for split in dict.fromkeys(r["split"] for r in rows):
        for cat in dict.fromkeys(r["category"] for r in rows):
            sel = [r for r in rows if r["split"] == split and r["category"] == cat]
            if not sel:
                continue
            err = np.array([r["error"] for r in sel])
            kept = np.array([r["kept"] for r in sel])
            out.append({"split": split, "category": cat, "sequences": len(sel),
                        "error_median": float(np.median(err)),
                        "error_p90": float(np.percentile(err, 90)),
                        "deformation_median": float(np.median([r["deformation"] for r in sel])),
                        "kept_median": float(np.median(kept)),
                        "kept_p10": float(np.percentile(kept, 10)),
                        "over_rest_mean": float(np.mean([r["over_rest"] for r in sel])),
                        "over_rest_max": float(np.max([r["over_rest"] for r in sel])),
                        "strain_ratio_mean": float(np.mean([r["strain"] for r in sel]))
                        / max(float(np.mean([r["data_strain"] for r in sel])), 1e-30)})
    return out


if __name__ == "__main__":
    main()
