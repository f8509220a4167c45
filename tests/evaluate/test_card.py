"""The model card renders the rollout's shape error and the calibration it chose."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from neurok_cli.errors import UsageError
from neurok_cli.evaluate.card import articulated_metrics, render

CONFIG = {"model": {"width": 8, "depth": 1, "heads": 1, "latent_tokens": 2, "latent_dim": 4,
                    "n_points": 16, "n_query": 8},
          "checksums": {"model.safetensors": "0" * 64}}


def _rollout(shape: bool) -> dict:
    roll = {"count": {"soft": 2.0, "all": 2.0}, "error": {"soft": 0.2, "all": 0.2},
            "rest_error": {"soft": 0.4, "all": 0.4}, "failed": {"soft": 0.0, "all": 0.0}}
    if shape:
        roll |= {"shape_error": {"soft": 0.0123, "all": 0.0123},
                 "rest_shape_error": {"soft": 0.0456, "all": 0.0456}}
    return roll


def _card(shape: bool) -> str:
    cal = {"stiffness": 10.0, "error": 0.1, "rest_error": 0.3, "sequences": 2}
    if shape:
        cal |= {"shape_error": 0.0111, "rest_shape_error": 0.0222}
    config = CONFIG | {"calibration": {"soft": cal}}
    report = {"split": "test", "config": {"seconds": 2.0}, "rollout": _rollout(shape)}
    return render(config, report, generate="g", eval_command="e", calibrate_command="c",
                  name="b")


def test_card_shows_the_shape_error_and_the_calibration_chosen_by_it():
    card = _card(shape=True)
    assert "| shape error (rigidly aligned) | 0.0123 | 0.0123 |" in card
    assert "| rest pose, aligned | 0.0456 | 0.0456 |" in card
    assert "- soft: x10 (shape error 0.0111, rest pose 0.0222; rollout error 0.1000" in card
    # a calibration none of whose scales stayed inside the latent bound says so
    config = CONFIG | {"calibration": {"soft": {
        "stiffness": 10.0, "error": 0.1, "rest_error": 0.3, "sequences": 2,
        "shape_error": 0.0111, "rest_shape_error": 0.0222, "latent_peaks": [1.2, 0.95]}}}
    report = {"split": "test", "config": {"seconds": 2.0}, "rollout": _rollout(True)}
    card = render(config, report, generate="g", eval_command="e", calibrate_command="c",
                  name="b")
    assert "- soft: x10 (every scale's motion reached past the fitted latent region" in card


def test_card_of_a_report_without_the_shape_error():
    card = _card(shape=False)
    assert "shape error (rigidly aligned)" not in card and "; rollout error" not in card
    assert "- soft: x10 (rollout error 0.1000, rest pose 0.3000, 2 sequences)" in card


def test_card_shows_the_strain_limit_and_the_samples_within_it():
    band = {"soft": 0.03, "all": 0.03}
    plaus = {"samples": {"strain_mean": {"soft": 0.06, "all": 0.06}},
             "data": {"strain_mean": band}, "draws": 8, "nan_samples": 0,
             "limited_samples": {"strain_mean": {"soft": 0.045, "all": 0.045}},
             "skinned_samples": {"strain_mean": {"soft": 0.051, "all": 0.051}},
             "skinned_reconstructions": {"strain_mean": {"soft": 0.012, "all": 0.012}}}
    roll = _rollout(True) | {"strain": {"soft": 0.02, "all": 0.02},
                             "engine_strain": {"soft": 0.025, "all": 0.025}}
    config = CONFIG | {"strain_limit": {"soft": {
        "limit": 0.137, "quantile": 0.9, "sequences": 64, "split": "train", "mean": 0.05,
        "p99": 0.45}}}
    report = {"split": "test", "config": {"seconds": 2.0, "draws": 4}, "rollout": roll,
              "plausibility": plaus}
    card = render(config, report, generate="g", eval_command="e", calibrate_command="c",
                  name="b")
    assert "| samples within the strain limit: mean edge strain | 0.0450 | 0.0450 |" in card
    # samples and reconstructions made into meshes as animate makes them
    assert "| samples, skinned: mean edge strain | 0.0510 | 0.0510 |" in card
    assert "| reconstructions, skinned: mean edge strain | 0.0120 | 0.0120 |" in card
    assert "| mean edge strain | 0.0200 | 0.0200 |" in card
    assert "| engine's mean edge strain | 0.0250 | 0.0250 |" in card
    assert "- soft: 0.1370, the 90% quantile (64 train sequences; their mean 0.0500" in card


def test_a_calibration_chosen_another_way_says_how():
    cal = {"stiffness": 3.0, "error": 0.1, "rest_error": 0.3, "sequences": 2,
           "chosen_by": "the drops of the shared assets against the engine"}
    config = CONFIG | {"calibration": {"soft": cal}}
    report = {"split": "test", "config": {"seconds": 2.0}, "rollout": _rollout(True)}
    card = render(config, report, generate="g", eval_command="e", calibrate_command="c",
                  name="b")
    assert "- soft: x3, the drops of the shared assets against the engine" in card
    assert "rollout error 0.1000" not in card


def _ik(chamfer: float, rest: float) -> dict:
    one = lambda x: {"articulated": x, "all": x}  # noqa: E731
    return {"count": one(48.0), "chamfer": one(chamfer), "rest_chamfer": one(rest),
            "vertex_error": one(0.05), "rest_vertex_error": one(0.09)}


def test_the_articulated_split_gets_its_own_section_and_readme_row():
    art_report = {"split": "test", "config": {"samples": 10_000, "ik_steps": 200,
                                              "ik_start": "posterior", "seconds": 2.0},
                  "inverse_kinematics": _ik(0.0164, 0.0566)}
    art = articulated_metrics(art_report, measured_by="neurok eval --data A --only ik",
                              generated_by="neurok dataset generate A")
    report = {"split": "test", "config": {"seconds": 2.0}, "rollout": _rollout(True)}
    card = render(CONFIG, report, generate="g", eval_command="e", calibrate_command="c",
                  name="b", articulated=art)
    assert "## Articulated test split: measured by `neurok eval --data A --only ik`" in card
    assert "trained on no articulated sequence" in card
    assert "| | articulated |\n|---|---|\n| IK Chamfer-L1 | 0.0164 |\n" in card
    assert "| rest pose (no deformation) | 0.0566 |\n" in card
    assert "Articulated" not in render(CONFIG, report, generate="g", eval_command="e",
                                       calibrate_command="c", name="b")
    spec = importlib.util.spec_from_file_location(
        "results", Path(__file__).resolve().parents[2] / "benchmarks" / "results.py")
    results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    (row,) = results._articulated_row(art)
    assert "| 0.0164 | rest pose 0.0566 | `neurok eval --data A --only ik` |" in row
    assert results._articulated_row(None) == []


def test_an_articulated_report_without_inverse_kinematics_is_refused():
    with pytest.raises(UsageError, match="no inverse kinematics"):
        articulated_metrics({"split": "test", "config": {}}, measured_by="m",
                            generated_by="g")
