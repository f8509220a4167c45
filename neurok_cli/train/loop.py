"""``train(cfg)``: fit a NeurokModel on a 4D dataset and write a weights bundle.

A run folder ``out`` ends up holding ``checkpoint/`` (latest state, for ``resume``),
``metrics.jsonl`` (one JSON record per log or validation), ``loss.png`` and ``bundle/``.

Exactness: a step's batch is a pure function of (seed, step) (see
:mod:`neurok_cli.data.dataset`) and torch's global generator is re-seeded from (seed, step,
rank) before every step (the VAE's reparameterisation noise, dropout), so a resumed run takes
bit for bit the same steps as an uninterrupted one on the same device, and the global batch
does not depend on the number of DDP processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..data.dataset import PAIR_KEYS, PairDataset, SamplingConfig, collate
from ..data.format import read_header, sequence_files
from ..data.metrics import chamfer_l1, rmse
from ..errors import UsageError
from ..model import NeurokModel, model_config, resolve_device, save_bundle
from ..model.bundle import load_bundle, read_bundle_config
from ..model.config import ModelConfig, from_fields
from . import distributed as dd
from .checkpoint import (
    PLOT,
    append_metrics,
    has_checkpoint,
    load_checkpoint,
    plot_curves,
    read_checkpoint_state,
    read_metrics,
    save_checkpoint,
    write_metrics,
)

Progress = Callable[[int, int, str | None], None]
BUNDLE = "bundle"
# model fields a run started from a bundle (``init``) may change: they weigh the loss, or
# grow the model so that it starts decoding as the bundle did (NeurokModel.load_grown):
# the decoder's rotation outputs (rigid), more latent dims, a smooth head
TUNABLE = ("kl_weight", "strain_weight", "strain_neighbours", "relative_floor", "dropout",
           "rigid", "rigid_weight", "latent_dim", "smooth_degree", "smooth_weight")
# fields that define the optimisation: a resumed run must keep them to continue exactly
LOCKED = ("size", "init", "sampling", "batch", "lr", "lr_final", "warmup", "weight_decay",
          "grad_clip", "seed", "bf16")


@dataclass
class TrainConfig:
    """Everything a training run depends on (written into checkpoints and the bundle)."""

    data: str = ""  # dataset folder (dataset.json, train/, val/)
    out: str = "runs/neurok"  # run folder: checkpoint/, metrics.jsonl, loss.png, bundle/
    size: str | dict = "small"  # model size name (tiny, small, base) or ModelConfig fields
    # bundle to start from (fine-tuning): its model config and parameters; ``size`` is then
    # ignored, or a dict of the loss fields to change (see TUNABLE)
    init: str = ""
    sampling: dict = field(default_factory=dict)  # SamplingConfig overrides (P, Q: model's)
    steps: int = 20000  # optimizer steps in all
    # a wall-clock budget (0: none): the run ends, with its bundle, at whichever of ``steps``
    # and this comes first, and the learning rate decays over the one that is further along
    # (so such a run resumes, but not bit for bit: its learning rate follows the clock)
    minutes: float = 0.0
    batch: int = 16  # objects per step, over all processes
    lr: float = 3e-4  # peak learning rate (AdamW)
    lr_final: float = 0.1  # cosine decay ends at lr * lr_final
    warmup: int = 500  # steps of linear warm-up from 0
    weight_decay: float = 0.01  # AdamW decay of matrices (not of biases, norms, tokens)
    grad_clip: float = 1.0  # max global gradient norm (0: no clipping)
    val_every: int = 1000  # steps between validations (0: only at the end)
    val_pairs: int = 48  # fixed validation pairs (stratified by category, no augmentation)
    val_ik_steps: int = 50  # Adam steps of the inverse-kinematics fit in validation
    ckpt_every: int = 1000  # steps between checkpoints (0: only at the end)
    log_every: int = 50  # steps per train-loss record
    workers: int = -1  # batch-sampling processes (-1: 0 on CPU, up to 8 on CUDA)
    seed: int = 0  # seeds initialisation, batches and noise
    device: str = "auto"  # auto, cpu, cuda, cuda:N
    bf16: bool = True  # bf16 autocast on CUDA (ignored on CPU)
    resume: bool = False  # continue the run in ``out`` from its checkpoint

    def __post_init__(self) -> None:
        ints = {"steps": 1, "batch": 1, "warmup": 0, "val_every": 0, "val_pairs": 1,
                "val_ik_steps": 0, "ckpt_every": 0, "log_every": 1, "workers": -1}
        for name, low in ints.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise UsageError(f"train config: {name} must be an integer >= {low}, got "
                                 f"{value!r}")
        if not (isinstance(self.minutes, (int, float)) and self.minutes >= 0):
            raise UsageError(f"train config: minutes must be a number >= 0, got "
                             f"{self.minutes!r}")
        if not (self.lr > 0 and 0 <= self.lr_final <= 1 and self.weight_decay >= 0
                and self.grad_clip >= 0):
            raise UsageError("train config: lr must be > 0, lr_final in [0, 1], weight_decay "
                             "and grad_clip >= 0")

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        """A config from JSON fields; unknown fields are a UsageError listing the valid ones."""
        return from_fields(cls, data, "train config")


def resume_config(out: str | Path, **overrides) -> TrainConfig:
    """The config of the run in ``out`` (from its checkpoint) with ``overrides`` applied and
    ``resume`` set: what ``neurok train --out RUN --resume`` continues with."""
    saved = read_checkpoint_state(out)["config"]
    return TrainConfig.from_dict({**saved, **overrides, "out": str(out), "resume": True})


def spent(wall_s: float, cfg: TrainConfig) -> float:
    """The share of the run's time budget (``minutes``) that ``wall_s`` seconds use; 0 when
    it has none."""
    return wall_s / (60 * cfg.minutes) if cfg.minutes > 0 else 0.0


def lr_at(step: int, cfg: TrainConfig, wall_s: float = 0.0) -> float:
    """Learning rate of step ``step`` (0-based) at ``wall_s`` seconds into the run: linear
    warm-up, then cosine to lr·lr_final over the steps or the time budget, whichever is
    further along."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = min(1.0, max((step - cfg.warmup) / max(1, cfg.steps - cfg.warmup), spent(wall_s, cfg)))
    return cfg.lr * (cfg.lr_final + (1 - cfg.lr_final) * 0.5 * (1 + math.cos(math.pi * t)))


