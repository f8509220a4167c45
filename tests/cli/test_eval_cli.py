"""``neurok eval`` and ``neurok calibrate`` on a small dataset made by the data engine."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.evaluate.calibrate import MAX_PEAK
from neurok_cli.model.bundle import read_bundle_config
from neurok_cli.sim.generate import GenerateConfig, generate
from tests.conftest import assert_one_error_line

runner = CliRunner()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Six short sequences (2 per category); the test split holds unseen families."""
    out = tmp_path_factory.mktemp("corpus") / "ds"
    generate(GenerateConfig(out=out, count=12, seed=5, workers=1, seconds=0.5))
    return out


def test_eval_reports_every_part_per_category(corpus, tmp_path):
    report, plot = tmp_path / "r.json", tmp_path / "r.png"
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--split", "test",
                                 "--space", "learned",
                                 "--pairs", "3", "--samples", "2000", "--objects", "3",
                                 "--rollouts", "3", "--seconds", "0.5", "--json", str(report),
                                 "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "IK Chamfer-L1" in result.output
    r = json.loads(report.read_text())
    ik = r["inverse_kinematics"]
    assert ik["count"]["all"] == 3
    assert 0 <= ik["chamfer"]["all"] < 0.2 and 0 <= ik["vertex_error"]["all"] < 0.2
    assert r["plausibility"]["nan_samples"] == 0
    roll = r["rollout"]
    assert roll["failed"]["all"] == 0
    assert 0 <= roll["shape_error"]["all"] < 0.2 and 0 <= roll["rest_shape_error"]["all"] < 0.2
    assert "rollout shape error" in result.output
    assert all(len(c) == 16 for c in roll["curve"].values())  # 0.5 s at 30 fps, from t = 0
    each = roll["sequences"]  # every sequence's own figures, whose means are the table's
    assert len(each) == roll["count"]["all"] and all(s["sequence"] for s in each)
    for cat in {s["category"] for s in each}:
        mine = [s["error"] for s in each if s["category"] == cat]
        assert abs(sum(mine) / len(mine) - roll["error"][cat]) < 1e-12
    assert plot.stat().st_size > 10_000
    # the shipped bundle holds a strain limit: samples within it, as animate decodes them
    plaus = r["plausibility"]
    assert r["strain_limit"] and "limited_samples" in plaus
    for c, v in plaus["limited_samples"]["strain_p99"].items():  # both skinned, one limited
        assert v <= plaus["skinned_samples"]["strain_p99"][c] + 1e-9
    # and the samples and reconstructions made into meshes as animate makes them
    for part in ("skinned_samples", "skinned_reconstructions"):
        assert all(np.isfinite(v) for v in plaus[part]["crumple"].values())
    assert all(0 <= s["strain"] < 1 and 0 <= s["engine_strain"] < 1 for s in each)
    assert "rollout edge strain" in result.output


