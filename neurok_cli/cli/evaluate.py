"""``neurok eval`` (accuracy and plausibility over a dataset split) and ``neurok calibrate``
(fit the latent physics to the engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import guarded, print_json, progress_bar

Opt = typer.Option


def _fmt(x: float) -> str:
    return f"{x:.4f}"


@guarded
def evaluate(
    data: Annotated[Path, Opt("--data", help="Dataset folder (neurok dataset generate).")],
    split: Annotated[str, Opt(help="train, val or test.")] = "test",
    weights: Annotated[str, Opt(help="Weights bundle: a shipped name or a folder.")
                       ] = "neurok-base",
    json_path: Annotated[Path | None, Opt("--json", help="Write the report here.")] = None,
    plot: Annotated[Path | None, Opt(help="Write a PNG of the results here.")] = None,
    pairs: Annotated[int, Opt(help="Inverse-kinematics pairs.")] = 48,
    samples: Annotated[int, Opt(help="Surface samples each way for Chamfer-L1.")] = 10_000,
    objects: Annotated[int, Opt(help="Objects for prior-sample plausibility.")] = 24,
    rollouts: Annotated[int, Opt(help="Sequences rolled out (0 = none).")] = 24,
    seconds: Annotated[float, Opt(help="Rollout duration, s.")] = 2.0,
    only: Annotated[list[str] | None, Opt(help="Parts: ik, prior, rollout (default: all).")
                    ] = None,
    device: Annotated[str, Opt(help="auto, cpu or cuda.")] = "auto",
    seed: Annotated[int, Opt(help="Random seed.")] = 0,
) -> None:
    """Inverse kinematics, reconstruction, prior plausibility and rollouts over a split."""
    from rich.table import Table

    from ..evaluate.run import evaluate as run_eval
    from ..evaluate.run import plot_report, write_report
    from ..evaluate.suite import EvalConfig
    from ._common import out

    cfg = EvalConfig(pairs=pairs, samples=samples, objects=objects, rollouts=rollouts,
                     seconds=seconds, seed=seed)
    with progress_bar("evaluating") as update:
        report = run_eval(data, weights, split=split, device=device, cfg=cfg,
                          parts=tuple(only or ("ik", "prior", "rollout")),
                          progress=lambda s, i, n: update(i, n, s))
    if json_path:
        write_report(report, json_path)
    if plot:
        plot_report(report, plot)
    table = Table(title=f"{report['weights']} on {split}")
    table.add_column("metric")
    cats = []
    for part in ("inverse_kinematics", "rollout"):
        if part in report:
            cats = [c for c in report[part]["count"] if c != "all"] + ["all"]
            break
    for c in cats:
        table.add_column(c, justify="right")
    rows = [("inverse_kinematics", "chamfer", "IK Chamfer-L1"),
            ("inverse_kinematics", "rest_chamfer", "  rest pose"),
            ("inverse_kinematics", "vertex_error", "reconstruction vertex error"),
            ("inverse_kinematics", "rest_vertex_error", "  rest pose"),
            ("rollout", "error", "rollout vertex error"),
            ("rollout", "rest_error", "  rest pose"),
            ("rollout", "failed", "  failed (fraction)")]
    for part, key, label in rows:
        if part in report:
            table.add_row(label, *(_fmt(report[part][key].get(c, float("nan"))) for c in cats))
    if "plausibility" in report:
        p = report["plausibility"]
        for key in ("strain_mean", "strain_p99"):
            table.add_row(f"prior samples {key}", *(_fmt(p["samples"][key].get(c, float("nan")))
                                                   for c in cats))
            table.add_row(f"  data {key}", *(_fmt(p["data"][key].get(c, float("nan")))
                                            for c in cats))
        table.add_row("prior samples with NaN", *([""] * (len(cats) - 1)),
                      f"{p['nan_samples']} of {p['draws']}")
    out.print(table)


@guarded
def calibrate(
    data: Annotated[Path, Opt("--data", help="Dataset folder (neurok dataset generate).")],
    weights: Annotated[str, Opt(help="Weights bundle folder to calibrate (rewritten).")],
    split: Annotated[str, Opt(help="Split to fit on.")] = "val",
    per_category: Annotated[int, Opt(help="Sequences per category.")] = 3,
    device: Annotated[str, Opt(help="auto, cpu or cuda.")] = "auto",
    json_out: Annotated[bool, Opt("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fit each category's latent stiffness so rollouts match the engine (kept in the bundle)."""
    from ..evaluate.run import calibrate_bundle
    from ._common import print_rows

    with progress_bar("calibrating") as update:
        result = calibrate_bundle(data, weights, split=split, per_category=per_category,
                                  device=device, progress=lambda i, n: update(i, n))
    if json_out:
        print_json(result)
        return
    print_rows([(cat, f"stiffness x{r['stiffness']:g}: rollout error {r['error']:.4f} "
                      f"(rest pose {r['rest_error']:.4f}) on {r['sequences']} {split} sequences")
                for cat, r in result.items()])
