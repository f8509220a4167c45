"""Atomic output: write to a temporary sibling, then rename over the target.

A failed or interrupted write never leaves a half-written file where the user asked for one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from glob import escape as glob_escape
from pathlib import Path

from ..errors import OutputError

# what an interrupted atomic write leaves: ".NAME.XXXXXXXX.part[.SUFFIX]" (a file or a
# folder) or ".NAME.XXXXXXXX.old" (a folder being replaced); never data
PARTIAL = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.(part(\.[A-Za-z0-9]+)?|old)$")


def is_partial(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the temporary file or folder of an unfinished atomic write."""
    return bool(PARTIAL.match(Path(path).name))


def remove_partials(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove what interrupted atomic writes left in ``folder``; returns what was removed."""
    folder = Path(folder)
    gone = [p for p in folder.iterdir() if is_partial(p)] if folder.is_dir() else []
    for p in gone:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return gone


def parent_folder(path: str | os.PathLike[str]) -> Path:
    """The folder ``path`` goes into, checked to exist and to take new files."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise OutputError(f"{path}: {parent} is a file, not a folder")
    if not parent.is_dir():
        raise OutputError(f"{path}: folder {parent} does not exist; create it first")
    try:  # the only sure test of writability (permissions, read-only mounts, /proc)
        fd, probe = tempfile.mkstemp(prefix=".neurok-probe.", dir=parent)
    except OSError as e:
        raise OutputError(f"{path}: cannot write in folder {parent} ({e.strerror or e})"
                          ) from None
    os.close(fd)
    os.unlink(probe)
    return parent


def check_file_output(path: str | os.PathLike[str]) -> Path:
    """Check that a file can be written at ``path`` (not a folder, in a writable one)."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")
    parent_folder(path)
    return path


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _file_mode(path: Path) -> int:
    """The mode an ordinary new file gets (or the existing file's)."""
    if path.exists():
        return path.stat().st_mode & 0o777
    return 0o666 & ~_umask()


def _replace(src: Path, dst: Path) -> None:
    try:
        os.replace(src, dst)
    except OSError as e:
        raise OutputError(f"{dst}: cannot write it ({e.strerror or e})") from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    The temporary file keeps the target's suffix so that writers which pick a format by
    extension (ffmpeg, Pillow) still do. On any exception it is removed and ``path`` is left
    as it was.
    """
    path = check_file_output(path)
    _remove_stale(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".part{path.suffix}",
                                   dir=path.parent)
    except OSError as e:
        raise OutputError(f"{path}: cannot write it ({e.strerror or e})") from None
    _hold(fd)  # held while this process lives: a run killed outright lets it go
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _file_mode(path))  # mkstemp makes 0600; give the usual mode
        _replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def _hold(fd: int) -> None:
    """An advisory lock on a temporary file's descriptor (none where the system has
    none): the mark of a write still going on."""
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):
        pass


def _remove_stale(path: Path) -> None:
    """Remove the temporary files that earlier writes of ``path`` left when killed
    outright (SIGKILL, a crash: no handler ran): those whose lock nobody holds."""
    try:
        import fcntl
    except ImportError:
        return
    for old in path.parent.glob(f".{glob_escape(path.stem)}.*.part{path.suffix}"):
        if not is_partial(old) or not old.is_file() or old.is_symlink():
            continue
        try:
            fd = os.open(old, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # (a write going on)
            os.close(fd)
            continue
        old.unlink(missing_ok=True)
        os.close(fd)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path``.

    An existing ``path`` folder is replaced only after the new one is complete.
    """
    path = Path(path)
    parent = parent_folder(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=parent))
    except OSError as e:
        raise OutputError(f"{path}: cannot write in folder {parent} ({e.strerror or e})"
                          ) from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=parent))
            _replace(path, old / "x")
            _replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            _replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
