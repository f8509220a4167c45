"""The training loop: schedule, run folder, validation, bundle, exact resume."""

from __future__ import annotations

import json
import math

import pytest
import torch
from safetensors.torch import load_file

from neurok_cli.errors import InputError, UsageError
from neurok_cli.model import load_bundle
from neurok_cli.train import TrainConfig, lr_at, resume_config, train
from tests.train.synth import make_dataset, tiny_config


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("ds"), train=1, val=1, frames=5)


def test_lr_schedule():
    cfg = TrainConfig(steps=100, lr=1.0, warmup=10, lr_final=0.1)
    assert lr_at(0, cfg) == pytest.approx(0.1) and lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(10, cfg) == pytest.approx(1.0)
    assert lr_at(55, cfg) == pytest.approx(0.55)  # half way down the cosine
    assert lr_at(100, cfg) == pytest.approx(0.1)
    assert all(lr_at(s, cfg) >= lr_at(s + 1, cfg) for s in range(10, 99))


def test_lr_schedule_under_a_time_budget():
    """With ``minutes``, the cosine runs over whichever of steps and time is further along."""
    cfg = TrainConfig(steps=100, lr=1.0, warmup=10, lr_final=0.1, minutes=1.0)
    assert lr_at(5, cfg, wall_s=59.0) == pytest.approx(0.6)  # warm-up counts steps only
    assert lr_at(10, cfg, wall_s=0.0) == pytest.approx(1.0)
    assert lr_at(10, cfg, wall_s=30.0) == pytest.approx(0.55)  # half the time: half way down
    assert lr_at(55, cfg, wall_s=6.0) == pytest.approx(0.55)  # the steps are further along
    assert lr_at(20, cfg, wall_s=90.0) == pytest.approx(0.1)  # past the budget: the floor
    with pytest.raises(UsageError, match="minutes"):
        TrainConfig(minutes=-1.0)


def test_a_time_budget_ends_the_run_with_its_bundle(dataset, tmp_path, monkeypatch):
    """The run stops at the first step past its budget, and writes checkpoint, validation and
    bundle as at its last step."""
    from neurok_cli.train import loop

    monkeypatch.setattr(loop._Run, "wall", lambda run: 7.0 * run.step)  # 7 s a step
    out = tmp_path / "run"
    result = train(TrainConfig(**{**tiny_config(dataset, out), "steps": 50, "minutes": 0.25}))
    assert result["step"] == 4 and result["bundle"]  # step 4 starts at 21 s > 15 s
    _, config = load_bundle(out / "bundle")
    assert config["training"]["steps"] == result["step"]
    assert config["training"]["wall_s"] >= 15
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["kind"] == "val" and records[-1]["step"] == result["step"]


def test_config_checks():
    with pytest.raises(UsageError, match="steps"):
        TrainConfig(steps=0)
    with pytest.raises(UsageError, match="unknown field.*bogus"):
        TrainConfig.from_dict({"bogus": 1})
    with pytest.raises(UsageError, match="lr"):
        TrainConfig(lr=-1.0)


def test_run_writes_folder_and_bundle(dataset, tmp_path):
    out = tmp_path / "run"
    seen = []
    result = train(TrainConfig(**tiny_config(dataset, out)),
                   progress=lambda done, total, status: seen.append((done, total, status)))
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5, 6] and seen[-1][2].startswith("loss ")
    assert result["step"] == 6 and math.isfinite(result["train"]["loss"])
    val = result["val"]
    assert set(val["rmse"]) == {"beam", "cloth", "soft", "all"}
    assert all(math.isfinite(v) for k in ("rmse", "chamfer") for v in val[k].values())
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == [2, 4, 6]
    assert [r["step"] for r in records if r["kind"] == "val"] == [3, 6]
    assert (out / "loss.png").stat().st_size > 1000
    model, config = load_bundle(out / "bundle")
    assert config["training"]["steps"] == 6 and config["training"]["ranks_agree"]
    assert config["training"]["data"]["categories"] == {"beam": 1, "cloth": 1, "soft": 1}
    assert config["metrics"]["validation"]["chamfer"]["all"] == val["chamfer"]["all"]
    assert model.cfg.width == 16


def _tensors(run):
    return load_file(str(run / "checkpoint" / "state.safetensors"))


def test_resume_is_exact(dataset, tmp_path):
    straight, split = tmp_path / "straight", tmp_path / "split"
    train(TrainConfig(**tiny_config(dataset, straight)))
    stopped = train(TrainConfig(**tiny_config(dataset, split)), stop_at=3)
    assert stopped["step"] == 3 and stopped["bundle"] is None
    assert not (split / "bundle").exists()
    # a few stale records past the checkpoint, as from a crash: resume must drop them
    with open(split / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"kind": "train", "step": 4, "loss": 9.0}) + "\n")
    done = train(resume_config(split))
    assert done["step"] == 6
    a, b = _tensors(straight), _tensors(split)
    assert a.keys() == b.keys()
    for key in a:
        if not key.startswith("rng."):
            assert torch.equal(a[key], b[key]), key
    steps = [json.loads(x)["step"] for x in (split / "metrics.jsonl").read_text().splitlines()]
    assert steps == [2, 3, 4, 6, 6]  # train 2, val 3, train 4, train 6, val 6


