"""``neurok eval`` and ``neurok calibrate`` on a small dataset made by the data engine."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from neurok_cli.animate import resolve_weights
from neurok_cli.cli import app
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
    assert all(len(c) == 16 for c in roll["curve"].values())  # 0.5 s at 30 fps, from t = 0
    assert plot.stat().st_size > 10_000


def test_calibrate_writes_the_bundle(corpus, tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(resolve_weights("neurok-base"), bundle)
    result = runner.invoke(app, ["calibrate", "--data", str(corpus), "--weights", str(bundle),
                                 "--split", "train", "--per-category", "1", "--json"])
    assert result.exit_code == 0, result.output
    cal = json.loads(result.output)
    stored = read_bundle_config(bundle)["calibration"]
    assert stored == cal
    for entry in cal.values():
        i = entry["grid"].index(entry["stiffness"])
        assert entry["error"] == entry["errors"][i]


def test_eval_errors(tmp_path):
    result = runner.invoke(app, ["eval", "--data", str(tmp_path)])
    assert_one_error_line(result, "not a 4D dataset")
