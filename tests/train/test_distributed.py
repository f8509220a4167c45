"""Data-parallel training: two CPU processes under torchrun (gloo) via the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from neurok_cli.errors import UsageError
from neurok_cli.model import load_bundle
from neurok_cli.train.distributed import DistInfo, from_env, mean_over_ranks
from tests.train.synth import TINY_MODEL, make_dataset


def test_env_parsing(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert from_env() == DistInfo(0, 1, 0) and not from_env().enabled
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    info = from_env()
    assert info.enabled and not info.is_main and info.local_rank == 1
    monkeypatch.setenv("RANK", "2")
    with pytest.raises(UsageError, match="RANK"):
        from_env()
    assert mean_over_ranks({"a": 1.0}, DistInfo(), None) == {"a": 1.0}


def test_torchrun_two_processes(tmp_path):
    data = make_dataset(tmp_path / "ds", train=1, val=1, frames=5)
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps({"size": TINY_MODEL, "warmup": 1, "val_pairs": 3,
                                  "val_ik_steps": 2, "log_every": 1, "device": "cpu"}))
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
           "2", "-m", "neurok_cli", "train", "--data", str(data), "--out", str(out),
           "--config", str(config), "--steps", "3", "--batch", "4", "--val-every", "2",
           "--ckpt-every", "2", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    start = proc.stdout.index("{")  # rank 0 alone prints the result
    result = json.loads(proc.stdout[start:])
    assert result["processes"] == 2 and result["step"] == 3
    _, bundle = load_bundle(out / "bundle")
    assert bundle["training"]["ranks_agree"] is True  # both ranks hold identical parameters
    assert bundle["training"]["hardware"]["processes"] == 2
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2, 3]  # rank 0 only
