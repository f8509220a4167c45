"""What a training run keeps in its folder: checkpoints, the metrics log and the loss curve.

A checkpoint (everything needed to continue a run exactly, with no pickles) is a folder
``RUN/checkpoint/``, replaced atomically as a whole:

* ``state.safetensors`` — tensors: ``model.<name>`` (parameters and buffers),
  ``optim.<index>.<key>`` (AdamW moments and step counts, flattened), ``rng.torch`` (the CPU
  generator state, uint8) and ``rng.cuda.<device>``;
* ``state.json`` — the step, the training config, optimizer hyper-parameters and any
  non-tensor optimizer state, NumPy's and Python's global RNG states, and free ``extra`` facts
  (wall time so far).

Loading never unpickles anything (no ``torch.load``): a checkpoint from a stranger cannot run
code. ``metrics.jsonl`` holds one JSON record per line (``kind`` "train" or "val", ``step``);
``loss.png`` plots them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from ..errors import InputError
from ..extras import require
from ..io.atomic import atomic_dir, atomic_path

CHECKPOINT = "checkpoint"
METRICS, PLOT = "metrics.jsonl", "loss.png"
TENSORS = "state.safetensors"
STATE = "state.json"
FORMAT = "neurok-train-checkpoint"
VERSION = 1


def checkpoint_dir(run: str | Path) -> Path:
    """The checkpoint folder of a run folder."""
    return Path(run) / CHECKPOINT


def has_checkpoint(run: str | Path) -> bool:
    """Whether ``run`` holds a complete checkpoint."""
    folder = checkpoint_dir(run)
    return (folder / TENSORS).is_file() and (folder / STATE).is_file()


def _rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Global RNG states: torch ones as tensors, NumPy and Python ones as JSON."""
    tensors = {"rng.torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, state in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = state
    np_state = np.random.get_state(legacy=False)
    np_state["state"]["key"] = np_state["state"]["key"].tolist()
    version, internal, gauss = random.getstate()
    return tensors, {"numpy": np_state, "python": [version, list(internal), gauss]}


def _set_rng_state(tensors: dict[str, torch.Tensor], states: dict[str, Any]) -> None:
    torch.set_rng_state(tensors["rng.torch"])
    cuda = [tensors[k] for k in sorted(t for t in tensors if t.startswith("rng.cuda."))]
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    np_state = dict(states["numpy"])
    np_state["state"] = dict(np_state["state"], key=np.array(np_state["state"]["key"],
                                                              np.uint32))
    np.random.set_state(np_state)
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))


def _flatten_optimizer(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Optimizer state as ``optim.<param index>.<key>`` tensors plus JSON for the rest."""
    sd = opt.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for index, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{index}.{key}"] = value
            else:
                scalars.setdefault(str(index), {})[key] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def _unflatten_optimizer(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor],
                         saved: dict) -> dict:
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        if name.startswith("optim."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    for index, values in saved["scalars"].items():
        state.setdefault(int(index), {}).update(values)
    groups = []
    for live, group in zip(opt.param_groups, saved["param_groups"]):
        # JSON turned tuples (AdamW betas) into lists: give them back their live type
        groups.append({k: tuple(v) if isinstance(live.get(k), tuple) else v
                       for k, v in group.items()})
    return {"state": state, "param_groups": groups}


def save_checkpoint(run: str | Path, *, model: nn.Module, optimizer: torch.optim.Optimizer,
                    step: int, config: dict, extra: dict | None = None) -> Path:
    """Write ``run/checkpoint/`` atomically (the previous one stays until the new one is
    complete) and return its path.

    Args:
        run: the run folder (must exist).
        model: the bare model (not a DDP wrapper); its ``state_dict`` is saved.
        optimizer: its full state is saved, tensors in safetensors, the rest in JSON.
        step: number of optimizer steps done.
        config: the JSON-ready training config.
        extra: JSON-ready facts to keep (e.g. wall time so far).
    """
    # clone: safetensors refuses tensors that share memory (tied weights, views)
    tensors = {f"model.{k}": v.detach().cpu().contiguous().clone()
               for k, v in model.state_dict().items()}
    opt_tensors, opt_json = _flatten_optimizer(optimizer)
    rng_tensors, rng_json = _rng_state()
    for name, value in {**opt_tensors, **rng_tensors}.items():
        tensors[name] = value.detach().cpu().contiguous().clone()
    state = {"format": FORMAT, "version": VERSION, "step": int(step), "config": config,
             "optimizer": opt_json, "rng": rng_json, "extra": extra or {}}
    target = checkpoint_dir(run)
    with atomic_dir(target) as tmp:
        save_file(tensors, str(tmp / TENSORS), metadata={"format": FORMAT, "step": str(step)})
        (tmp / STATE).write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    return target


def read_checkpoint_state(run: str | Path) -> dict:
    """The JSON half of a run's checkpoint (step, config, extra), without loading tensors."""
    path = checkpoint_dir(run) / STATE
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{run}: no checkpoint to resume; start without «resume»") from None
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: unreadable checkpoint ({e}); delete {path.parent} to start "
                         "over") from e
    if state.get("format") != FORMAT or state.get("version") != VERSION:
        raise InputError(f"{path}: not a version-{VERSION} neurok training checkpoint")
    return state