def step_seed(seed: int, step: int, rank: int) -> int:
    """The torch seed of one step of one rank."""
    return int(np.random.SeedSequence([seed, 2, step, rank]).generate_state(1)[0])


class _Loss(nn.Module):
    """``model.loss`` as a forward, so DDP sees (and synchronises) the call."""

    def __init__(self, model: NeurokModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        return self.model.loss(batch)


class _Steps(torch.utils.data.Dataset):
    """Batches of steps ``start..stop-1`` for this rank (a DataLoader may prefetch them)."""

    def __init__(self, ds: PairDataset, cfg: TrainConfig, info: dd.DistInfo, start: int):
        self.ds, self.cfg, self.info, self.start = ds, cfg, info, start

    def __len__(self) -> int:
        return max(0, self.cfg.steps - self.start)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return self.ds.sample_batch(self.cfg.batch, self.start + i, rank=self.info.rank,
                                    world_size=self.info.world_size)


def _optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95))


def _check_run_folder(cfg: TrainConfig) -> None:
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"«out» {out}: exists and is not a folder; choose a run folder")
    if cfg.resume:
        if not has_checkpoint(out):
            raise UsageError(f"{out}: no checkpoint to resume; start without «resume»")
        saved = read_checkpoint_state(out)["config"]
        changed = [k for k in LOCKED if saved.get(k) != asdict(cfg)[k]]
        if changed:
            raise UsageError(f"«resume»: {', '.join(changed)} differ from the run's own "
                             f"({', '.join(f'{k}={saved.get(k)!r}' for k in changed)}); keep "
                             "them or start a new «out»")
    elif has_checkpoint(out):
        raise UsageError(f"{out}: already holds a training run; pass «resume» to continue it "
                         "or choose another «out»")


