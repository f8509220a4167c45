"""Encoding rendered frames: H.264 MP4 through ffmpeg (imageio-ffmpeg), GIF through Pillow,
and single stills as PNG (Pillow).

Outputs are written atomically (``atomic_path``): an encode that fails or is interrupted,
including by an exception from the frame iterator, leaves no file behind.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from ..errors import DependencyError, OutputError, UsageError
from ..io.atomic import atomic_path

Progress = Callable[[int], None]  # called with the number of frames encoded so far
Writer = Callable[[Iterator[np.ndarray], Path, float, Progress | None], int]

_MP4_CRF = 18  # x264 constant rate factor: visually near-lossless for flat-shaded renders


def write_video(frames: Iterable[np.ndarray], path: str | Path, *, fps: float,
                progress: Progress | None = None) -> int:
    """Encode ``frames`` (each (H, W, 3) uint8 RGB, top row first, all one size) to ``path``.

    The format follows the extension (see ``VIDEO_FORMATS``). ``fps`` is frames per second;
    ``progress(i)`` is called after the i-th frame (1-based) is encoded. Returns the number
    of frames written.
    """
    path = Path(path)
    writer = VIDEO_FORMATS.get(path.suffix.lower())
    if writer is None:
        raise OutputError(f"{path}: unknown video format {path.suffix or '(none)'!r}; "
                          "use one of " + ", ".join(VIDEO_FORMATS))
    if not (math.isfinite(fps) and fps > 0):
        raise UsageError(f"fps must be a positive number, got {fps}")
    frames = iter(frames)
    first = next(frames, None)
    if first is None:
        raise OutputError(f"{path}: no frames to write; render at least one frame")
    first = _rgb(first, None, 0)
    checked = (_rgb(f, first.shape, i) for i, f in enumerate(frames, start=1))
    try:
        with atomic_path(path) as tmp:
            return writer(itertools.chain([first], checked), tmp, float(fps), progress)
    except OSError as exc:  # ffmpeg died, disk full, permission denied
        line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise OutputError(f"{path}: could not write the video ({line}); check the folder is "
                          "writable and has free space") from exc


def _rgb(frame: np.ndarray, shape: tuple[int, ...] | None, index: int) -> np.ndarray:
    """``frame`` as a contiguous (H, W, 3) uint8 array; grey and RGBA are converted."""
    a = np.asarray(frame)
    if a.ndim == 2:
        a = a[:, :, None]
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] not in (1, 3, 4) or 0 in a.shape:
        raise OutputError(f"frame {index}: expected an (H, W, 3) uint8 image, got "
                          f"{a.dtype} {a.shape}")
    a = np.repeat(a, 3, axis=2) if a.shape[2] == 1 else a[:, :, :3]
    if shape is not None and a.shape != shape:
        raise OutputError(f"frame {index}: size {a.shape[:2]} differs from the first frame's "
                          f"{shape[:2]}; render every frame at one size")
    return np.ascontiguousarray(a)


def _write_mp4(frames: Iterator[np.ndarray], tmp: Path, fps: float,
               progress: Progress | None) -> int:
    """H.264 (libx264) in yuv420p; odd sizes are padded by repeating the last row/column."""
    try:
        import imageio_ffmpeg

        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError) as exc:
        raise DependencyError("writing .mp4 needs ffmpeg; pip install imageio-ffmpeg, or "
                              "write a .gif instead") from exc
    first = next(frames)
    h, w = first.shape[:2]
    pad = ((0, h % 2), (0, w % 2), (0, 0))  # yuv420p needs even sizes
    encoder = imageio_ffmpeg.write_frames(
        str(tmp), (w + w % 2, h + h % 2), fps=fps, codec="libx264", pix_fmt_in="rgb24",
        pix_fmt_out="yuv420p", quality=None, macro_block_size=2, ffmpeg_log_level="error",
        output_params=["-crf", str(_MP4_CRF), "-preset", "fast", "-movflags", "+faststart"])
    count = 0
    try:
        encoder.send(None)  # starts ffmpeg
        for frame in itertools.chain([first], frames):
            encoder.send(np.pad(frame, pad, mode="edge") if h % 2 or w % 2 else frame)
            count += 1
            if progress is not None:
                progress(count)
    finally:
        encoder.close()
    return count


def _write_gif(frames: Iterator[np.ndarray], tmp: Path, fps: float,
               progress: Progress | None) -> int:
    """Animated GIF looping forever, one adaptive 256-colour palette per frame, dithered."""
    from PIL import Image

    images = []
    for frame in frames:
        images.append(Image.fromarray(frame).quantize(
            colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.FLOYDSTEINBERG))
        if progress is not None:
            progress(len(images))
    # GIF delays are whole centiseconds, and browsers slow delays under 20 ms down to 100 ms.
    duration = max(20, 10 * round(100.0 / fps))
    images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], loop=0,
                   duration=duration)
    return len(images)


VIDEO_FORMATS: dict[str, Writer] = {".mp4": _write_mp4, ".gif": _write_gif}


def write_image(frame: np.ndarray, path: str | Path) -> None:
    """One rendered frame ((H, W, 3) uint8 RGB, top row first) as a PNG at ``path``."""
    from PIL import Image

    path = Path(path)
    if path.suffix.lower() != ".png":
        raise OutputError(f"{path}: a still is written as .png, not "
                          f"{path.suffix or '(no extension)'!r}")
    image = Image.fromarray(_rgb(frame, None, 0))
    try:
        with atomic_path(path) as tmp:
            image.save(tmp, format="PNG", optimize=True)
    except OSError as exc:
        line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise OutputError(f"{path}: could not write the image ({line}); check the folder is "
                          "writable and has free space") from exc
