"""``neurok train`` as a user meets it: help, a run, a resume, and one-line errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from tests.conftest import assert_one_error_line
from tests.train.synth import TINY_MODEL, make_dataset

runner = CliRunner()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("ds"), train=1, val=1, frames=5)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"size": TINY_MODEL, "warmup": 1, "val_pairs": 3,
                                "val_ik_steps": 2, "log_every": 1}))
    return path


def _run(*args: str):
    return runner.invoke(app, list(map(str, args)))


def test_help():
    result = _run("train", "--help")
    assert result.exit_code == 0 and "--resume" in result.output and "--data" in result.output


def test_train_table_then_resume_json(dataset, config, tmp_path):
    out = tmp_path / "run"
    result = _run("train", "--data", dataset, "--out", out, "--config", config, "--steps", 2,
                  "--batch", 2, "--device", "cpu", "--val-every", 1, "--ckpt-every", 1)
    assert result.exit_code == 0, result.output
    assert "IK Chamfer-L1" in result.stdout and "bundle:" in result.stdout
    assert (out / "bundle" / "config.json").is_file()
    # continue the same run for one more step: its options come from the checkpoint
    result = _run("train", "--out", out, "--resume", "--steps", 3, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["step"] == 3 and data["bundle"] == str(out / "bundle")
    bundle = json.loads((out / "bundle" / "config.json").read_text())
    assert bundle["training"]["command"].startswith("neurok ")


def test_errors(dataset, config, tmp_path):
    assert_one_error_line(_run("train", "--data", tmp_path / "nope", "--out", tmp_path / "r"),
                          "no such dataset")
    (tmp_path / "empty" / "train").mkdir(parents=True)
    assert_one_error_line(_run("train", "--data", tmp_path / "empty", "--out", tmp_path / "r"),
                          "no sequences")
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--size",
                               "huge"),
                          "unknown model size 'huge'; choose one of tiny, small, base")
    assert_one_error_line(_run("train", "--out", tmp_path / "r"), "give --data")
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--size",
                               "tiny", "--init", tmp_path / "bundle"),
                          "--size and --init exclude each other")
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--init",
                               tmp_path / "no-bundle"), "no-bundle")
    assert_one_error_line(_run("train", "--out", tmp_path / "r", "--resume"), "no checkpoint")
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--config",
                         tmp_path / "missing.json"), "no such file")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"stepz": 3}))
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--config",
                               bad), "unknown field(s) stepz")
    assert_one_error_line(_run("train", "--data", dataset, "--out", tmp_path / "r", "--config",
                         config, "--device", "tpu"), "unknown device")
    assert not (tmp_path / "r").exists()
