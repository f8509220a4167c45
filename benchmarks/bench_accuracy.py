"""Rollout accuracy of the latent physics against its baselines, on held-out sequences.

    python benchmarks/bench_accuracy.py --data work/corpus [--split test] [--rollouts 12]
                                        [--seconds 2] [--json out.json]

From each sequence's first frame and under its own conditions (material, forces, pins,
ground; the bundle's calibration applied to both), the same Lagrangian integrator runs on:

- ``decoder``: the learned latent space (the shipped model's decoder, reduced to its active
  subspace) -- what ``neurok animate`` does;
- ``linear-modes``: the same number of lowest vibration modes of the same spring network's
  elastic energy linearised at rest -- the classic reduced-order baseline;
- ``rest``: no motion at all (the rest pose at every frame).

Mean vertex error over the clip (unit: the rest shape's bounding-box diagonal), per
category, and the shape error: the same once every frame is aligned rigidly with the
engine's (the deformation alone, whatever path the body took); a run that becomes unstable
counts as 1.0 in both and is counted in ``failed``. The
trilinear-embedding baseline of the engine does not apply: the data's soft bodies are that
embedding already. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from neurok_cli.deform.animate import resolve_weights
from neurok_cli.evaluate.suite import EvalConfig, rollout_errors
from neurok_cli.model import load_bundle

BASES = ("decoder", "linear-modes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--rollouts", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--weights", default="neurok-base")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=Path("bench_accuracy.json"))
    args = ap.parse_args()
    model, bundle_cfg = load_bundle(resolve_weights(args.weights), torch.device("cpu"))
    calibration = bundle_cfg.get("calibration")
    results, wall = {}, {}
    for basis in BASES:
        cfg = EvalConfig(rollouts=args.rollouts, seconds=args.seconds, seed=args.seed,
                         basis=basis)
        t0 = time.perf_counter()
        results[basis] = rollout_errors(model, args.data, args.split, cfg, calibration)
        wall[basis] = time.perf_counter() - t0
    base = results[BASES[0]]
    cats = [c for c in base["error"] if c != "all"] + ["all"]
    print(f"{'category':9} {'runs':>4} {'decoder':>8} {'failed':>6} {'lin.modes':>9} "
          f"{'failed':>6} {'rest':>8} | shape: {'decoder':>8} {'lin.modes':>9} {'rest':>8}")
    table = {}
    for c in cats:
        lm = results["linear-modes"]
        table[c] = {"runs": int(base["count"][c]), "decoder": base["error"][c],
                    "decoder_failed": base["failed"][c], "linear_modes": lm["error"][c],
                    "linear_modes_failed": lm["failed"][c], "rest": base["rest_error"][c],
                    "decoder_shape": base["shape_error"][c],
                    "linear_modes_shape": lm["shape_error"][c],
                    "rest_shape": base["rest_shape_error"][c]}
        t = table[c]
        print(f"{c:9} {t['runs']:4d} {t['decoder']:8.4f} {t['decoder_failed']:6.2f} "
              f"{t['linear_modes']:9.4f} {t['linear_modes_failed']:6.2f} {t['rest']:8.4f} | "
              f"       {t['decoder_shape']:8.4f} {t['linear_modes_shape']:9.4f} "
              f"{t['rest_shape']:8.4f}")
    print(f"wall time: decoder {wall['decoder']:.0f} s, linear modes "
          f"{wall['linear-modes']:.0f} s for {args.rollouts} rollouts of {args.seconds:g} s")
    args.json.write_text(json.dumps({"split": args.split, "weights": args.weights,
                                     "seconds": args.seconds, "table": table,
                                     "wall_s": wall, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