def _model_config(cfg: TrainConfig) -> ModelConfig:
    """The model config of a run: the size's, or with ``init`` the bundle's with the loss
    fields of a ``size`` dict on top (anything else would not fit the bundle's parameters)."""
    if not cfg.init:
        return model_config(cfg.size)
    changes = cfg.size if isinstance(cfg.size, dict) else {}
    fixed = sorted(set(changes) - set(TUNABLE))
    if fixed:
        raise UsageError(f"«init» {cfg.init}: {', '.join(fixed)} cannot change when starting "
                         f"from a bundle; only {', '.join(TUNABLE)} can")
    return model_config(read_bundle_config(cfg.init).get("model") or {}, **changes)


def _own_weights(vertices, faces, category: str):
    """An object's own handle weights (N, H) at its vertices, as ``animate`` builds them
    (``sampling.basis``: a decoder trained into that basis)."""
    from ..deform.own.basis import own_basis

    basis, _, _ = own_basis(vertices, faces, category)
    return basis.weights[: len(vertices)]


def _sampling(cfg: TrainConfig, model_cfg) -> SamplingConfig:
    fields = {"n_points": model_cfg.n_points, "n_query": model_cfg.n_query, "seed": cfg.seed}
    valid = [f.name for f in dataclasses.fields(SamplingConfig)]
    unknown = sorted(set(cfg.sampling) - set(valid))
    if unknown:
        raise UsageError(f"train config: unknown sampling field(s) {', '.join(unknown)}; "
                         f"valid fields are {', '.join(valid)}")
    return SamplingConfig(**{**fields, **cfg.sampling})


def _hardware(device: torch.device, info: dd.DistInfo) -> dict:
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return {"device": str(device), "gpu": gpu, "processes": info.world_size,
            "cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
            "torch": torch.__version__, "python": platform.python_version()}


def validate(model: NeurokModel, items: list[dict[str, np.ndarray]], categories: list[str],
             device: torch.device, *, ik_steps: int, chunk: int = 16) -> dict:
    """Accuracy on fixed pairs, per category and over all (``"all"``).

    ``rmse``: posterior-mean reconstruction error of the displacement at the query vertices
    (canonical units: the rest shape's largest extent is 1). ``chamfer``: inverse kinematics —
    fit z from the prior mean to the target displacement at the query vertices, decode at the
    surface samples, Chamfer-L1 against the target samples (unit: target bbox diagonal).
    ``rest_*``: the same for the undeformed shape (the do-nothing baseline).
    """
    was_training = model.training
    model.eval()
    rows = []
    for i in range(0, len(items), chunk):
        part = items[i:i + chunk]
        b = {k: v.to(device) for k, v in collate(part).items()}
        with torch.no_grad():
            rec = model.reconstruct(b).cpu().numpy()
            prior = model.encode_prior(b["points"], b["normals"])
        z = model.fit_latent(prior, b["query"], b["delta_query"], steps=ik_steps)
        with torch.no_grad():
            dense = model.decode(z, prior, b["points"]).cpu().numpy()
        for j, it in enumerate(part):
            pts, target = it["points"], it["points"] + it["delta_points"]
            rows.append((categories[int(it["category"])], {
                "rmse": rmse(rec[j], it["delta_query"]),
                "chamfer": chamfer_l1(pts + dense[j], target),
                "rest_rmse": rmse(np.zeros_like(it["delta_query"]), it["delta_query"]),
                "rest_chamfer": chamfer_l1(pts, target)}))
    model.train(was_training)
    out: dict[str, dict[str, float]] = {}
    for name in ("rmse", "chamfer", "rest_rmse", "rest_chamfer"):
        groups = {c: [r[name] for cat, r in rows if cat == c] for c in categories}
        out[name] = {c: float(np.mean(v)) for c, v in groups.items() if v}
        out[name]["all"] = float(np.mean([r[name] for _, r in rows]))
    return out


