"""Checkpoints round-trip model, optimizer and RNG states exactly, without pickles."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from neurok_cli.errors import InputError
from neurok_cli.model import NeurokModel, model_config
from neurok_cli.train.checkpoint import (
    append_metrics,
    checkpoint_dir,
    has_checkpoint,
    load_checkpoint,
    plot_curves,
    read_metrics,
    save_checkpoint,
    write_metrics,
)
from tests.train.synth import TINY_MODEL


def _trained(seed: int):
    torch.manual_seed(seed)
    model = NeurokModel(model_config(TINY_MODEL))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    for _ in range(2):
        opt.zero_grad()
        sum(p.square().sum() for p in model.parameters()).backward()
        opt.step()
    return model, opt


def test_round_trip_is_exact(tmp_path):
    model, opt = _trained(0)
    torch.manual_seed(123)
    np.random.seed(4)
    random.seed(5)
    save_checkpoint(tmp_path, model=model, optimizer=opt, step=2, config={"lr": 1e-3},
                    extra={"wall_s": 1.5})
    expected = (torch.rand(3), np.random.rand(), random.random())
    assert has_checkpoint(tmp_path)
    assert not list(tmp_path.glob(".*"))  # no temporary leftovers

    other, other_opt = _trained(1)
    state = load_checkpoint(tmp_path, model=other, optimizer=other_opt)
    assert state["step"] == 2 and state["config"] == {"lr": 1e-3}
    assert state["extra"]["wall_s"] == 1.5
    for (k, a), (_, b) in zip(model.state_dict().items(), other.state_dict().items()):
        assert torch.equal(a, b), k
    sa, sb = opt.state_dict(), other_opt.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert isinstance(sb["param_groups"][0]["betas"], tuple)
    for i in sa["state"]:
        for key in sa["state"][i]:
            assert torch.equal(sa["state"][i][key], sb["state"][i][key])
    assert torch.equal(torch.rand(3), expected[0])
    assert np.random.rand() == expected[1] and random.random() == expected[2]


def test_files_are_safetensors_and_json(tmp_path):
    model, opt = _trained(0)
    folder = save_checkpoint(tmp_path, model=model, optimizer=opt, step=7, config={})
    tensors = load_file(str(folder / "state.safetensors"))
    assert "rng.torch" in tensors and tensors["rng.torch"].dtype == torch.uint8
    assert any(k.startswith("optim.0.exp_avg") for k in tensors)
    assert json.loads((folder / "state.json").read_text())["step"] == 7
    # saving again replaces the folder atomically
    save_checkpoint(tmp_path, model=model, optimizer=opt, step=8, config={})
    assert json.loads((folder / "state.json").read_text())["step"] == 8


def test_bad_checkpoints(tmp_path):
    with pytest.raises(InputError, match="no checkpoint"):
        load_checkpoint(tmp_path, model=NeurokModel(model_config(TINY_MODEL)))
    model, opt = _trained(0)
    save_checkpoint(tmp_path, model=model, optimizer=opt, step=1, config={})
    bigger = NeurokModel(model_config(TINY_MODEL, width=32))
    with pytest.raises(InputError, match="does not fit"):
        load_checkpoint(tmp_path, model=bigger)
    (checkpoint_dir(tmp_path) / "state.safetensors").write_bytes(b"garbage")
    with pytest.raises(InputError, match="unreadable"):
        load_checkpoint(tmp_path, model=model)


def test_metrics_log_and_plot(tmp_path):
    records = [{"kind": "train", "step": s, "loss": 1.0 / s, "rmse": 0.1 / s} for s in (1, 2, 3)]
    records.append({"kind": "val", "step": 2, "rmse": {"all": 0.05}, "chamfer": {"all": 0.02},
                    "rest_rmse": {"all": 0.1}})
    write_metrics(tmp_path, records[:2])
    for r in records[2:]:
        append_metrics(tmp_path, r)
    assert read_metrics(tmp_path) == records
    assert [r["step"] for r in read_metrics(tmp_path, upto=2)] == [1, 2, 2]
    plot_curves(records, tmp_path / "loss.png")
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
