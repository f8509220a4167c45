"""``neurok eval`` (accuracy and plausibility over a dataset split) and ``neurok calibrate``
(fit the latent physics and the instance prior to the data)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from ..errors import UsageError
from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, progress_bar
from ._options import Opt

EVAL = "What to measure"


def _fmt(x: float) -> str:
    return f"{x:.4f}"


@guarded
def evaluate(
    data: Annotated[Path, Opt("--data", panel=o.INPUT, metavar="DIR", show_default=False,
                              help="Dataset folder (neurok dataset generate).")],
    split: Annotated[str, Opt(panel=o.INPUT, metavar=o.choices("train", "val", "test"),
                              help="Split to measure on.")] = "test",
    weights: o.Weights = "neurok-base",
    device: o.Device = "auto",
    only: Annotated[list[str] | None, Opt(
        panel=EVAL, metavar=o.choices("ik", "prior", "rollout"), show_default="all",
        help="Parts to run (repeatable).")] = None,
    pairs: Annotated[int, Opt(panel=EVAL, metavar="N", help="Inverse-kinematics pairs.")] = 48,
    samples: Annotated[int, Opt(panel=EVAL, metavar="N",
                                help="Surface samples each way for Chamfer-L1.")] = 10_000,
    objects: Annotated[int, Opt(panel=EVAL, metavar="N",
                                help="Objects for prior-sample plausibility (learned "
                                     "space).")] = 24,
    rollouts: Annotated[int, Opt(panel=EVAL, metavar="N",
                                 help="Sequences rolled out (0 = none).")] = 24,
    seconds: Annotated[float, Opt(panel=EVAL, metavar="SECONDS",
                                  help=ranged("Rollout duration.", "seconds"))] = 2.0,
    ik_start: Annotated[str, Opt(panel=EVAL, metavar=o.choices("posterior", "prior"),
                                 help="Learned space: inverse kinematics from the "
                                      "deformation encoder's guess (posterior, as neurok fit) "
                                      "or from the prior mean (prior).")] = "posterior",
    strain_limit: Annotated[bool, Opt(
        "--strain-limit/--no-strain-limit", panel=EVAL, metavar="",
        help="Learned space: keep decoded frames within the weights' strain limit, as "
             "animate does.")] = True,
    space: Annotated[str, Opt(panel=EVAL, metavar=o.choices("learned", "handles"),
                              help="Fit and roll out in each object's own handle space, as "
                                   "animate moves it by default (handles: ik and rollout, "
                                   "no bundle loaded; prior samples are refused), or in the "
                                   "weights' latent space (learned)."
                              )] = "handles",
    seed: Annotated[int, Opt(panel=EVAL, metavar="N",
                             help=ranged("Random seed.", "seed"))] = 0,
    json_path: Annotated[Path | None, Opt("--json", panel=o.OUTPUT, metavar="FILE",
                                          show_default="none", help="Write the report here.")
                         ] = None,
    plot: Annotated[Path | None, Opt(panel=o.OUTPUT, metavar="FILE.png", show_default="none",
                                     help="Write a PNG of the results here.")] = None,
) -> None:
    """Measure fits, rollouts and prior samples on a dataset split.

    Inverse kinematics, reconstruction, prior plausibility and rollouts against the
    engine's sequences: in each object's own space, as animate moves it, unless --space
    learned measures the weights' latent space (prior samples are that space's alone).

    Example:

      neurok eval --data work/corpus --split test --json report.json --plot report.png
      neurok eval --data work/corpus --space handles --only rollout
    """
    from rich.table import Table

    from ..evaluate.run import evaluate as run_eval
    from ..evaluate.run import plot_report, write_report
    from ..evaluate.suite import EvalConfig
    from ..extras import require
    from ._common import out

    if plot:  # before the work, not after it
        require("matplotlib", "plots", "neurok eval --plot")
    cfg = EvalConfig(pairs=pairs, samples=samples, objects=objects, rollouts=rollouts,
                     seconds=seconds, seed=seed, ik_start=ik_start,
                     strain_limit=strain_limit, space=space)
    with progress_bar("evaluating") as update:
        report = run_eval(data, weights, split=split, device=device, cfg=cfg,
                          parts=tuple(only) if only else None,
                          progress=lambda s, i, n: update(i, n, s))
    if json_path:
        write_report(report, json_path)
    if plot:
        plot_report(report, plot)
    table = Table(title=f"{report['weights'] or 'each object in its own handle space'} on "
                        f"{split}")
    table.add_column("metric")
    cats = []
    counts = [report["inverse_kinematics"]["count"]] if "inverse_kinematics" in report else []
    counts += [report["rollout"]["count"]] if "rollout" in report else []
    counts += [report["plausibility"]["samples"]["count"]] if "plausibility" in report else []
    if counts:
        cats = [c for c in counts[0] if c != "all"] + ["all"]
    for c in cats:
        table.add_column(c, justify="right")
    rows = [("inverse_kinematics", "chamfer", "IK Chamfer-L1"),
            ("inverse_kinematics", "rest_chamfer", "  rest pose"),
            ("inverse_kinematics", "vertex_error", "reconstruction vertex error"),
            ("inverse_kinematics", "rest_vertex_error", "  rest pose"),
            ("rollout", "error", "rollout vertex error"),
            ("rollout", "rest_error", "  rest pose"),
            ("rollout", "shape_error", "rollout shape error (rigidly aligned)"),
            ("rollout", "rest_shape_error", "  rest pose"),
            ("rollout", "failed", "  failed (fraction)"),
            ("rollout", "strain", "rollout edge strain (mean)"),
            ("rollout", "engine_strain", "  engine")]
    for part, key, label in rows:
        if part in report:
            table.add_row(label, *(_fmt(report[part][key].get(c, float("nan"))) for c in cats))
    if "plausibility" in report:
        p = report["plausibility"]
        law = "fitted prior" if p.get("prior") == "fitted" else "prior N(mu, I)"
        for key in ("strain_mean", "strain_p99", "crumple", "volume_change"):
            for part, label in (("samples", f"{law} samples"),
                                ("skinned_samples", "  same, skinned"),
                                ("limited_samples", "  same, within the strain limit"),
                                ("data", "  data"),
                                ("reconstructions", "  reconstructions"),
                                ("skinned_reconstructions", "  reconstructions, skinned"),
                                ("unit_samples", "  prior N(mu, I) samples")):
                if key in p.get(part, {}):
                    table.add_row(f"{label} {key}", *(_fmt(p[part][key].get(c, float("nan")))
                                                      for c in cats))
        table.add_row("prior samples with NaN", *([""] * (len(cats) - 1)),
                      f"{p['nan_samples']} of {p['draws']}")
    out.print(table)


@guarded
def calibrate(
    data: Annotated[Path, Opt("--data", panel=o.INPUT, metavar="DIR", show_default=False,
                              help="Dataset folder (neurok dataset generate).")],
    weights: Annotated[str, Opt(panel=o.INPUT, metavar="PATH", show_default=False,
                                help="Weights bundle folder to calibrate (rewritten).")],
    split: Annotated[str, Opt(panel=o.INPUT, metavar=o.choices("train", "val", "test"),
                              help="Split the stiffness is fitted on.")] = "val",
    prior_split: Annotated[str, Opt(
        panel=o.INPUT, metavar=o.choices("train", "val", "test"),
        help="Split the instance prior and the strain limit are fitted on.")] = "train",
    only: Annotated[list[str] | None, Opt(
        panel=EVAL, metavar=o.choices("stiffness", "prior", "strain"), show_default="all",
        help="Parts to fit (repeatable).")] = None,
    category: Annotated[list[str] | None, Opt(
        panel=EVAL, metavar=o.choices("soft", "cloth", "beam"), show_default="all",
        help="Calibrate only this category (repeatable); the bundle keeps the others'.")
                        ] = None,
    per_category: Annotated[int, Opt(panel=EVAL, metavar="N",
                                     help="Sequences per category (stiffness).")] = 3,
    prior_pairs: Annotated[int, Opt(panel=EVAL, metavar="N",
                                    help="Pairs per category (instance prior; at "
                                         "least 2).")] = 512,
    device: o.Device = "auto",
    json_out: o.Json = False,
) -> None:
    """Fit a bundle's stiffness, prior and strain limit to data.

    Each category's latent stiffness, so rollouts match the engine; the instance prior's
    spread, so samples deform like the data; and the edge strain the decoded frames keep
    within. The bundle folder is rewritten.

    Example:

      neurok calibrate --data work/corpus --weights runs/corpus-1/bundle --only prior
    """
    from ..evaluate.run import CALIBRATION_PARTS, calibrate_bundle
    from ._common import print_rows

    if prior_pairs < 2 or per_category < 1:
        raise UsageError("--prior-pairs must be >= 2 and --per-category >= 1")
    with progress_bar("calibrating") as update:
        result = calibrate_bundle(data, weights, split=split, per_category=per_category,
                                  prior_split=prior_split, prior_pairs=prior_pairs,
                                  parts=tuple(only or CALIBRATION_PARTS), device=device,
                                  categories=tuple(category) if category else None,
                                  progress=lambda s, i, n: update(i, n, s))
    if json_out:
        print_json(result)
        return
    rows = [(f"{cat} prior", f"latent spread {r['rms']:.3g} (rms per coordinate) from "
                             f"{r['pairs']} {r['split']} pairs")
            for cat, r in result.get("prior", {}).items()]
    rows += [(f"{cat} strain limit", f"{r['limit']:.2%}: the {r['quantile']:.0%} quantile of "
                                     f"edge strain in {r['sequences']} {r['split']} sequences "
                                     f"(mean {r['mean']:.2%}, 99 % {r['p99']:.2%})")
             for cat, r in result.get("strain", {}).items()]
    rows += [(f"{cat} stiffness", f"x{r['stiffness']:g}: shape error {r['shape_error']:.4f} "
                                  f"(rest pose {r['rest_shape_error']:.4f}), rollout error "
                                  f"{r['error']:.4f} (rest pose {r['rest_error']:.4f}) on "
                                  f"{r['sequences']} {split} sequences")
             for cat, r in result.get("stiffness", {}).items()]
    print_rows(rows)
