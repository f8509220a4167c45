"""numba's ``njit`` under the package's policy for its on-disk cache: compiled functions
are cached beside their modules where that folder is writable, else in the user's cache
folder (an installed package in a read-only place). Modules take ``njit`` from here, so the
policy is in place before numba first reads it."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

if "NUMBA_CACHE_DIR" not in os.environ and not os.access(Path(__file__).parent, os.W_OK):
    os.environ["NUMBA_CACHE_DIR"] = str(Path(os.environ.get(
        "XDG_CACHE_HOME", Path.home() / ".cache")) / "neurok" / "numba")

from numba import njit  # noqa: E402

__all__ = ["cache_depends_on", "njit"]


def cache_depends_on(namespace: dict, *modules: ModuleType) -> None:
    """Make the cached machine code of the compiled functions defined in ``namespace`` (a
    module's ``globals()``) stale when that module's file or any of ``modules``' changes.

    numba checks only the file that defines a function, yet a cached function holds the code
    of the compiled functions it calls, and the constants it reads, from other modules: an
    edit there would otherwise run the old code. Call it at the end of the module, before
    the first call."""
    files = [namespace["__file__"], *(m.__file__ for m in modules)]
    stamp = tuple((st.st_mtime, st.st_size) for st in map(os.stat, files))
    for f in list(namespace.values()):
        py_func = getattr(f, "py_func", None)
        if py_func is None or py_func.__module__ != namespace["__name__"]:
            continue
        try:  # the file stamp the cache index is kept against (numba's layout is not public)
            f._cache._cache_file._source_stamp = stamp
        except AttributeError:
            pass
