"""``neurok train --data DIR [--out RUN]``: train a weights bundle on a 4D dataset."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Annotated

from rich.table import Table

from ..errors import InputError, UsageError
from ._checks import ranged
from ._common import err, guarded, out, print_json, progress_bar
from ._names import new_run
from ._options import Opt, choices


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


def _new_run(data: Path | None, config: Path | None, resume: bool) -> Path:
    """The run folder when --out is not given: a new runs/<dataset-name>-<n>."""
    if resume:
        raise UsageError("--resume continues a run: give its folder with --out RUN")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # each process would pick its own folder
        raise UsageError("training in several processes: give the run folder with --out RUN")
    source = data or _config_file(config).get("data")
    if source is None:
        raise UsageError("give --data DIR, the 4D dataset to train on (or --resume a run)")
    return new_run(Path(source))


def _default(name: str) -> str:
    """A training field's default as the help shows it (read without importing torch)."""
    return str(TRAIN_DEFAULTS.get(name, "by the model size"))


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


DATA, TRAINING, RUN = "Data and model", "Training", "Run"
# TrainConfig's defaults, as the help shows them (a test holds them equal); importing
# TrainConfig would import torch and slow down every --help
TRAIN_DEFAULTS = {"steps": 20000, "batch": 16, "lr": 3e-4, "seed": 0, "val_every": 1000,
                  "ckpt_every": 1000}


@guarded
def train(
    data: Annotated[Path | None, Opt(
        panel=DATA, metavar="DIR", show_default="--config's, or the run's with --resume",
        help="4D dataset folder (dataset.json, train/, val/).")] = None,
    size: Annotated[str | None, Opt(
        panel=DATA, metavar=choices("tiny", "small", "base"), show_default="small",
        help="Model size.")] = None,
    init: Annotated[Path | None, Opt(
        panel=DATA, metavar="BUNDLE", show_default="none: from scratch",
        help="Start from this weights bundle (fine-tuning): its size and parameters.")] = None,
    config: Annotated[Path | None, Opt(
        panel=DATA, metavar="FILE", show_default="none",
        help="JSON file of training fields (TrainConfig); options override it.")] = None,
    steps: Annotated[int | None, Opt(
        panel=TRAINING, metavar="N", show_default=_default("steps"),
        help="Optimizer steps in all.")] = None,
    minutes: Annotated[float | None, Opt(
        panel=TRAINING, metavar="M", show_default="none",
        help=ranged("Wall-clock budget: the run ends with its bundle at this time if its "
                    "steps are not done by then, the learning rate decaying over it.",
                    "minutes"))] = None,
    batch: Annotated[int | None, Opt(
        panel=TRAINING, metavar="N", show_default=_default("batch"),
        help="Objects per step, over all processes (raise it on a GPU).")] = None,
    lr: Annotated[float | None, Opt(
        panel=TRAINING, metavar="RATE", show_default=_default("lr"),
        help=ranged("Peak learning rate.", "lr"))] = None,
    seed: Annotated[int | None, Opt(
        panel=TRAINING, metavar="N", show_default=_default("seed"),
        help=ranged("Random seed.", "seed"))] = None,
    device: Annotated[str | None, Opt(
        panel=TRAINING, metavar=choices("auto", "cpu", "cuda"), show_default="auto",
        help="Where to train.")] = None,
    workers: Annotated[int | None, Opt(
        panel=TRAINING, metavar="N", show_default="0 on CPU, up to 8 on CUDA",
        help="Batch-sampling processes.")] = None,
    out_dir: Annotated[Path | None, Opt(
        "--out", panel=RUN, metavar="DIR", show_default="a new runs/<dataset>-<n>",
        help="Run folder: checkpoint, metrics.jsonl, loss.png and the bundle/ it trains.")
    ] = None,
    resume: Annotated[bool, Opt(
        "--resume", panel=RUN, metavar="", help="Continue the run in --out from its "
                                                "checkpoint.")] = False,
    val_every: Annotated[int | None, Opt(
        panel=RUN, metavar="STEPS", show_default=_default("val_every"),
        help="Steps between validations.")] = None,
    ckpt_every: Annotated[int | None, Opt(
        panel=RUN, metavar="STEPS", show_default=_default("ckpt_every"),
        help="Steps between checkpoints.")] = None,
    json_out: Annotated[bool, Opt("--json", panel=RUN, metavar="",
                                  help="Print the final metrics as JSON.")] = False,
) -> None:
    """Train a model on a 4D dataset.

    Writes checkpoints, validation metrics, a loss curve and a weights bundle to the run
    folder.

    Runs on CPU or CUDA unchanged; for several processes or GPUs launch it with
    `python -m torch.distributed.run --nproc_per_node N -m neurok_cli train ...`.

    Examples:

      neurok train --data ./4d_dataset                (a new run folder, runs/4d_dataset-1)

      neurok train --data ./4d_dataset --init weights/neurok-base --steps 1000 --out runs/ft

      neurok train --out runs/ft --resume --steps 2000
    """
    from ..train import train as run_training

    if init is not None and size is not None:
        raise UsageError("--size and --init exclude each other: a run started from a bundle "
                         "keeps the bundle's size")
    given = {"data": data, "size": size, "init": init, "steps": steps, "minutes": minutes,
             "batch": batch, "lr": lr,
             "device": device, "val_every": val_every, "ckpt_every": ckpt_every,
             "workers": workers, "seed": seed}
    if out_dir is None:
        out_dir = _new_run(data, config, resume)
        err.print(f"run folder: {out_dir}")
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
    out.print(f"run folder: {out_dir}")
    out.print(f"bundle: {result['bundle']}")
