"""MODEL_CARD.md of a shipped bundle, rendered from its config.json and an evaluation report,
so that every figure in the card is one the commands in it produced.

    python -m neurok_cli.evaluate.card BUNDLE EVAL.json [--generate "COMMAND"]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UsageError
from ..model.bundle import CARD, read_bundle_config, update_bundle_config
from ..sim.articulated import FAMILIES, TEST_FAMILIES
from .calibrate import MAX_PEAK


def _row(label: str, table: dict, cats: list[str], fmt: str = "{:.4f}") -> str:
    return f"| {label} | " + " | ".join(fmt.format(table.get(c, float("nan"))) for c in cats) \
        + " |"


def _names(words) -> str:
    """Family names in the plural, joined as in "a, b and c"."""
    plural = [w if w.endswith("s") else f"{w}s" for w in words]
    return ", ".join(plural[:-1]) + f" and {plural[-1]}" if len(plural) > 1 else plural[0]


def _head(cats: list[str]) -> str:
    return "| | " + " | ".join(cats) + " |\n|---|" + "---|" * len(cats)


def _ik_lines(ik: dict, cfg: dict, cats: list[str]) -> list[str]:
    """The inverse-kinematics and reconstruction table of an evaluation report."""
    steps = cfg.get("ik_steps", 200)
    start = {"posterior": f"the deformation encoder's guess, then {steps} Adam steps",
             "prior": f"{steps} Adam steps from the prior mean"}[
        cfg.get("ik_start", "prior")]  # reports before the option: prior
    return [f"Inverse kinematics and reconstruction on {int(ik['count']['all'])} held-out "
            f"pairs (unit: the target's bounding-box diagonal; Chamfer-L1 over "
            f"{cfg['samples']:,} surface samples each way; {start}):", "",
            _head(cats),
            _row("IK Chamfer-L1", ik["chamfer"], cats),
            _row("rest pose (no deformation)", ik["rest_chamfer"], cats),
            _row("reconstruction: mean vertex error", ik["vertex_error"], cats),
            _row("rest pose", ik["rest_vertex_error"], cats), ""]


def _articulated_lines(art: dict) -> list[str]:
    """The card's section on the articulated test split: ``art`` is the bundle config's
    metrics["articulated"] (what :func:`articulated_metrics` keeps of a report)."""
    ik = art["inverse_kinematics"]
    cats = [c for c in ik["count"] if c != "all"]
    trained = art.get("trained_on_articulated", False)
    train = [f for f in FAMILIES if f not in TEST_FAMILIES]
    return [f"## Articulated test split: measured by `{art['measured_by']}`", "",
            f"Objects of rigid parts on hinges and sliders, generated with "
            f"`{art['generated_by']}`; its test split holds {_names(TEST_FAMILIES)}, families "
            f"never seen in training ({_names(train)} train). "
            + ("This bundle's training included the articulated training split."
               if trained else "This bundle was trained on no articulated sequence: the "
               "figures are how far its latent space reaches objects of another kind."), ""] \
        + _ik_lines(ik, art["config"], cats)


def articulated_metrics(report: dict, *, measured_by: str, generated_by: str,
                        trained: bool = False) -> dict:
    """What a bundle's config keeps of an ``neurok eval --only ik`` report on articulated
    data, for the card and README's table."""
    if "inverse_kinematics" not in report:
        raise UsageError("the articulated report has no inverse kinematics (neurok eval "
                         "--only ik writes one)")
    return {"inverse_kinematics": report["inverse_kinematics"], "measured_by": measured_by,
            "generated_by": generated_by, "trained_on_articulated": trained,
            "config": {k: report["config"][k] for k in ("ik_steps", "ik_start", "samples")
                       if k in report["config"]}}


