"""The learned space's bundles (docs/design.md, "Weights bundle"): a bundle found by path or
by name (in $NEUROK_WEIGHTS, then the bundles shipped in the package), and its model loaded
on its device."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import InputError

SHIPPED_WEIGHTS = Path(__file__).resolve().parents[2] / "weights"  # package data: the wheel has it
WEIGHTS_ENV = "NEUROK_WEIGHTS"  # folder(s), os.pathsep-separated, of more bundles by name
DEFAULT_WEIGHTS = "neurok-base"


def weights_folders() -> list[Path]:
    """Where a bundle's name is looked up, in order: the folders in $NEUROK_WEIGHTS, then
    the bundles shipped inside the package."""
    given = [Path(p).expanduser() for p in os.environ.get(WEIGHTS_ENV, "").split(os.pathsep)
             if p.strip()]
    return [*given, SHIPPED_WEIGHTS]


def resolve_weights(name: str) -> Path:
    """A bundle folder from a path, or a name in $NEUROK_WEIGHTS or the shipped bundles."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    folders = weights_folders()
    for folder in folders:
        if (folder / name).is_dir():
            return folder / name
    known = sorted({p.name for f in folders if f.is_dir() for p in f.iterdir() if p.is_dir()})
    raise InputError(f"«weights» {name}: no such bundle folder"
                     + (f"; bundles by name: {', '.join(known)}" if known else "")
                     + f" (names are looked up in ${WEIGHTS_ENV}, then the shipped bundles)")


def integrator_ready(method: str, device) -> bool:
    """False when this run will first compile the latent integrator (model/dynamics/kernel.py)."""
    if method != "rk4" or str(device) != "cpu":
        return True
    from ...model.dynamics import kernel

    return kernel.ready()


def load_model(weights: str, device: str, method: str, seed: int):
    """The bundle ``weights``' model on ``device`` (auto, cpu, cuda), torch seeded with
    ``seed`` -> (model, the bundle's config, its folder, the device, whether the latent
    integrator for ``method`` is compiled already)."""
    import torch

    from ...model import load_bundle, resolve_device

    device = resolve_device(device)
    compiled = integrator_ready(method, device)
    bundle = resolve_weights(weights)
    model, bundle_cfg = load_bundle(bundle, device)
    torch.manual_seed(seed)
    if compiled:  # numba's start-up, beside encoding, once the input is known to be good
        from ...model.dynamics import kernel

        kernel.warm_in_background()
    return model, bundle_cfg, bundle, device, compiled
