"""Observed shapes read for fitting: a sequence (an animated glTF or a folder of frames), one
mesh, or a point cloud, in the file's units and axes; shared by the deformable and the
articulated fits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, UsageError
from .asset import Asset
from .mesh import GLTF_SUFFIXES, load_mesh


@dataclass
class Observation:
    """What was observed, in the file's units and axes."""

    kind: str  # "mesh", "points" or "sequence"
    frames: np.ndarray  # (T, N, 3): vertices per frame, or (1, N, 3) points
    faces: np.ndarray | None  # (F, 3), None for a point cloud
    times: np.ndarray  # (T,) seconds
    asset: Asset | None = None  # the first frame as a mesh (sequences and meshes)


def load_observation(path: Path, *, up: str | None = None, fps: float | None = None,
                     animation: str | None = None) -> Observation:
    """A sequence (folder of frames, or a glTF with animation), a mesh, or a point cloud.
    ``fps``: a frame folder's rate (default: its frames.json's, else 30). ``animation``: a
    glTF's animation by name or index (default: the first neurok wrote, else its first, with
    those that move other parts; the others, such as animate's --samples, are alternatives
    to it)."""
    from .frames import frame_info, read_frames
    from .gltf.anim import animation_index, animations_together, first_of_ours
    from .gltf.read import read_animated
    from .points import READERS, load_points

    if animation is not None and path.suffix.lower() not in GLTF_SUFFIXES:
        raise UsageError(f"«animation» picks one of a glTF's animations; {path.name} is not "
                         "a glTF file")
    if path.suffix.lower() in READERS and path.suffix.lower() not in (".obj", ".ply"):
        return Observation("points", load_points(path)[None], None, np.zeros(1))
    if fps is not None and not fps > 0:
        raise UsageError(f"«fps» must be > 0, got {fps}")
    if path.is_dir():
        asset, frames = read_frames(path)
        times = np.arange(len(frames)) / (fps or frame_info(path).get("fps", 30.0))
        return Observation("sequence", frames, asset.faces, times, asset)
    if path.suffix.lower() in GLTF_SUFFIXES:
        asset = load_mesh(path)
        first = first_of_ours(asset.document) if animation is None else \
            animation_index(asset.document, animation)
        which, _ = animations_together(asset.document, first)
        scene = read_animated(path, animations=which or None)
        if len(scene.times) > 1:
            return Observation("sequence", scene.frames, asset.faces, scene.times, asset)
        return Observation("mesh", asset.vertices[None], asset.faces, np.zeros(1), asset)
    try:
        asset = load_mesh(path, up=up)
    except InputError as e:
        if "no triangle faces" not in str(e):
            raise
        return Observation("points", load_points(path)[None], None, np.zeros(1))
    return Observation("mesh", asset.vertices[None], asset.faces, np.zeros(1), asset)


def observed_and_rest(cfg) -> tuple[Observation, Asset]:
    """The observation and the rest it is fitted against: ``cfg.rest``, or a sequence's
    first frame. ``cfg`` holds ``observed``, ``rest``, ``up``, ``fps``,
    ``animation`` and ``require_sequence`` (a fit's config, deformable or articulated)."""
    obs = load_observation(cfg.observed, up=cfg.up, fps=cfg.fps, animation=cfg.animation)
    if cfg.require_sequence and (obs.kind != "sequence" or len(obs.frames) < 2):
        raise UsageError(f"{cfg.observed}: not a sequence of 2 or more frames (an animated "
                         "glTF or a folder of frames), so it has no motion to continue")
    if cfg.rest is not None:
        return obs, load_mesh(cfg.rest, up=cfg.up)
    if obs.kind == "sequence":
        return obs, obs.asset
    raise UsageError(f"{cfg.observed}: one observed shape needs its undeformed mesh: "
                     "pass «rest» REST")
