"""``neurok preview``: render an animated glTF, a frame folder or a static mesh to MP4/GIF,
or one frame of it to a PNG still."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError, UsageError
from ..io.asset import Part
from ..io.mesh import GLTF_SUFFIXES, Z_UP_TO_Y_UP, load_mesh
from .parts import render_parts
from .renderer import Camera, choose_backend, render_frames
from .video import VIDEO_FORMATS, write_image, write_video

STILL = ".png"


@dataclass
class PreviewConfig:
    """Options of a preview render."""

    input: Path  # animated glTF/GLB, frame folder, dataset .npz, or a static mesh (turntable)
    output: Path  # .mp4 or .gif, or .png for one frame (a still)
    fps: float | None = None  # sampling rate; default: the file's keys (glTF) or 30
    width: int = 640
    height: int = 480
    azimuth: float = 30.0  # degrees about +Y
    elevation: float = 20.0  # degrees above the horizon
    renderer: str = "auto"  # "auto", "gl" or "numpy"
    up: str | None = None  # "y" or "z" for OBJ/PLY/STL frames
    max_seconds: float = 600.0  # refuse longer animations (a typo in a file, not a movie)
    turntable_seconds: float = 4.0  # a static mesh is shown turning once in this time
    at: float | None = None  # a still's time (s); default: the middle of the animation
    animation: str | None = None  # a glTF's animation by name or index; default: the first
    # neurok wrote, else the file's first, with every other that drives different parts (see
    # gltf_anim.animations_together)


@dataclass
class PreviewReport:
    """What was rendered."""

    output: Path
    frames: int
    fps: float
    seconds: float
    vertices: int
    triangles: int
    renderer: str
    warnings: list[str] = field(default_factory=list)
    still: bool = False  # one frame; ``seconds`` is then its time


def _load_motion(cfg: PreviewConfig) -> tuple[list[Part], list[np.ndarray], float, list[str]]:
    """Parts, per-part positions (T, n, 3) in +Y-up world, the frame rate, warnings."""
    path = cfg.input
    if cfg.animation is not None and path.suffix.lower() not in GLTF_SUFFIXES:
        raise UsageError(f"«animation» picks one of a glTF's animations; {path.name} is not "
                         "a glTF file")
    if path.suffix.lower() == ".npz":  # a 4D dataset sequence
        from ..data.format import load_sequence
        from ..io.asset import Part

        seq = load_sequence(path)
        part = Part(name=path.stem, vertices=seq.rest_vertices.astype(np.float64),
                    faces=seq.faces.astype(np.int64))
        return [part], [seq.frames.astype(np.float64)], cfg.fps or float(seq.fps), []
    if path.is_dir():
        from ..io.frames import frame_info, read_frames

        asset, frames = read_frames(path)
        info = frame_info(path)  # what our own writer recorded: the defaults
        if (cfg.up or info.get("up")) == "z":
            frames = frames @ Z_UP_TO_Y_UP.T
        offs = asset.offsets
        return asset.parts, [frames[:, a:b] for a, b in zip(offs, offs[1:])], \
            cfg.fps or info.get("fps", 30.0), asset.warnings
    if path.suffix.lower() in GLTF_SUFFIXES:
        from ..io.gltf.anim import (
            animation_index,
            animation_names,
            animations_together,
            first_of_ours,
            is_ours,
            key_times,
            sample_positions,
        )

        asset = load_mesh(path)  # checks the file as every loader does; parsed once
        doc, warnings = asset.document, list(asset.warnings)
        first = first_of_ours(doc) if cfg.animation is None else \
            animation_index(doc, cfg.animation)
        which, left = animations_together(doc, first)
        anims = doc.gltf.animations
        if first is not None and is_ours(anims[first]):  # ours carries the file's channels
            left = [i for i in left if is_ours(anims[i])]  # (gltf_parts): only rivals count
        if left and cfg.animation is None:
            warnings.append(f"{path.name}: showing {animation_names(doc, which)}; "
                            f"{animation_names(doc, left)} drive the same parts instead "
                            "(«animation» picks one)")
        keys = key_times(doc, which)
        end = float(keys[-1]) if len(keys) else 0.0
        if end > cfg.max_seconds:
            raise InputError(f"{path}: animation lasts {end:.0f} s; preview renders at most "
                             f"{cfg.max_seconds:.0f} s")
        if len(keys) < 2:
            fps, times = cfg.fps or 30.0, np.zeros(1)
        else:  # the file's own key rate unless asked; uneven keys are resampled evenly
            fps = cfg.fps or 1.0 / float(np.median(np.diff(keys)))
            even = cfg.fps is None and np.allclose(np.diff(keys), 1.0 / fps, rtol=1e-3)
            times = keys if even else np.arange(0.0, end + 0.5 / fps, 1.0 / fps)
        return asset.parts, sample_positions(doc, asset.parts, times, which), fps, warnings
    asset = load_mesh(path, up=cfg.up)
    v = asset.vertices @ (Z_UP_TO_Y_UP.T if asset.up == "z" else np.eye(3))
    fps = cfg.fps or 30.0
    spin = turntable(v, frames=max(2, round(cfg.turntable_seconds * fps)))
    offs = asset.offsets
    return asset.parts, [spin[:, a:b] for a, b in zip(offs, offs[1:])], fps, asset.warnings


def turntable(vertices: np.ndarray, frames: int) -> np.ndarray:
    """(T, N, 3) one full turn of ``vertices`` (N, 3) about the vertical axis through the
    centre of their bounding box: how a static mesh is previewed."""
    centre = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    angles = np.linspace(0.0, 2 * np.pi, frames, endpoint=False)
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    x, y, z = (vertices - centre).T
    return np.stack([c * x + s * z, np.broadcast_to(y, (frames, len(y))), -s * x + c * z],
                    axis=-1) + centre


def preview(cfg: PreviewConfig, *, progress: Callable[[int, int], None] | None = None
            ) -> PreviewReport:
    """Render ``cfg.input`` to ``cfg.output``; ``progress(done, total)`` after each frame.
    A ``.png`` output is one frame, at ``cfg.at`` seconds (default the middle), framed as
    the whole animation is."""
    suffix = cfg.output.suffix.lower()
    if suffix not in (*VIDEO_FORMATS, STILL):
        raise UsageError(f"{cfg.output}: preview writes {', '.join(VIDEO_FORMATS)} or a "
                         f"{STILL} still; choose one of those extensions")
    if cfg.at is not None and (suffix != STILL or not (math.isfinite(cfg.at) and cfg.at >= 0)):
        raise UsageError(f"«at» picks a still's time: give a {STILL} output and a time >= 0 "
                         f"s, not {cfg.at} for {cfg.output.name}")
    if cfg.width < 16 or cfg.height < 16 or cfg.width > 8192 or cfg.height > 8192:
        raise UsageError(f"image size {cfg.width}x{cfg.height} is out of range (16..8192)")
    if cfg.fps is not None and not 0 < cfg.fps <= 240:
        raise UsageError(f"«fps» must be in (0, 240], not {cfg.fps}")
    backend = choose_backend(cfg.renderer)  # before loading: --renderer gl without GL fails now
    parts, positions, fps, warnings = _load_motion(cfg)
    total = len(positions[0])
    camera = Camera(width=cfg.width, height=cfg.height, azimuth=cfg.azimuth,
                    elevation=cfg.elevation)
    select = None
    if suffix == STILL:
        end = (total - 1) / fps
        if cfg.at is not None and cfg.at > end + 0.5 / fps:
            raise UsageError(f"«at» {cfg.at:g} s is past the end of {cfg.input.name} "
                             f"({end:.3g} s)")
        select = [min(round(cfg.at * fps), total - 1) if cfg.at is not None else total // 2]
    frames = render_frames(render_parts(parts), [p.astype(np.float32) for p in positions],
                           camera, backend=backend, select=select)
    sizes = dict(vertices=sum(len(p.vertices) for p in parts),
                 triangles=sum(len(p.faces) for p in parts), renderer=backend,
                 warnings=warnings)
    if select is not None:
        write_image(next(iter(frames)), cfg.output)
        if progress:
            progress(1, 1)
        return PreviewReport(output=cfg.output, frames=1, fps=fps, seconds=select[0] / fps,
                             still=True, **sizes)
    n = write_video(frames, cfg.output, fps=fps,
                    progress=(lambda i: progress(i, total)) if progress else None)
    return PreviewReport(output=cfg.output, frames=n, fps=fps, seconds=n / fps, **sizes)
