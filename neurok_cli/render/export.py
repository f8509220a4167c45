"""Writing a motion of an asset in the format its output path asks for.

``.glb``/``.gltf`` → animated glTF; ``.html`` → a page that plays it (page.py);
``.usd``/``.usda``/``.usdc`` → USD (usd.py); ``.mdd``/``.pc2`` → a point cache for the
input's own mesh (pointcache.py); ``.mp4``/``.gif`` → a rendered preview; a path without a
suffix (or ``--format obj|ply``) → a folder of per-frame meshes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import UsageError
from ..io.asset import Asset
from ..io.mesh import Z_UP_TO_Y_UP
from ..limits import TARGETS

if TYPE_CHECKING:
    from ..io.reduced import ReducedModel

OUTPUT_FORMATS = ("glb", "gltf", "html", "usd", "usda", "usdc", "mdd", "pc2", "obj", "ply",
                  "mp4", "gif")
_BY_SUFFIX = {".glb": "glb", ".gltf": "gltf", ".html": "html", ".htm": "html", ".usd": "usd",
              ".usda": "usda", ".usdc": "usdc", ".mdd": "mdd", ".pc2": "pc2", ".mp4": "mp4",
              ".gif": "gif"}
USD_FORMATS = ("usd", "usda", "usdc")
ONE_MOTION = "holds one motion; wrote the first"  # frame folders, USD and point caches


@dataclass
class ExportOptions:
    """How to write: format (None = from the path), glTF encoding, video settings."""

    fmt: str | None = None
    encoding: str = "compact"
    tolerance: float = 1e-3
    max_targets: int = TARGETS  # the compact encoding's most morph targets
    bones: int | None = None  # the bones encoding's joints (None: as the clip needs them)
    meshopt: bool = False  # glTF output compressed with EXT_meshopt_compression
    names: Sequence[str] | None = None
    renderer: str = "auto"
    width: int = 640
    height: int = 480
    root_matrix: np.ndarray | None = None  # above non-glTF assets in glTF output (None: a
    # Z-up file turned to +Y up, see write_animated)
    metres_per_unit: float = 1.0  # metres of one file unit, as the run read them (USD metadata)
    caption: str = ""  # a line saying what the clip is (the web page shows it)


@dataclass
class ExportResult:
    path: Path
    fmt: str
    bytes: int
    details: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def output_format(path: Path, fmt: str | None = None) -> str:
    """The output format for ``path``: the explicit ``fmt`` or one read off the suffix."""
    if fmt is not None:
        if fmt not in OUTPUT_FORMATS:
            raise UsageError(f"unknown «format» {fmt!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
        named = _BY_SUFFIX.get(path.suffix.lower())
        if named is not None and named != fmt and not (named in USD_FORMATS
                                                       and fmt in USD_FORMATS):  # (check_usd)
            raise UsageError(f"{path} names a .{path.suffix[1:].lower()} file, but «format» asks "
                             f"for {fmt}: end -o with the format's suffix, or leave «format» out")
        return fmt
    suffix = path.suffix.lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix == "":
        return "obj"  # a folder of frames
    if suffix in (".obj", ".ply"):  # a mesh file holds one frame, not a motion
        raise UsageError(f"{path}: an animation is not one {suffix} file; write its frames to a "
                         f"folder (-o NAME «format» {suffix[1:]}) or use .glb, .gltf, .html, "
                         ".usd, .mdd, .pc2, .mp4 or .gif")
    if suffix in (".png", ".jpg", ".jpeg"):  # one picture of a motion: preview draws it
        raise UsageError(f"{path}: an animation is not one image; write it (e.g. -o "
                         f"{path.with_suffix('.glb').name}), then `neurok preview "
                         f"{path.with_suffix('.glb').name} -o {path.with_suffix('.png').name} "
                         "«at» SECONDS` draws a frame of it")
    raise UsageError(f"{path}: cannot tell the output format from '{suffix}'; use .glb, .gltf, "
                     ".html, .usd, .usda, .usdc, .mdd, .pc2, .mp4, .gif, a folder name, or "
                     "«format»")


def check_output(path: str | Path, fmt: str | None = None, *, renderer: str | None = None
                 ) -> str:
    """The output format for ``path`` (see output_format), once its place is checked: a file
    in a writable folder, or a frame folder that writing may replace (check_frame_folder),
    and what the format needs installed (usd-core for USD; for a video, the ``renderer``
    when one is named). Call it before the work, so that a bad output fails in one line at
    once."""
    from ..io.atomic import check_file_output
    from ..io.frames import check_frame_folder

    path = Path(path)
    fmt = output_format(path, fmt)
    if fmt in ("obj", "ply"):
        check_frame_folder(path)
    else:
        check_file_output(path)
    if fmt in USD_FORMATS:
        from ..io.usd import check_usd

        check_usd(path, fmt)
    if fmt in ("mp4", "gif") and renderer not in (None, "auto"):  # auto falls back to numpy
        from .renderer import choose_backend

        choose_backend(renderer)
    return fmt


def export_motion(asset: Asset, motions: Sequence[np.ndarray], path: str | Path, *, fps: float,
                  options: ExportOptions | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  live: tuple[ReducedModel, np.ndarray, np.ndarray] | None = None,
                  overwrite: bool = False) -> ExportResult:
    """Write ``motions`` ((T, N, 3) positions of ``asset.vertices``, file frame) to ``path``;
    ``live``: the reduced model that moved the first, its vertex under each of the asset's
    and its frame to the file's (a page steps it itself: render/page.py, write_page);
    ``overwrite``: a glTF's writing may reuse the motions' memory (their contents lost)."""
    opts = options or ExportOptions()
    path = Path(path)
    fmt = output_format(path, opts.fmt)
    if fmt in ("glb", "gltf"):
        from ..io.gltf import write_animated

        rep = write_animated(asset, motions, path, fps=fps, encoding=opts.encoding,
                             tolerance=opts.tolerance, max_targets=opts.max_targets,
                             names=opts.names, root_matrix=opts.root_matrix,
                             as_gltf=fmt == "gltf", bones=opts.bones,
                             meshopt=opts.meshopt, overwrite=overwrite)
        details = {"targets": rep.targets, "encoding": rep.encoding,
                   "max_error": rep.max_error, "riding_parts": rep.riding,
                   "meshopt": opts.meshopt}
        if rep.encoding == "bones":
            details.update(bones=rep.bones, mean_error=rep.mean_error)
        return ExportResult(path, fmt, rep.bytes, details, rep.warnings)
    warnings = [f"{fmt} output {ONE_MOTION}"] if len(motions) > 1 and fmt not in (
        "glb", "gltf", "mp4", "gif") else []
    if fmt == "html":
        from .page import write_page

        size, details = write_page(asset, motions, path, fps=fps, caption=opts.caption,
                                   live=live,
                                   encoding=opts.encoding, tolerance=opts.tolerance,
                                   max_targets=opts.max_targets, names=opts.names,
                                   root_matrix=opts.root_matrix, bones=opts.bones)
        return ExportResult(path, fmt, size, details, warnings)
    if fmt in USD_FORMATS:
        from ..io.usd import write_usd

        size, details = write_usd(asset, motions[0], path, fps=fps,
                                  metres_per_unit=opts.metres_per_unit, fmt=fmt,
                                  skin=opts.encoding == "bones", bones=opts.bones)
        return ExportResult(path, fmt, size, details, warnings)
    if fmt in ("mdd", "pc2"):
        from ..io.pointcache import write_point_cache

        size, details = write_point_cache(asset, motions[0], path, fmt=fmt, fps=fps)
        return ExportResult(path, fmt, size, details, warnings)
    if fmt in ("obj", "ply"):
        from ..io.frames import write_frames

        files = write_frames(asset, motions[0], path, fmt=fmt, fps=fps,
                             progress=(lambda i: progress(i, len(motions[0]))) if progress
                             else None)
        return ExportResult(path, fmt, sum(f.stat().st_size for f in files),
                            {"frames": len(files)}, warnings)
    from .parts import render_parts
    from .renderer import Camera, render_frames
    from .video import write_video

    frames = np.concatenate(list(motions))  # several motions play one after another
    if asset.up == "z":
        frames = frames @ Z_UP_TO_Y_UP.T
    offs = asset.offsets
    positions = [frames[:, a:b].astype(np.float32) for a, b in zip(offs, offs[1:])]
    images = render_frames(render_parts(asset.parts), positions,
                           Camera(width=opts.width, height=opts.height), backend=opts.renderer)
    n = write_video(images, path, fps=fps,
                    progress=(lambda i: progress(i, len(frames))) if progress else None)
    return ExportResult(path, fmt, path.stat().st_size, {"frames": n})
