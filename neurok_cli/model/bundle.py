"""Weights bundles: a folder with config.json, model.safetensors and MODEL_CARD.md.

No pickles anywhere: torch.load of a stranger's file can run code, safetensors cannot. The
weights' sha256 is recorded in config.json and checked on load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ..errors import InputError, OutputError, UsageError
from ..limits import DEVICES
from .config import model_config
from .neurok import NeurokModel

FORMAT = "neurok-bundle"
VERSION = 1
CONFIG, WEIGHTS, CARD = "config.json", "model.safetensors", "MODEL_CARD.md"


def resolve_device(name: str) -> torch.device:
    """"auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N" -> torch.device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        if not torch.cuda.is_available():
            raise UsageError(f"device {name!r}: CUDA is not available here (this torch "
                             f"{torch.__version__} build or machine has no GPU); use «device» "
                             "cpu or auto")
        index = int(name[5:]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise UsageError(f"device {name!r}: only {torch.cuda.device_count()} CUDA device(s)")
        return torch.device(name)
    raise UsageError(f"unknown device {name!r}; choose one of {', '.join(DEVICES)} (or cuda:N)")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_card(model: NeurokModel, training: dict, metrics: dict) -> str:
    """A minimal MODEL_CARD.md: what the model is, its config, data and measured metrics."""
    lines = ["# NeuROK weights", "",
             "Transformer conditional VAE of an object's deformed states (NeuROK, CVPR 2026),",
             "reimplemented in neurok_cli. Load with `neurok_cli.model.load_bundle(folder)`.", "",
             f"Parameters: {model.num_parameters():,}", "", "## Model config", ""]
    lines += [f"- {k}: {v}" for k, v in dataclasses.asdict(model.cfg).items()]
    lines += ["", "## Training", ""] + [f"- {k}: {v}" for k, v in training.items()]
    lines += ["", "## Metrics", ""] + [f"- {k}: {v}" for k, v in metrics.items()]
    return "\n".join(lines) + "\n"


def save_bundle(model: NeurokModel, folder: str | os.PathLike[str], *,
                training: dict | None = None, metrics: dict | None = None,
                card: str | None = None) -> Path:
    """Write ``model`` as a bundle folder, atomically: everything goes into a temporary folder
    beside it, renamed into place when complete. An existing bundle there is replaced; any
    other existing non-empty folder is an OutputError. ``training`` and ``metrics`` must be
    JSON-serialisable. Returns the folder."""
    folder = Path(folder)
    parent = folder.parent
    if not parent.is_dir():
        raise OutputError(f"{folder}: folder {parent} does not exist; create it first")
    if folder.exists() and not _replaceable(folder):
        raise OutputError(f"{folder}: exists and is not a neurok bundle; choose a new folder")
    training, metrics = dict(training or {}), dict(metrics or {})
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".part", dir=parent))
    try:
        state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS), metadata={"format": FORMAT})
        config = {"format": FORMAT, "version": VERSION, "model": dataclasses.asdict(model.cfg),
                  "training": training, "metrics": metrics,
                  "checksums": {WEIGHTS: sha256_file(tmp / WEIGHTS)}}
        (tmp / CONFIG).write_text(json.dumps(config, indent=2) + "\n")
        (tmp / CARD).write_text(card if card is not None else
                                default_card(model, training, metrics))
        os.chmod(tmp, 0o755)
        _swap_in(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _replaceable(folder: Path) -> bool:
    """An empty folder or one holding a bundle's config.json may be replaced."""
    if not folder.is_dir():
        return False
    if not any(folder.iterdir()):
        return True
    try:
        return json.loads((folder / CONFIG).read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _swap_in(tmp: Path, folder: Path) -> None:
    if not folder.exists():
        os.replace(tmp, folder)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old", dir=folder.parent))
    os.replace(folder, old / "bundle")
    os.replace(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)


def update_bundle_config(folder: str | os.PathLike[str], **entries) -> dict:
    """Set top-level entries of a bundle's config.json (e.g. ``calibration``, ``metrics``),
    atomically; the weights and their checksum are untouched. Returns the new config."""
    folder = Path(folder)
    config = read_bundle_config(folder)
    config.update(entries)
    fd, tmp = tempfile.mkstemp(prefix=f".{CONFIG}.", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(config, indent=2) + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / CONFIG)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return config


def read_bundle_config(folder: str | os.PathLike[str]) -> dict:
    """The bundle's config.json, checked for format and version (InputError otherwise)."""
    folder = Path(folder)
    path = folder / CONFIG
    if not folder.is_dir():
        raise InputError(f"{folder}: no such weights bundle folder; give a folder written by "
                         "`neurok train` or save_bundle")
    if not path.is_file():
        raise InputError(f"{path}: missing; a weights bundle needs {CONFIG}, {WEIGHTS} and "
                         f"{CARD} — re-download or re-train it")
    try:
        config = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: unreadable ({exc}); re-download or re-train the bundle") \
            from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise InputError(f"{path}: not a neurok weights bundle (format must be {FORMAT!r})")
    if config.get("version") != VERSION:
        raise InputError(f"{path}: bundle version {config.get('version')!r} is not supported "
                         f"(this neurok reads version {VERSION}); upgrade neurok or re-train")
    return config


def load_bundle(folder: str | os.PathLike[str],
                device: str | torch.device = "cpu") -> tuple[NeurokModel, dict]:
    """Load a bundle -> (model in eval mode on ``device``, its config.json as a dict).

    Checks format, version and the weights' sha256; every problem is an InputError naming
    the file. ``device`` is a torch.device or a name for :func:`resolve_device`.
    """
    folder = Path(folder)
    config = read_bundle_config(folder)
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise InputError(f"{weights}: missing; re-download or re-train the bundle")
    expected = (config.get("checksums") or {}).get(WEIGHTS)
    if expected != sha256_file(weights):
        raise InputError(f"{weights}: sha256 does not match {CONFIG} (corrupt or modified "
                         "file); re-download or re-train the bundle")
    try:
        cfg = model_config(config.get("model") or {})
    except UsageError as exc:
        raise InputError(f"{folder / CONFIG}: bad model config: {exc}") from exc
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    try:
        state = load_file(str(weights), device="cpu")
    except (SafetensorError, OSError) as exc:
        raise InputError(f"{weights}: unreadable safetensors ({exc}); re-download") from exc
    model = NeurokModel(cfg)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise InputError(f"{weights}: weights do not fit the model in {CONFIG} ({exc})") \
            from exc
    return model.to(dev).eval(), config


def prior_spread(config: dict, category: str) -> torch.Tensor | None:
    """The Cholesky factor L (k, k) of a bundle's fitted instance prior N(mu, L Lᵀ) for
    ``category`` (``neurok calibrate``), or None: the unit prior N(mu, I), for bundles
    without one or categories it never saw."""
    entry = (config.get("latent_prior") or {}).get(category)
    if not entry:
        return None
    return torch.tensor(entry["scale_tril"], dtype=torch.float64)


def strain_limit(config: dict, category: str) -> float | None:
    """A bundle's largest edge strain for ``category``'s decoded frames (``neurok calibrate``,
    part "strain"), or None where it has none (frames as decoded)."""
    entry = (config.get("strain_limit") or {}).get(category)
    return float(entry["limit"]) if entry else None
