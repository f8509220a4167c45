"""Atomic output: write to a temporary sibling, then rename over the target.

A failed or interrupted write never leaves a half-written file where the user asked for one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import OutputError


def _check_parent(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{path}: folder {parent} does not exist; create it first")
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _file_mode(path: Path) -> int:
    """The mode an ordinary new file gets (or the existing file's)."""
    if path.exists():
        return path.stat().st_mode & 0o777
    return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    The temporary file keeps the target's suffix so that writers which pick a format by
    extension (ffmpeg, Pillow) still do. On any exception it is removed and ``path`` is left
    as it was.
    """
    path = Path(path)
    _check_parent(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".part{path.suffix}",
                               dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _file_mode(path))  # mkstemp makes 0600; give the usual mode
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path``.

    An existing ``path`` folder is replaced only after the new one is complete.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{path}: folder {parent} does not exist; create it first")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=parent))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
