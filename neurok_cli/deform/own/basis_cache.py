"""An object's shape space kept between runs: the lattice inside it and its handle basis
depend only on the mesh and the options that shape them, so a second run of the same asset
reads them back (docs/design.md, "The object's own shape space").

Entries are ``.npz`` files of plain arrays (no pickles) named by a SHA-256 of the inputs and
of the source of the modules that compute them, so an edit to either makes a new entry; they
live in ``$NEUROK_CACHE`` or the user's cache folder (``~/.cache/neurok/shape-space``),
written atomically. A cache that cannot be read or written is skipped: it only saves time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...errors import NeurokError
from ...io.atomic import atomic_path

_SOURCES: dict[str, bytes] = {}


def folder() -> Path:
    base = os.environ.get("NEUROK_CACHE")
    if base:
        return Path(base) / "shape-space"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neurok" / \
        "shape-space"


def _source(module_file: str) -> bytes:
    if module_file not in _SOURCES:
        _SOURCES[module_file] = Path(module_file).read_bytes()
    return _SOURCES[module_file]


def key(kind: str, modules: tuple[str, ...], *parts) -> str:
    """A name for the entry computed from ``parts`` (arrays, numbers, strings, lists of
    arrays) by the code in ``modules`` (their files)."""
    h = hashlib.sha256(kind.encode())
    for m in modules:
        h.update(_source(m))
    for p in parts:
        items = p if isinstance(p, (list, tuple)) else [p]
        h.update(f"[{len(items)}]".encode())
        for item in items:
            if isinstance(item, np.ndarray):
                h.update(str((item.dtype.str, item.shape)).encode())
                h.update(np.ascontiguousarray(item).tobytes())
            else:
                h.update(repr(item).encode())
    return f"{kind}-{h.hexdigest()[:32]}"


def cached(name: str, compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays of entry ``name``: read back, or computed and kept."""
    path = folder() / f"{name}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, KeyError):
        pass
    arrays = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    except (OSError, NeurokError):
        pass
    return arrays