def load_checkpoint(run: str | Path, *, model: nn.Module,
                    optimizer: torch.optim.Optimizer | None = None,
                    restore_rng: bool = True) -> dict:
    """Restore a run's checkpoint into ``model`` (and ``optimizer``, RNG states) in place.

    Tensors are read to the CPU and copied to wherever the model's parameters live. Returns the
    JSON state (``step``, ``config``, ``extra``...). Raises :class:`InputError` for a missing,
    corrupt or mismatching checkpoint.
    """
    state = read_checkpoint_state(run)
    path = checkpoint_dir(run) / TENSORS
    try:
        tensors = load_file(str(path), device="cpu")
    except (OSError, SafetensorError) as e:
        raise InputError(f"{path}: unreadable checkpoint ({e}); delete {path.parent} to "
                         "start over") from e
    weights = {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}
    try:
        model.load_state_dict(weights, strict=True)
        if optimizer is not None:
            optimizer.load_state_dict(_unflatten_optimizer(optimizer, tensors,
                                                           state["optimizer"]))
    except (RuntimeError, ValueError, KeyError) as e:
        msg = " ".join(str(e).split())[:300]
        raise InputError(f"{path}: does not fit this model ({msg}); resume with the "
                         "run's own config or start a new «out»") from e
    if restore_rng:
        _set_rng_state(tensors, state["rng"])
    return state


def read_metrics(run: str | Path, upto: int | None = None) -> list[dict]:
    """Records of ``run/metrics.jsonl``, those after step ``upto`` dropped (a resumed run
    repeats the steps after its checkpoint, so their old records are stale)."""
    path = Path(run) / METRICS
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if upto is None or r.get("step", 0) <= upto]


def write_metrics(run: str | Path, records: list[dict]) -> None:
    """Replace ``run/metrics.jsonl`` with ``records`` (atomically)."""
    with atomic_path(Path(run) / METRICS) as tmp:
        tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def append_metrics(run: str | Path, record: dict) -> None:
    """Append one record to ``run/metrics.jsonl``."""
    with open(Path(run) / METRICS, "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def plot_curves(records: list[dict], path: Path) -> None:
    """Train loss, and train/validation errors, against step as a PNG (no pyplot state)."""
    Figure = require("matplotlib.figure", "plots", "plotting the training curves").Figure

    train = [r for r in records if r["kind"] == "train"]
    val = [r for r in records if r["kind"] == "val"]
    fig = Figure(figsize=(10, 4), layout="tight")
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot([r["step"] for r in train], [r["loss"] for r in train], label="loss")
    ax1.set(xlabel="step", ylabel="train loss", yscale="log", title="training loss")
    ax2.plot([r["step"] for r in train], [r["rmse"] for r in train], alpha=0.6,
             label="train RMSE (posterior sample)")
    for key, style, label in (("rmse", "o-", "val RMSE (posterior mean)"),
                              ("chamfer", "s-", "val IK Chamfer-L1 (/ bbox diagonal)"),
                              ("rest_rmse", "k--", "val RMSE of the rest shape")):
        ax2.plot([r["step"] for r in val], [r[key]["all"] for r in val], style, label=label)
    ax2.set(xlabel="step", ylabel="error (canonical units)", yscale="log", title="accuracy")
    for ax in (ax1, ax2):
        if ax.lines:
            ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
