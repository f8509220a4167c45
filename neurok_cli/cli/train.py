"""``neurok train --data DIR --out RUN``: train a weights bundle on a 4D dataset."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..errors import InputError, UsageError
from ._checks import ranged
from ._common import guarded, out, print_json, progress_bar


def _config_file(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"--config {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"--config {path}: not readable JSON ({e})") from e
    if not isinstance(data, dict):
        raise InputError(f"--config {path}: must hold a JSON object of training fields")
    return data


def _build_config(out_dir: Path, config: Path | None, resume: bool, given: dict):
    """The TrainConfig: the --config file, then the options given (not None) on top; with
    --resume, the run's own config underneath both."""
    from ..train import TrainConfig, resume_config

    fields = {**_config_file(config),
              **{k: str(v) if isinstance(v, Path) else v for k, v in given.items()
                 if v is not None}}
    if resume:
        return resume_config(out_dir, **fields)
    if "data" not in fields:
        raise UsageError("give --data DIR, the 4D dataset to train on (or --resume a run)")
    return TrainConfig.from_dict({**fields, "out": str(out_dir)})


def _table(result: dict) -> Table:
    table = Table(title=f"step {result['step']} · {result['wall_s']:.0f} s · "
                  f"{result['device']} × {result['processes']}", title_justify="left")
    table.add_column("category", style="bold cyan")
    table.add_column("val RMSE")
    table.add_column("rest RMSE")
    table.add_column("IK Chamfer-L1")
    table.add_column("rest Chamfer")
    val = result.get("val") or {}
    for cat in (val.get("rmse") or {}):
        table.add_row(cat, *(f"{val[k][cat]:.4f}" for k in ("rmse", "rest_rmse", "chamfer",
                                                            "rest_chamfer")))
    return table


@guarded
def train(
    out_dir: Annotated[Path, typer.Option("--out", help="Run folder: checkpoint, metrics.jsonl, "
                                          "loss.png and the bundle/ it trains.")],
    data: Annotated[Path | None, typer.Option(
        help="4D dataset folder (dataset.json, train/, val/).")] = None,
    size: Annotated[str | None, typer.Option(help="Model size: tiny, small or base.")] = None,
    init: Annotated[Path | None, typer.Option(
        help="Start from this weights bundle (fine-tuning): its size and parameters.")] = None,
    config: Annotated[Path | None, typer.Option(
        help="JSON file of training fields (TrainConfig); options override it.")] = None,
    steps: Annotated[int | None, typer.Option(help="Optimizer steps in all.")] = None,
    batch: Annotated[int | None, typer.Option(
        help="Objects per step, over all processes (raise it on a GPU).")] = None,
    lr: Annotated[float | None, typer.Option(help=ranged("Peak learning rate.", "lr"))] = None,
    device: Annotated[str | None, typer.Option(help="auto, cpu or cuda.")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the run in --out from its checkpoint.")] = False,
    val_every: Annotated[int | None, typer.Option(help="Steps between validations.")] = None,
    ckpt_every: Annotated[int | None, typer.Option(help="Steps between checkpoints.")] = None,
    workers: Annotated[int | None, typer.Option(
        help="Batch-sampling processes (default: 0 on CPU, up to 8 on CUDA).")] = None,
    seed: Annotated[int | None, typer.Option(help=ranged("Random seed.", "seed"))] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the final metrics as JSON.")
                        ] = False,
) -> None:
    """Train a NeuROK model on a 4D dataset: checkpoints, validation, loss curve and a bundle.

    Runs on CPU or CUDA unchanged; for several processes or GPUs launch it with
    `python -m torch.distributed.run --nproc_per_node N -m neurok_cli train ...`.
    """
    from ..train import train as run_training

    if init is not None and size is not None:
        raise UsageError("--size and --init exclude each other: a run started from a bundle "
                         "keeps the bundle's size")
    given = {"data": data, "size": size, "init": init, "steps": steps, "batch": batch, "lr": lr,
             "device": device, "val_every": val_every, "ckpt_every": ckpt_every,
             "workers": workers, "seed": seed}
    cfg = _build_config(out_dir, config, resume, given)
    main = os.environ.get("RANK", "0") == "0"  # under torchrun only rank 0 reports
    # the command as the options say it (sys.argv is the caller's, e.g. pytest's, not ours)
    words = ["neurok", "train", "--out", str(out_dir)]
    words += [w for k, v in given.items() if v is not None
              for w in (f"--{k.replace('_', '-')}", str(v))]
    words += (["--config", str(config)] if config else []) + (["--resume"] if resume else [])
    command = shlex.join(words)
    if not main:
        run_training(cfg, command=command)
        return
    with progress_bar("training", total=cfg.steps) as update:
        result = run_training(cfg, progress=update, command=command)
    if json_out:
        print_json(result)
        return
    out.print(_table(result))
    train_stats = result.get("train") or {}
    if train_stats:
        out.print(f"train loss {train_stats['loss']:.4g}, RMSE {train_stats['rmse']:.4g}")
    out.print(f"bundle: {result['bundle']}")