def render(config: dict, report: dict, *, generate: str, eval_command: str,
           calibrate_command: str, name: str, history: str = "", params: int = 0,
           size_mb: float = 0.0, limits: str = "", articulated: dict | None = None) -> str:
    """The card's Markdown; ``articulated``: the config's metrics["articulated"], where the
    bundle has been measured on articulated data (:func:`articulated_metrics`)."""
    ik, roll, plaus = (report.get(k) for k in ("inverse_kinematics", "rollout", "plausibility"))
    cats = [c for c in (ik or roll)["count"] if c != "all"] + ["all"]
    lines = _intro_lines(config, generate=generate, name=name, history=history, params=params,
                         size_mb=size_mb)
    lines += [f"## Test split ({report['split']}): measured by `{eval_command}`", ""]
    if ik:
        lines += _ik_lines(ik, report["config"], cats)
    if plaus:
        lines += _plausibility_lines(plaus, report["config"], config["model"], cats)
    if roll:
        lines += _rollout_lines(roll, report["config"], cats)
    if articulated:
        lines += _articulated_lines(articulated)
    lines += _calibration_lines(config, calibrate_command)
    if limits:
        lines += ["## Known limits", "", limits.strip(), ""]
    return "\n".join(lines) + "\n"


def _intro_lines(config: dict, *, generate: str, name: str, history: str, params: int,
                 size_mb: float) -> list[str]:
    """The card's title and its model, data and training sections."""
    tr = config.get("training", {})
    model = config["model"]
    hw = tr.get("hardware", {})
    return [
        f"# {name}", "",
        "The NeuROK kinematic model (a transformer conditional VAE over an object's deformed "
        "states; CVPR 2026, reimplemented in neurok_cli) trained on the corpus our data engine "
        "makes with MuJoCo 4.0.0. `neurok animate` moves an object in it where only it "
        "can do what is asked (`--samples`, a start fitted by `neurok fit`; `--space learned` "
        "asks for it), and in the object's own shape space otherwise.", "",
        "## Model", "",
        f"- architecture: width {model['width']}, depth {model['depth']}, heads "
        f"{model['heads']}, {model['latent_tokens']} latent tokens, latent size "
        f"{model['latent_dim']}, {model['n_points']} surface samples, {model['n_query']} "
        "driving points" + (", a rigid head (a rotation per driving point beside its "
                            "displacement; vertices blend the points' rigid transforms as "
                            "dual quaternions)" if model.get("rigid") else ""),
        f"- parameters: {params:,} (`model.safetensors`, {size_mb:.1f} MB, sha256 "
        f"`{config['checksums']['model.safetensors']}`)", "",
        "## Data", "",
        f"- generated with `{generate}` (see `datasets/corpus-v1/`)",
        f"- train: {tr.get('data', {}).get('categories')}; validation: "
        f"{tr.get('val_data', {}).get('categories')}",
        "- test split: shape families never seen in training (torus, mushroom, disc, rod)", "",
        "## Training", "",
        f"- command: `{tr.get('command')}`" + (f" ({history})" if history else ""),
        f"- steps: {tr.get('steps')}, wall time {tr.get('wall_s')} s on {hw.get('device', '?')}"
        f" ({hw.get('cpu', hw.get('gpu', ''))}, {hw.get('processes', 1)} process)", "",
    ]


def _plausibility_intro(plaus: dict, cfg: dict, model: dict) -> str:
    """The sentence above the prior samples' table: what was drawn and what each row is."""
    r, lim = plaus.get("reconstructions"), plaus.get("limited_samples")
    sk, u = plaus.get("skinned_samples"), plaus.get("unit_samples")
    fitted = plaus.get("prior") == "fitted"
    law = ("N(mu(M0), L Lᵀ), the instance prior with the spread fitted to the training "
           "data (calibration below)" if fitted else "N(mu(M0), I)")
    return (f"Prior samples: {plaus['draws']} draws z ~ {law}, over "
            f"{plaus['draws'] // max(cfg['draws'], 1)} test objects, "
            f"{plaus['nan_samples']} with NaN. Edge strain |l/l0 - 1|, crumple (the 95th "
            "percentile of the dihedral angles' change, radians) and volume change "
            "|V/V0 - 1| (closed solids) of the decoded samples next to the engine's own "
            "frames of the same objects"
            + (", to the decoder's reconstructions of those frames (posterior means: "
               "the strain the decoder adds by itself)" if r else "")
            + (" and to the same draws under the unit prior N(mu(M0), I) that training "
               "pulls the posteriors towards" if u else "")
            + ("; \"within the strain limit\": the samples with their edges kept within "
               "the bundle's strain limit (calibration below), as `neurok animate` "
               "decodes frames" if lim else "")
            + ("; \"skinned\": made into meshes as `neurok animate` makes them, the "
               + ("driving points' rigid transforms (the rigid head's rotation and "
                  "displacement) blended as dual quaternions at the vertices"
                  if model.get("rigid") else "driving points' displacements carried "
                  "to the vertices by locally affine skinning")
               + " (no strain limit), where the other rows decode every vertex on "
               "its own" if sk else "") + ":")


