"""Default names for what a command writes when the user names no place: beside the input,
never the input itself, never a file or folder that is already there."""

from __future__ import annotations

import os
import re
from pathlib import Path

# --format -> the extension of a default output ("" : a folder of frames)
EXTENSIONS = {None: ".glb", "glb": ".glb", "gltf": ".gltf", "usd": ".usd", "usda": ".usda",
              "usdc": ".usdc", "mdd": ".mdd", "pc2": ".pc2", "obj": "", "ply": "",
              "mp4": ".mp4", "gif": ".gif"}


RESERVED: list[Path] = []  # default outputs this process created empty, to hold their names


def free_name(folder: Path, stem: str, ext: str, avoid: Path | None = None, *,
              reserve: bool = False) -> Path:
    """``folder/stem+ext``, or ``stem_2+ext``, ``stem_3+ext``, ... : the first that does not
    exist and is not ``avoid``. ``reserve``: create it (an empty file, or for no ``ext`` an
    empty folder) in the same step as choosing it, so that two runs at once never choose the
    same name; the writing replaces it, and ``release_unused`` takes it back if not."""
    taken = avoid.resolve() if avoid is not None else None
    n = 1
    while True:
        path = folder / (f"{stem}{ext}" if n == 1 else f"{stem}_{n}{ext}")
        n += 1
        if path.exists() or path.is_symlink() or path.resolve() == taken:
            continue
        if not reserve:
            return path
        try:
            if ext:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            else:
                path.mkdir()
        except FileExistsError:  # (another run took it between the look and the make)
            continue
        except OSError:  # an unwritable folder: the output check says so in one line
            return path
        RESERVED.append(path)
        return path


def release_unused() -> None:
    """Remove the reserved default outputs that are still empty (the run wrote nothing)."""
    while RESERVED:
        path = RESERVED.pop()
        try:
            if path.is_dir():
                path.rmdir()  # (only when empty)
            elif path.is_file() and path.stat().st_size == 0:
                path.unlink()
        except OSError:
            pass


def beside(source: Path, suffix: str, fmt: str | None = None) -> Path:
    """The default output of a command reading ``source``: ``chair.glb`` ->
    ``chair{suffix}.glb`` (the extension by ``fmt``; a preview's ``.mp4`` when ``suffix``
    is empty), in the same folder."""
    ext = EXTENSIONS.get(fmt.lower() if fmt else None, ".glb") if suffix else ".mp4"
    stem = source.name if source.is_dir() else source.stem
    return free_name(source.parent, f"{stem}{suffix}", ext, avoid=source, reserve=True)


def new_run(data: Path, root: Path = Path("runs")) -> Path:
    """A new run folder for training on ``data``: ``runs/<dataset-name>-<n>``, the first
    ``n`` from 1 that is not there yet."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", data.resolve().name).strip("-") or "run"
    n = 1
    while (root / f"{name}-{n}").exists():
        n += 1
    return root / f"{name}-{n}"
