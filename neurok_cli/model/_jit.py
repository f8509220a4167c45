"""numba's ``njit`` under the package's policy for its on-disk cache: compiled functions
are cached beside their modules where that folder is writable, else in the user's cache
folder (an installed package in a read-only place). Modules take ``njit`` from here, so the
policy is in place before numba first reads it."""

from __future__ import annotations

import os
from pathlib import Path

if "NUMBA_CACHE_DIR" not in os.environ and not os.access(Path(__file__).parent, os.W_OK):
    os.environ["NUMBA_CACHE_DIR"] = str(Path(os.environ.get(
        "XDG_CACHE_HOME", Path.home() / ".cache")) / "neurok" / "numba")

from numba import njit  # noqa: E402

__all__ = ["njit"]