def test_run_folder_guards(dataset, tmp_path):
    out = tmp_path / "run"
    train(TrainConfig(**tiny_config(dataset, out, steps=2, val_every=0, ckpt_every=0)))
    with pytest.raises(UsageError, match="already holds a training run"):
        train(TrainConfig(**tiny_config(dataset, out)))
    with pytest.raises(UsageError, match="batch"):
        train(TrainConfig(**tiny_config(dataset, out, batch=8, resume=True)))
    with pytest.raises(UsageError, match="no checkpoint"):
        train(TrainConfig(**tiny_config(dataset, tmp_path / "new", resume=True)))
    # extending a finished run is allowed
    assert train(resume_config(out, steps=3))["step"] == 3


def test_bad_data(tmp_path, dataset):
    with pytest.raises(InputError, match="no such dataset"):
        train(TrainConfig(**tiny_config(tmp_path / "missing", tmp_path / "run")))
    with pytest.raises(UsageError, match="unknown model size"):
        train(TrainConfig(**tiny_config(dataset, tmp_path / "run", size="huge")))
    (tmp_path / "empty" / "train").mkdir(parents=True)
    with pytest.raises(InputError, match="no sequences"):
        train(TrainConfig(**tiny_config(tmp_path / "empty", tmp_path / "run")))
    assert not (tmp_path / "run").exists()


def test_worker_processes_give_the_same_batches(dataset):
    from neurok_cli.data.dataset import PairDataset, SamplingConfig
    from neurok_cli.train.distributed import DistInfo
    from neurok_cli.train.loop import _Steps

    cfg = TrainConfig(**tiny_config(dataset, "unused", steps=5))
    ds = PairDataset(dataset, "train", SamplingConfig(n_points=16, n_query=8))
    loader = torch.utils.data.DataLoader(_Steps(ds, cfg, DistInfo(), start=2), batch_size=None,
                                         num_workers=1)
    got = list(loader)
    assert len(got) == 3
    for step, batch in zip(range(2, 5), got):
        assert torch.equal(batch["points"], ds.sample_batch(cfg.batch, step)["points"])


def test_init_starts_from_a_bundle_and_changes_only_loss_fields(dataset, tmp_path):
    first = train(TrainConfig(**tiny_config(dataset, tmp_path / "a", val_every=0)))
    start, _ = load_bundle(first["bundle"])
    # a learning rate so small that one step leaves every parameter where the bundle had it
    tuned = train(TrainConfig(**tiny_config(
        dataset, tmp_path / "b", size={"strain_weight": 2.0}, init=first["bundle"], steps=1,
        warmup=0, lr=1e-12, val_every=0)))
    model, config = load_bundle(tuned["bundle"])
    assert config["model"]["strain_weight"] == 2.0 and model.cfg.width == start.cfg.width
    assert config["training"]["config"]["init"] == first["bundle"]
    assert math.isfinite(tuned["train"]["strain"])
    for (name, a), b in zip(start.state_dict().items(), model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), name
    # a fresh run of the same size starts elsewhere
    fresh = train(TrainConfig(**tiny_config(dataset, tmp_path / "c", steps=1, warmup=0,
                                            lr=1e-12, val_every=0, seed=5)))
    other, _ = load_bundle(fresh["bundle"])
    assert any(not torch.allclose(a, b) for a, b in zip(start.state_dict().values(),
                                                        other.state_dict().values()))
    assert "strain" not in fresh["train"]  # no strain term, no strain statistic
    with pytest.raises(UsageError, match="width cannot change when starting from a bundle"):
        train(TrainConfig(**tiny_config(dataset, tmp_path / "d", size={"width": 64},
                                        init=first["bundle"])))
    assert not (tmp_path / "d").exists()


def test_a_decoder_trained_into_the_objects_own_basis_sees_it(dataset, tmp_path):
    """``sampling.basis``: the batches carry each object's own basis rows and the loss
    projects the decoded field onto them, so the run differs from the same run without
    (the rows once fell off on their way to the loss, and the two runs were the same to
    the bit); the bundle records it."""
    runs = {}
    for name, sampling in (("plain", {}), ("into", {"basis": True})):
        out = tmp_path / name
        runs[name] = train(TrainConfig(**tiny_config(dataset, out, steps=2, val_every=2,
                                                     ckpt_every=2, sampling=sampling)))
        _, config = load_bundle(out / "bundle")
        assert config["training"]["sampling"]["basis"] is bool(sampling)
    assert runs["into"]["train"]["loss"] != runs["plain"]["train"]["loss"]
    assert math.isfinite(runs["into"]["train"]["loss"])