def _plausibility_lines(plaus: dict, cfg: dict, model: dict, cats: list[str]) -> list[str]:
    """The prior samples' table: each measure of the samples beside the data's and the
    variants the report holds."""
    s, d = plaus["samples"], plaus["data"]
    rows = (("samples, skinned", plaus.get("skinned_samples")),
            ("samples within the strain limit", plaus.get("limited_samples")),
            ("reconstructions", plaus.get("reconstructions")),
            ("reconstructions, skinned", plaus.get("skinned_reconstructions")),
            ("unit prior", plaus.get("unit_samples")))
    lines = [_plausibility_intro(plaus, cfg, model), "", _head(cats)]
    for key, label in (("strain_mean", "mean edge strain"),
                       ("strain_p99", "99th pct edge strain"),
                       ("crumple", "crumple"),
                       ("volume_change", "volume change")):
        if key not in s:
            continue
        lines += [_row(f"samples: {label}", s[key], cats),
                  _row(f"data: {label}", d.get(key, {}), cats)]
        lines += [_row(f"{what}: {label}", table.get(key, {}), cats)
                  for what, table in rows if table]
    return lines + [""]


def _rollout_lines(roll: dict, cfg: dict, cats: list[str]) -> list[str]:
    """The latent rollouts' table of an evaluation report."""
    lines = [f"Latent rollouts ({cfg['seconds']:g} s from each sequence's "
             "first frame under its own conditions; mean vertex error over time, unit: "
             f"the rest shape's diagonal) on {int(roll['count']['all'])} sequences:", "",
             _head(cats), _row("latent rollout", roll["error"], cats),
             _row("rest pose", roll["rest_error"], cats)]
    if "shape_error" in roll:  # reports made before the shape error have none
        lines += [_row("shape error (rigidly aligned)", roll["shape_error"], cats),
                  _row("rest pose, aligned", roll["rest_shape_error"], cats)]
    lines += [_row("failed (fraction)", roll["failed"], cats)]
    if "strain" in roll:
        lines += [_row("mean edge strain", roll["strain"], cats),
                  _row("engine's mean edge strain", roll["engine_strain"], cats)]
    return lines + [""]