class _Run:
    """One training process: data, model, optimizer and the run folder (rank 0 writes)."""

    def __init__(self, cfg: TrainConfig, info: dd.DistInfo, device: torch.device,
                 command: str | None) -> None:
        self.cfg, self.info, self.device, self.command = cfg, info, device, command
        self.out = Path(cfg.out)
        _check_run_folder(cfg)
        if cfg.batch % info.world_size:
            raise UsageError(f"«batch» {cfg.batch} must be a multiple of the "
                             f"{info.world_size} processes")
        model_cfg = _model_config(cfg)
        self.sampling = _sampling(cfg, model_cfg)
        if (Path(cfg.data) / "dataset.json").is_file():
            read_header(cfg.data)  # checks format and version
        weights = _own_weights if self.sampling.basis else None
        self.train_ds = PairDataset(cfg.data, "train", self.sampling, weights=weights)
        has_val = bool(sequence_files(cfg.data, "val"))
        self.val_ds = PairDataset(cfg.data, "val", self.sampling, weights=weights) \
            if has_val else self.train_ds
        torch.manual_seed(cfg.seed)  # parameter initialisation
        self.model = NeurokModel(model_cfg).to(device)
        if cfg.init and not cfg.resume:
            start, _ = load_bundle(cfg.init, device="cpu")
            self.model.load_grown(start.state_dict())
        self.opt = _optimizer(self.model, cfg)
        self.step, self.wall0, self.records = 0, 0.0, []
        if cfg.resume:
            state = load_checkpoint(self.out, model=self.model, optimizer=self.opt)
            self.step, self.wall0 = state["step"], state["extra"].get("wall_s", 0.0)
            self.records = read_metrics(self.out, upto=self.step)
        self.loss = dd.wrap(_Loss(self.model), info, device)
        use_bf16 = cfg.bf16 and device.type == "cuda"
        self.autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if use_bf16
                         else contextlib.nullcontext())
        self.val_items: list[dict] = []
        if info.is_main:
            self.val_items = self.val_ds.fixed_pairs(
                cfg.val_pairs, cfg=self.sampling.without_augmentation())
            self.out.mkdir(parents=True, exist_ok=True)
            write_metrics(self.out, self.records)
        dd.barrier(info)
        self.t0 = time.perf_counter()
        self.window: list[dict] = []
        self.skipped = 0
        self.now = self.wall0  # the run's wall time at the start of the latest step
        self.last_loss = math.nan
        self.last_val: dict = {}

    def wall(self) -> float:
        return self.wall0 + time.perf_counter() - self.t0

    def clock(self) -> float:
        """The run's wall time, the same on every rank (their mean), so that all ranks take
        the same learning rate and stop at the same step under a time budget."""
        if not self.cfg.minutes:
            return self.wall()
        return dd.mean_over_ranks({"wall": self.wall()}, self.info, self.device)["wall"]

    def batches(self):
        cuda = self.device.type == "cuda"
        workers = self.cfg.workers if self.cfg.workers >= 0 else (
            min(8, (os.cpu_count() or 1) // 2) if cuda else 0)
        return torch.utils.data.DataLoader(
            _Steps(self.train_ds, self.cfg, self.info, self.step), batch_size=None,
            shuffle=False, num_workers=workers, pin_memory=cuda,
            prefetch_factor=4 if workers else None)

    def train_step(self, batch: dict[str, torch.Tensor]) -> None:
        """One optimizer step on this rank's share of the batch of step ``self.step``."""
        cfg = self.cfg
        torch.manual_seed(step_seed(cfg.seed, self.step, self.info.rank))
        self.now = self.clock()
        lr = lr_at(self.step, cfg, self.now)
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        batch = {k: batch[k].to(self.device, non_blocking=True)
                 for k in (*PAIR_KEYS, "basis") if k in batch}  # (basis: sampling.basis)
        with self.autocast:
            loss, stats = self.loss(batch)
        loss.backward()
        params = self.model.parameters()
        norm = float(nn.utils.clip_grad_norm_(params, cfg.grad_clip if cfg.grad_clip > 0
                                              else math.inf))
        if math.isfinite(norm):  # identical on every rank: gradients are all-reduced
            self.opt.step()
            self.skipped = 0
        else:
            self.skipped += 1
            if self.skipped >= 20:
                raise UsageError(f"training diverged: no finite gradient for 20 steps before "
                                 f"step {self.step + 1}; lower «lr» or check the data")
        self.step += 1
        self.last_loss = stats["loss"]
        self.window.append({**stats, "grad_norm": norm, "lr": lr})

    def log_train(self) -> dict:
        keys = [k for k in ("loss", "recon", "kl", "rmse", "strain", "turn", "grad_norm")
                if k in self.window[0]]
        finite = [w for w in self.window if math.isfinite(w["grad_norm"])] or self.window
        mean = {k: float(np.mean([w[k] for w in finite])) for k in keys}
        mean = dd.mean_over_ranks(mean, self.info, self.device)
        record = {"kind": "train", "step": self.step, "lr": self.window[-1]["lr"], **mean,
                  "wall_s": round(self.wall(), 3)}
        self.window = []
        if self.info.is_main:
            self.records.append(record)
            append_metrics(self.out, record)
        return record

    def log_val(self) -> None:
        if not self.info.is_main:
            return
        val = validate(self.model, self.val_items, self.val_ds.categories, self.device,
                       ik_steps=self.cfg.val_ik_steps, chunk=min(self.cfg.batch, 16))
        self.last_val = {"kind": "val", "step": self.step, "split": self.val_ds.split, **val}
        self.records.append(self.last_val)
        append_metrics(self.out, self.last_val)
        plot_curves(self.records, self.out / PLOT)

    def checkpoint(self) -> None:
        if self.info.is_main:
            save_checkpoint(self.out, model=self.model, optimizer=self.opt, step=self.step,
                            config=asdict(self.cfg), extra={"wall_s": self.wall()})

    def fit(self, progress: Progress | None, stop_at: int | None) -> dict:
        cfg, every = self.cfg, lambda n: n > 0 and self.step % n == 0
        train_rec: dict = next((r for r in reversed(self.records) if r["kind"] == "train"), {})
        for batch in self.batches():
            self.train_step(batch)
            done = self.step == cfg.steps or spent(self.now, cfg) >= 1
            if every(cfg.log_every) or done:
                train_rec = self.log_train()
            if every(cfg.val_every) and not done:
                self.log_val()
            stop = stop_at is not None and self.step >= stop_at and not done
            if every(cfg.ckpt_every) or stop or done:
                self.checkpoint()
            if progress is not None:
                progress(self.step, cfg.steps, f"loss {self.last_loss:.4g}")
            if stop:
                return self.result(train_rec, bundle=None)
            if done:
                break
        self.log_val()
        digests = dd.gather(dd.parameter_digest(self.model), self.info)  # every rank takes part
        bundle = self.save(digests) if self.info.is_main else None
        return self.result(train_rec, bundle=bundle)

    def result(self, train_rec: dict, bundle: Path | None) -> dict:
        keep = ("loss", "recon", "kl", "rmse", "strain")
        return {"step": self.step, "train": {k: train_rec[k] for k in keep if k in train_rec},
                "val": {k: v for k, v in self.last_val.items() if k not in ("kind",)},
                "wall_s": self.wall(), "bundle": str(bundle) if bundle else None,
                "device": str(self.device), "processes": self.info.world_size}

    def save(self, digests: list[str]) -> Path:
        """Write the bundle; ``digests``: every rank's parameter digest (DDP sanity check)."""
        training = {"command": self.command, "steps": self.step, "wall_s": round(self.wall()),
                    "data": self.train_ds.summary(), "val_data": self.val_ds.summary(),
                    "sampling": asdict(self.sampling), "config": asdict(self.cfg),
                    "hardware": _hardware(self.device, self.info),
                    "param_sha256": digests[0], "ranks_agree": len(set(digests)) == 1}
        val = {k: v for k, v in self.last_val.items() if k != "kind"}
        return save_bundle(self.model, self.out / BUNDLE, training=training,
                           metrics={"validation": val, "measured_by": self.command})


def train(cfg: TrainConfig, *, progress: Progress | None = None, stop_at: int | None = None,
          command: str | None = None) -> dict:
    """Train (or, with ``cfg.resume``, continue) a model; write the run folder and bundle.

    Args:
        cfg: the run's config.
        progress: called as ``progress(step, steps, status)`` after every step.
        stop_at: stop after this step with a checkpoint and no bundle (time-limited jobs;
            continue with ``resume``).
        command: the command line, recorded in the bundle.

    Returns:
        Final metrics: ``step``, ``train`` (loss, recon, kl, rmse of the last log window),
        ``val`` (see :func:`validate`), ``wall_s``, ``bundle`` (its path; None when stopped
        early or on ranks other than 0), ``device``, ``processes``.
    """
    device = resolve_device(cfg.device)
    info, device = dd.setup(device)
    clean = False
    try:
        result = _Run(cfg, info, device, command).fit(progress, stop_at)
        clean = True
    finally:
        dd.teardown(info, clean=clean)
    return result
