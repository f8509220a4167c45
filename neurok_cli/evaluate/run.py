"""``neurok eval`` and ``neurok calibrate``: load a bundle, run the suite, write JSON and plots."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from ..data.format import read_header
from ..errors import UsageError
from ..extras import require
from ..io.atomic import atomic_path
from .calibrate import calibrate
from .prior import fit_prior
from .strain import fit_strain_limit
from .suite import (
    EvalConfig,
    handle_fits,
    inverse_kinematics,
    plausibility,
    rollout_errors,
)

Progress = Callable[[str, int, int], None]


def _load(weights: str, device: str):
    from ..deform.learned.weights import resolve_weights
    from ..model import load_bundle

    folder = resolve_weights(weights)
    model, config = load_bundle(folder, device)
    return folder, model, config


def evaluate(data: str | Path, weights: str, *, split: str = "test", device: str = "auto",
             cfg: EvalConfig | None = None, parts: tuple[str, ...] | None = None,
             progress: Progress | None = None) -> dict:
    """The evaluation report on ``split`` of the dataset at ``data``, in the space
    ``cfg.space`` names (each object's own by default; ``weights``: the learned bundle, whose
    sampling the own space's fits follow too); ``parts``: what to measure (ik, prior,
    rollout; None: all that the space has, prior samples being the learned space's alone)."""
    import torch

    cfg = cfg or EvalConfig()
    if parts is None:
        parts = ("ik", "rollout") if cfg.space == "handles" else ("ik", "prior", "rollout")
    unknown = set(parts) - {"ik", "prior", "rollout"}
    if unknown:
        raise UsageError(f"unknown evaluation part(s) {', '.join(sorted(unknown))}; choose "
                         "from ik, prior, rollout")
    read_header(data)  # a clear error when this is not a dataset
    if cfg.space == "handles":
        return _handle_space(data, weights, split, cfg, parts, progress)
    folder, model, config = _load(weights, device)
    if not cfg.strain_limit:  # frames as decoded
        config = {k: v for k, v in config.items() if k != "strain_limit"}
    torch.manual_seed(cfg.seed)
    say = progress or (lambda *_: None)
    report = {"data": str(data), "split": split, "weights": str(folder),
              "config": asdict(cfg), "calibration": config.get("calibration"),
              "strain_limit": config.get("strain_limit")}
    t0 = time.perf_counter()
    if "ik" in parts:
        report["inverse_kinematics"] = inverse_kinematics(
            model, data, split, cfg, lambda i, n: say("inverse kinematics", i, n))
    if "prior" in parts:
        report["plausibility"] = plausibility(model, data, split, cfg,
                                              lambda i, n: say("prior samples", i, n),
                                              bundle_config=config)
    if "rollout" in parts and cfg.rollouts > 0:
        report["rollout"] = rollout_errors(model, data, split, cfg, config.get("calibration"),
                                           lambda i, n: say("rollouts", i, n),
                                           strain_limits=config.get("strain_limit"))
    report["wall_s"] = time.perf_counter() - t0
    return report


def _handle_space(data, weights: str, split: str, cfg: EvalConfig, parts: tuple[str, ...],
                  progress: Progress | None) -> dict:
    """The report in each object's own handle space: inverse kinematics as a fit of the
    same pairs there, and rollouts as `animate` moves them; prior samples are the learned
    bundle's alone. The weights are read for their sampling only (which pairs), not
    loaded."""
    from ..deform.learned.weights import resolve_weights
    from ..model.bundle import read_bundle_config

    if "prior" in parts:
        raise UsageError("with «space» handles, prior samples are not measured (they are the "
                         "learned bundle's); choose «only» ik and/or rollout")
    say = progress or (lambda *_: None)
    report = {"data": str(data), "split": split, "weights": None, "space": "handles",
              "config": asdict(cfg), "calibration": None, "strain_limit": None}
    t0 = time.perf_counter()
    if "ik" in parts:
        model = read_bundle_config(resolve_weights(weights)).get("model", {})
        report["inverse_kinematics"] = handle_fits(
            data, split, cfg, int(model.get("n_points", 1024)), int(model.get("n_query", 512)),
            lambda i, n: say("fits", i, n))
    if "rollout" in parts and cfg.rollouts > 0:
        report["rollout"] = rollout_errors(None, data, split, cfg,
                                           progress=lambda i, n: say("rollouts", i, n))
    report["wall_s"] = time.perf_counter() - t0
    return report


def write_report(report: dict, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(report, indent=2) + "\n")


def plot_report(report: dict, path: str | Path) -> None:
    """Per-category bars (IK Chamfer and reconstruction against the rest pose) and the
    rollout error over time, in one PNG."""
    require("matplotlib", "plots", "neurok eval --plot").use("Agg")
    plt = require("matplotlib.pyplot", "plots", "neurok eval --plot")

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ik = report.get("inverse_kinematics")
    if ik:
        cats = [c for c in ik["chamfer"] if c != "all"]
        x = range(len(cats))
        axes[0].bar([i - 0.2 for i in x], [ik["chamfer"][c] for c in cats], 0.4, label="NeuROK IK")
        axes[0].bar([i + 0.2 for i in x], [ik["rest_chamfer"][c] for c in cats], 0.4,
                    label="rest pose")
        axes[0].set_xticks(list(x), cats)
        axes[0].set_ylabel("Chamfer-L1 (bbox diagonal)")
        axes[0].legend()
    roll = report.get("rollout")
    if roll:
        for cat, curve in roll["curve"].items():
            axes[1].plot([i / 30.0 for i in range(len(curve))], curve, label=cat)
        axes[1].set_xlabel("time (s)")
        axes[1].set_ylabel("mean vertex error (bbox diagonal)")
        axes[1].legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


CALIBRATION_PARTS = ("stiffness", "prior", "strain")


def calibrate_bundle(data: str | Path, weights: str, *, split: str = "val",
                     per_category: int = 3, prior_split: str = "train", prior_pairs: int = 512,
                     parts: tuple[str, ...] = CALIBRATION_PARTS, device: str = "auto",
                     categories: tuple[str, ...] | None = None,
                     progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Fit and store in the bundle: the per-category stiffness scale on ``split`` (part
    "stiffness", key ``calibration``) and the fitted instance prior on ``prior_pairs`` pairs
    per category of ``prior_split`` (part "prior", key ``latent_prior``), and the decoded
    frames' strain limit from the edge strain of the frames of ``prior_split`` (part "strain",
    key ``strain_limit``). ``categories`` limits them to those and keeps what the bundle holds
    for the others. Returns ``{"stiffness": ..., "prior": ..., "strain": ...}`` for the parts
    run."""
    from ..model.bundle import read_bundle_config, update_bundle_config

    unknown = set(parts) - set(CALIBRATION_PARTS)
    if unknown or not parts:
        raise UsageError(f"unknown calibration part(s) {', '.join(sorted(unknown)) or '(none)'};"
                         f" choose from {', '.join(CALIBRATION_PARTS)}")
    header = read_header(data)
    if categories is not None:
        held = sorted({c for split_counts in header.counts.values() for c in split_counts})
        unknown = sorted(set(categories) - set(held))
        if unknown:
            raise UsageError(f"«category» {', '.join(unknown)}: not in {data} (it has "
                             f"{', '.join(held)})")
    folder, model, _ = _load(weights, device)
    say = progress or (lambda *_: None)
    result: dict = {}
    if "prior" in parts:
        result["prior"] = fit_prior(model, data, prior_split, per_category=prior_pairs,
                                    categories=categories,
                                    progress=lambda i, n: say("prior", i, n))
    if "strain" in parts:
        result["strain"] = fit_strain_limit(data, prior_split, categories=categories,
                                            progress=lambda i, n: say("strain", i, n))
    if "stiffness" in parts:
        result["stiffness"] = calibrate(model, data, split, per_category=per_category,
                                        categories=categories,
                                        progress=lambda i, n: say("stiffness", i, n))
    # read again just before writing: another calibration of other categories may have
    # written the bundle meanwhile
    stored = read_bundle_config(folder)
    update_bundle_config(folder, **{key: {**((stored.get(key) or {}) if categories else {}),
                                          **result[part]}
                                    for part, key in (("stiffness", "calibration"),
                                                      ("prior", "latent_prior"),
                                                      ("strain", "strain_limit"))
                                    if part in result})
    return result