def _calibration_lines(config: dict, calibrate_command: str) -> list[str]:
    """The calibration section: stiffness per category, the prior's spread, the strain
    limit (each where the bundle has it)."""
    lines = []
    cal = config.get("calibration")
    if cal:
        lines += [f"## Calibration: `{calibrate_command}`", "",
                  "The latent elastic energy's stiffness scale per category, chosen on "
                  "validation sequences (by the shape error where one is given, else by the "
                  "rollout error) unless it says otherwise:", ""]
        lines += [f"- {c}: x{v['stiffness']:g}, {v['chosen_by']}" if v.get("chosen_by") else
                  f"- {c}: x{v['stiffness']:g} ({_shape(v)}rollout error {v['error']:.4f}, "
                  f"rest pose {v['rest_error']:.4f}, {v['sequences']} sequences)"
                  for c, v in cal.items()]
        lines += [""]
    fit = config.get("latent_prior")
    if fit:
        lines += ["The instance prior's spread: over training pairs whose M0 is the rest frame, "
                  "the second moment of the posterior mean's offset from mu(M0), per category "
                  "(its Cholesky factor L is in config.json; `neurok animate --samples` and "
                  "the samples above draw from it):", ""]
        lines += [f"- {c}: rms {v['rms']:.3g} per latent coordinate ({v['pairs']} "
                  f"{v['split']} pairs)" for c, v in fit.items()]
        lines += [""]
    strain = config.get("strain_limit")
    if strain:
        lines += ["The strain limit: the edge strain |l/l0 - 1| that `neurok animate`'s decoded "
                  "frames keep within (model/strain.py), per category the quantile of edge "
                  "strain over every frame of training sequences:", ""]
        lines += [f"- {c}: {v['limit']:.4f}, the {v['quantile']:.0%} quantile ({v['sequences']} "
                  f"{v['split']} sequences; their mean {v['mean']:.4f}, 99th pct "
                  f"{v['p99']:.4f})" for c, v in strain.items()]
        lines += [""]
    return lines


def _shape(cal: dict) -> str:
    """The shape error a calibration was chosen by, when it has one."""
    if "shape_error" not in cal:
        return ""
    out = f"shape error {cal['shape_error']:.4f}, rest pose {cal['rest_shape_error']:.4f}; "
    if min(cal.get("latent_peaks", [0.0])) >= MAX_PEAK:
        out = "every scale's motion reached past the fitted latent region, so the grid's " \
              "stiffest; " + out
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="render a bundle's MODEL_CARD.md")
    ap.add_argument("bundle", type=Path)
    ap.add_argument("report", type=Path)
    ap.add_argument("--generate", default="neurok dataset generate work/corpus --count 1620 "
                                          "--seed 2026 --workers 2")
    ap.add_argument("--eval-command",
                    default="neurok eval --data work/corpus --split test --space learned")
    ap.add_argument("--history", default="", help="how the run got to that command")
    ap.add_argument("--calibrate-command", default="neurok calibrate --data work/corpus "
                                                   "--weights weights/neurok-base "
                                                   "--per-category 2")
    ap.add_argument("--limits", type=Path, help="a Markdown file: the card's last section")
    ap.add_argument("--articulated", type=Path, help="an IK report on articulated data (neurok "
                    "eval --only ik --json); without it the card keeps the config's last one")
    ap.add_argument("--articulated-command", default="neurok eval --data work/art3 --split test "
                                                     "--space learned --only ik")
    ap.add_argument("--articulated-generate", default="neurok dataset generate work/art3 "
                                                      "--count 1200 --seed 2026 "
                                                      "--categories articulated")
    ap.add_argument("--trained-on-articulated", action="store_true",
                    help="the bundle's training included articulated sequences")
    args = ap.parse_args()
    config = read_bundle_config(args.bundle)
    report = json.loads(args.report.read_text())
    metrics = dict(config.get("metrics", {}))
    if args.articulated:
        metrics["articulated"] = articulated_metrics(
            json.loads(args.articulated.read_text()), measured_by=args.articulated_command,
            generated_by=args.articulated_generate, trained=args.trained_on_articulated)
    from ..model import load_bundle

    model, _ = load_bundle(args.bundle)
    weights = args.bundle / "model.safetensors"
    card = render(config, report, generate=args.generate, eval_command=args.eval_command,
                  params=model.num_parameters(), size_mb=weights.stat().st_size / 1e6,
                  limits=args.limits.read_text() if args.limits else "",
                  calibrate_command=args.calibrate_command, name=args.bundle.name,
                  history=args.history, articulated=metrics.get("articulated"))
    keep = {k: report[k] for k in ("inverse_kinematics", "plausibility", "rollout")
            if k in report}
    update_bundle_config(args.bundle, metrics={**metrics, "test": keep,
                                               "measured_by": args.eval_command})
    (args.bundle / CARD).write_text(card)
    sys.stdout.write(card)


if __name__ == "__main__":
    main()
