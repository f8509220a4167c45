"""Inverse kinematics of articulated objects through their rig: `neurok fit --articulated` on
the test split of an articulated dataset (laptops and lamps, families never in training).

    neurok dataset generate work/art --count 1200 --seed 2026 --categories articulated
    python benchmarks/articulated_ik.py --data work/art [--pairs 24] [--json out.json]

Per pair (a test sequence's first frame as the rest, one of its later frames observed,
aligned, centred and scaled as `neurok eval` pairs them): the rig is found on the rest as
animate finds it (its pieces are the sequence's parts), the joints and the base's pose are
fitted (rig/fit.py), and the Chamfer-L1 of the rig's surface points so posed (10,000, the
rest's sample points' places in the observed frame as the target; unit: its bounding-box
diagonal, as `neurok eval` measures IK) is reported next to the rest pose's, with each
joint's error against the engine's own joint positions and whether the rig found the true
joints.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from neurok_cli.data.dataset import canonical_transform
from neurok_cli.data.geometry import barycentric_points, kabsch, sample_surface
from neurok_cli.data.metrics import chamfer_l1
from neurok_cli.io.asset import Asset, Part
from neurok_cli.rig.animate import asset_pieces
from neurok_cli.rig.fit import RigFitter, fit_shapes


def pair(path: Path, rng: np.random.Generator, samples: int = 10_000) -> dict:
    from scipy.spatial.transform import Rotation

    seq = np.load(path, allow_pickle=True)
    meta = json.loads(str(seq["meta"]))
    faces, frames = seq["faces"], seq["frames"].astype(np.float64)
    k = int(rng.integers(1, len(frames)))
    # as `neurok eval` pairs them: the observed frame rigidly aligned to the rest, both
    # centred and scaled alike, the target at the rest's sample points' places in it
    va, vb = frames[0], frames[k]
    rot, shift = kabsch(vb, va)
    vb = vb @ rot.T + shift
    centre, scale = canonical_transform(va)
    va, vb = (va - centre) * scale, (vb - centre) * scale
    pts, fidx, bary = sample_surface(va, faces, samples, rng)
    target = barycentric_points(vb, faces, fidx, bary)
    # one named part (glTF-like node) per piece, so the rig's parts carry the names
    names = [p if isinstance(p, str) else p["name"] for p in meta["parts"]]
    part = np.asarray(meta["vertex_part"])
    parts = []
    for p, name in enumerate(names):
        sel = np.flatnonzero(part == p)
        remap = np.full(len(va), -1)
        remap[sel] = np.arange(len(sel))
        parts.append(Part(name=name, vertices=va[sel],
                          faces=remap[faces[(part[faces] == p).all(axis=1)]], node=p))
    order = np.concatenate([np.flatnonzero(part == p) for p in range(len(names))])
    asset = Asset(path=path, format="glb", parts=parts, metres_per_unit=1.0)
    t0 = time.perf_counter()
    fitter = RigFitter.of(asset, [])
    fit = fit_shapes(fitter, [vb[order]], asset.faces, asset.vertices, asset.faces,
                     samples=2000)[0]
    params = np.concatenate([Rotation.from_matrix(fit.rotation).as_rotvec(),
                             fit.translation, fit.joints])
    owner = fitter.start.rig.owner[asset_pieces(asset).index[np.argsort(order)]]
    posed = fitter.posed(params, fitter.to_physical(pts), owner[faces[fidx, 0]])
    rig, link = fitter.start.rig, fitter.start.link
    true = {j["part"]: j for j in meta["joints"]}
    q = np.asarray(meta["joint_positions"])  # (T, J) in the layout's order
    errors = {}
    for c, co in enumerate(link.coords):
        name = rig.names[co.part]
        if name in true:
            j = list(true).index(name)
            moved = q[k, j] - q[0, j]  # the axis found may point either way
            errors[name] = float(min(abs(fit.joints[c] - moved), abs(fit.joints[c] + moved)))
    found = {rig.names[p]: rig.names[rig.parent[p]] for p in rig.jointed}
    return {"sequence": path.name, "family": meta["family"], "frame": k,
            "chamfer_l1": chamfer_l1(posed, fitter.to_physical(target)),
            "rest_chamfer_l1": chamfer_l1(pts, target), "joint_error": errors,
            "rig_right": found == {n: j["parent"] for n, j in true.items()},
            "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pairs", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    files = sorted((args.data / "test").glob("*articulated*.npz"))
    rng = np.random.default_rng(args.seed)
    pick = rng.choice(len(files), min(args.pairs, len(files)), replace=False)
    rows = [pair(files[i], rng) for i in sorted(pick)]
    lines = ["| family | pairs | rig found right | IK Chamfer-L1 | rest pose | ratio | "
             "joint error (deg, median / max) |", "|---|---|---|---|---|---|---|"]
    for fam in sorted({r["family"] for r in rows}) + ["all"]:
        sel = [r for r in rows if fam in ("all", r["family"])]
        ik, rest = np.mean([r["chamfer_l1"] for r in sel]), np.mean(
            [r["rest_chamfer_l1"] for r in sel])
        errs = np.degrees([e for r in sel for e in r["joint_error"].values()] or [np.nan])
        lines.append(f"| {fam} | {len(sel)} | {sum(r['rig_right'] for r in sel)} | {ik:.4f} | "
                     f"{rest:.4f} | {ik / rest:.2f}x | {np.median(errs):.1f} / "
                     f"{np.max(errs):.1f} |")
    print("\n".join(lines))  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
