"""Reading positions per frame from any glTF: morph-target weights and node motion sampled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import InputError, UsageError
from ..asset import Part
from .anim import key_times, sample_positions
from .doc import load_document
from .scene import load_gltf_parts


@dataclass
class AnimatedScene:
    """Parts of a glTF and their world positions at ``times``."""

    parts: list[Part]
    times: np.ndarray  # (T,) seconds
    positions: list[np.ndarray]  # per part (T, n_p, 3)
    animation_names: list[str]

    @property
    def frames(self) -> np.ndarray:
        """(T, N, 3) positions of all parts concatenated (the order of ``Asset.vertices``)."""
        return np.concatenate(self.positions, axis=1)

    @property
    def faces(self) -> np.ndarray:
        """(F, 3) every part's faces, indexing :attr:`frames`' concatenated vertices."""
        offsets = np.cumsum([0] + [len(p.vertices) for p in self.parts])
        return np.concatenate([p.faces + o for p, o in zip(self.parts, offsets)])


def read_animated(path: str | Path, *, fps: float | None = None, times: np.ndarray | None = None,
                  animations: list[int] | None = None, max_frames: int = 100_000
                  ) -> AnimatedScene:
    """Sample a glTF's animations (all, or the chosen indices) at ``times``.

    Without ``times``: at ``fps`` over the longest animation, or at every keyframe time when
    ``fps`` is None. A file without animation gives one frame at time 0.
    """
    path = Path(path)
    doc = load_document(path)
    parts, _ = load_gltf_parts(doc)
    if not parts:
        raise InputError(f"{path}: has no triangle meshes in its scene")
    anims = doc.gltf.animations
    for a in animations or []:
        if not 0 <= a < len(anims):
            raise UsageError(f"{path}: no animation {a}; it has {len(anims)}")
    if times is None:
        keys = key_times(doc, animations)
        if len(keys) == 0:
            times = np.zeros(1)
        elif fps is None:
            times = keys
        else:
            times = np.arange(0.0, float(keys[-1]) + 0.5 / fps, 1.0 / fps)
    times = np.asarray(times, np.float64)
    if len(times) > max_frames:
        raise UsageError(f"{path}: {len(times)} frames to sample; lower the frame rate")
    positions = sample_positions(doc, parts, times, animations)
    names = [a.name if a.name is not None else f"animation{i}" for i, a in enumerate(anims)
             if animations is None or i in animations]
    return AnimatedScene(parts=parts, times=times, positions=positions, animation_names=names)