def test_calibrate_writes_the_bundle(corpus, tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(resolve_weights("neurok-base"), bundle)
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--split", "train", "--per-category", "1", "--prior-pairs", "4",
                                 "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    stored = read_bundle_config(bundle)
    assert stored["calibration"] == out["stiffness"]
    assert stored["latent_prior"] == out["prior"]
    assert stored["strain_limit"] == out["strain"]
    for entry in out["strain"].values():  # the data's 90 % quantile, between its median and 99 %
        assert entry["quantile"] == 0.9 and entry["split"] == "train"
        assert entry["p50"] <= entry["limit"] <= entry["p99"] and entry["sequences"] >= 1
    for entry in out["stiffness"].values():
        i = entry["grid"].index(entry["stiffness"])
        assert entry["error"] == entry["errors"][i]
        # chosen by the shape error, among the scales that stay inside the latent bound
        assert entry["shape_error"] == entry["shape_errors"][i]
        inside = [j for j, p in enumerate(entry["latent_peaks"]) if p < MAX_PEAK]
        if inside:
            assert entry["shape_error"] == min(entry["shape_errors"][j] for j in inside)
        else:  # no scale stayed inside: the grid's stiffest
            assert entry["stiffness"] == entry["grid"][-1]
    k = stored["model"]["latent_dim"]
    for entry in out["prior"].values():
        L = np.array(entry["scale_tril"])
        assert L.shape == (k, k) and np.allclose(L, np.tril(L)) and (np.diag(L) > 0).all()
        assert entry["pairs"] == 4 and entry["rms"] > 0
        assert np.isclose(entry["rms"], np.sqrt((L**2).sum() / k), rtol=1e-3)


def test_eval_without_the_strain_limit_decodes_as_is(corpus, tmp_path):
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--split", "train", "--only",
                                 "prior", "--space", "learned",
                                 "--objects", "3", "--no-strain-limit", "--json",
                                 str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["strain_limit"] is None and report["config"]["strain_limit"] is False
    assert "limited_samples" not in report["plausibility"]


def test_calibrate_only_the_prior_keeps_the_stiffness(corpus, tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(resolve_weights("neurok-base"), bundle)
    before = read_bundle_config(bundle)["calibration"]
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--only", "prior", "--prior-pairs", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.output)) == ["prior"]
    config = read_bundle_config(bundle)
    assert config["calibration"] == before and set(config["latent_prior"]) <= {
        "beam", "cloth", "soft"}
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--weights", str(bundle),
                                 "--space", "learned",
                                 "--split", "train", "--only", "prior", "--objects", "3",
                                 "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    plaus = json.loads((tmp_path / "r.json").read_text())["plausibility"]
    assert plaus["prior"] == "fitted" and "unit_samples" in plaus
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--only", "springs"])
    assert_one_error_line(result, "unknown calibration part")


def test_calibrate_one_category_keeps_the_others(corpus, tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(resolve_weights("neurok-base"), bundle)
    before = read_bundle_config(bundle)
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--split", "train", "--per-category", "1", "--prior-pairs", "2",
                                 "--category", "soft", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert list(out["stiffness"]) == ["soft"] and list(out["prior"]) == ["soft"]
    after = read_bundle_config(bundle)
    assert list(out["strain"]) == ["soft"]
    for key, part in (("calibration", "stiffness"), ("latent_prior", "prior"),
                      ("strain_limit", "strain")):
        assert after[key] == {**before[key], "soft": out[part]["soft"]}
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--category", "jelly"])
    assert_one_error_line(result, "--category jelly: not in")
    assert read_bundle_config(bundle) == after


def test_eval_fits_and_rolls_out_in_each_object_s_own_space(corpus, tmp_path, monkeypatch):
    """The default space, animate's: no bundle is loaded, the fits are least squares in
    frame a's handle space and the rollouts animate's own handle motion, with the same keys
    as the learned space's."""
    import neurok_cli.evaluate.run as run

    monkeypatch.setattr(run, "_load", lambda *a: pytest.fail("loaded a bundle"))
    report = tmp_path / "r.json"
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--split", "test",
                                 "--pairs", "3", "--samples", "2000", "--rollouts", "3",
                                 "--seconds", "0.5", "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "own handle space" in result.output
    r = json.loads(report.read_text())
    assert r["space"] == "handles" and r["weights"] is None
    roll = r["rollout"]
    assert roll["count"]["all"] == len(roll["sequences"]) >= 1 and roll["failed"]["all"] == 0
    assert 0 <= roll["error"]["all"] < roll["rest_error"]["all"]
    assert all(s["latent_peak"] == 0.0 for s in roll["sequences"])
    ik = r["inverse_kinematics"]
    assert ik["count"]["all"] == 3
    assert 0 <= ik["chamfer"]["all"] < ik["rest_chamfer"]["all"]
    assert 0 <= ik["vertex_error"]["all"] < ik["rest_vertex_error"]["all"]
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--only", "prior"])
    assert_one_error_line(result, "prior samples are not measured")
    result = runner.invoke(app, ["eval", "--data", str(corpus), "--space", "modes"])
    assert_one_error_line(result, "must be learned or handles")


def test_eval_errors(tmp_path):
    result = runner.invoke(app, ["eval", "--data", str(tmp_path)])
    assert_one_error_line(result, "not a 4D dataset")
    result = runner.invoke(app, ["eval", "--data", str(tmp_path), "--ik-start", "middle"])
    assert_one_error_line(result, "ik_start (--ik-start) must be posterior or prior")


def test_inverse_kinematics_starts_from_the_encoders_guess(corpus):
    # with no refinement the fit is its start: the prior mean decodes to the rest shape
    # exactly, the deformation encoder's guess does not (the train split: its frames moved)
    from neurok_cli.evaluate.suite import EvalConfig, inverse_kinematics
    from neurok_cli.model import load_bundle

    model, _ = load_bundle(resolve_weights("neurok-base"))
    out = {start: inverse_kinematics(model, corpus, "train", EvalConfig(
        pairs=3, samples=2000, ik_steps=0, ik_start=start)) for start in ("prior", "posterior")}
    prior, guess = out["prior"], out["posterior"]
    assert prior["chamfer"]["all"] == pytest.approx(prior["rest_chamfer"]["all"], abs=1e-6)
    assert abs(guess["chamfer"]["all"] - guess["rest_chamfer"]["all"]) > 1e-5
