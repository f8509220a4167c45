"""Files an asset refers to (glTF buffers and images, OBJ material libraries, MTL textures).

Every such reference is resolved here and nowhere else, and only to a file inside the asset's
own folder: an asset is data from anywhere, and a reference to ``/etc/passwd``, ``../secret``
or ``%2e%2e/secret`` (or a link that leads out of the folder) must not make us read, embed or
export a file the user never meant to share.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from ..errors import InputError

# a URI scheme ("file:", "http:"), but not a Windows drive letter ("C:")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+:")


def is_data_uri(ref: str) -> bool:
    """True for an embedded ``data:`` URI (read by the caller, never from disk)."""
    return ref[:5].lower() == "data:"


def _show(ref: str) -> str:
    return repr(ref if len(ref) <= 120 else ref[:117] + "...")


def _resolve(path: Path) -> Path:
    """``path`` with every link followed. Strict first, so that a link loop raises on every
    Python (3.13 no longer raises for one when not strict); a missing file resolves as far as
    it exists."""
    try:
        return path.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError):
        return path.resolve()


def resolve_ref(asset: Path, ref: str, *, what: str, uri: bool) -> Path:
    """The file that reference ``ref`` in file ``asset`` names, checked to lie in its folder.

    Args:
        asset: the file holding the reference (a .gltf, .obj or .mtl).
        ref: the reference as written; ``uri=True`` percent-decodes it first (glTF URIs),
            ``uri=False`` reads it as a path (OBJ, MTL), backslashes taken as separators.
        what: what it names, for the message ("buffer 0", "texture").
    Returns:
        The resolved path (links followed). It may not exist; the caller decides whether a
        missing file is an error or a warning.
    Raises:
        InputError naming ``asset`` and ``ref`` when the reference is not a relative path to
        a file inside the asset's folder.
    """
    shown = _show(ref)
    if uri and _SCHEME.match(ref):
        raise InputError(f"{asset}: {what} refers to {shown}, a URI outside the asset's "
                         "folder; only relative paths inside it and data: URIs are read")
    text = urllib.parse.unquote(ref) if uri else ref
    text = text.replace("\\", "/")
    if not text.strip() or "\0" in text:
        raise InputError(f"{asset}: {what} has an empty or invalid reference {shown}")
    folder = asset.parent.resolve()
    try:
        target = _resolve(folder / text)
    except (OSError, RuntimeError, ValueError) as e:  # a link loop, a name the OS refuses
        raise InputError(f"{asset}: {what} reference {shown} cannot be resolved ({e})") from e
    if not target.is_relative_to(folder):
        raise InputError(f"{asset}: {what} refers to {shown}, which lies outside the asset's "
                         f"folder {folder}; copy the file beside the asset and refer to it "
                         "by a relative path")
    return target
