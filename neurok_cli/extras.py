"""The optional extras of ``pip install "neurok-cli[...]"``: what each brings, and the one-line
error a command that needs a missing one raises.

The core install animates to glTF, frame folders, point caches and MP4/GIF with the NumPy
renderer; the rest imports its package only when used, through :func:`require`, so the
install hint is written here once.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import DependencyError

# extra -> (the package it installs, as users know it; what needs it, when the caller does
# not say more precisely). pyproject.toml's [project.optional-dependencies] lists the same.
EXTRAS: dict[str, tuple[str, str]] = {
    "sim": ("MuJoCo", "the physics engine (neurok simulate, neurok dataset generate)"),
    "usd": ("Pixar's usd-core", "USD output (.usd, .usda, .usdc)"),
    "gl": ("moderngl", "«renderer» gl"),
    "plots": ("matplotlib", "plotting"),
}


def install_hint(extra: str, what: str | None = None) -> str:
    """The one-line message: what needs the extra's package, and the pip line that adds it."""
    package, default = EXTRAS[extra]
    return f'{what or default} needs {package}: pip install "neurok-cli[{extra}]"'


def require(module: str, extra: str, what: str | None = None) -> ModuleType:
    """Import ``module`` (e.g. "pxr.Usd"), or raise DependencyError naming ``extra``.

    ``what`` says what needs it ("neurok eval --plot"); the extra's usual user by default.
    A module that is installed but fails to load for want of something else has the reason
    added to the message.
    """
    top = module.split(".")[0]
    try:
        importlib.import_module(top)  # first: a hidden package hides its loaded submodules too
        return importlib.import_module(module)
    except ImportError as e:
        hint = install_hint(extra, what)
        if isinstance(e, ModuleNotFoundError) and (e.name or top).split(".")[0] == top:
            raise DependencyError(hint) from None
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DependencyError(f"{hint} (it is installed but failed to load: {reason})") from e
