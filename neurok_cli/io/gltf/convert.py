"""Re-encoding an animated glTF: its played clip, sampled, written as bones or morph targets.

Any animated glTF whose meshes move by morph targets or node motion (ours, ``simulate``'s,
another tool's) is sampled as it plays (the animation asked for and those that play with it,
gltf/anim.py), then written anew by :func:`write_animated` with the chosen encoding: the
meshes, their materials and textures are kept; node motion is baked into the vertices' (a
skin's joints carry it), and the file's other nodes (cameras, lights, empties) are not
written. A mesh that already has a skin is refused: its joints would be baked too, which a
skinned file does not need.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ...errors import InputError, UsageError
from ...limits import MAX_FRAMES, TARGETS
from ..asset import Asset
from .anim import animation_index, animations_together, first_of_ours, key_times, sample_positions
from .doc import load_document
from .scene import load_gltf_parts
from .write import ExportReport, write_animated


def convert_animated(source: str | Path, output: str | Path, *, encoding: str = "bones",
                     fps: float = 30.0, animation: str | None = None,
                     bones: int | None = None, max_targets: int = TARGETS,
                     meshopt: bool = False) -> ExportReport:
    """Write ``source``'s clip to ``output`` (.glb or .gltf, atomically) in ``encoding``.

    ``animation``: the clip by name or index (default: the first ``neurok`` wrote, else the
    file's first), played with those that drive other channels; others are named in the
    report's warnings."""
    source = Path(source)
    doc = load_document(source)
    skinned = [i for i, n in enumerate(doc.gltf.nodes) if n.skin is not None and n.mesh is not None]
    if skinned:
        raise UsageError(f"{source}: already skinned (node {skinned[0]}); convert re-encodes "
                         "morph targets and node motion")
    if not doc.gltf.animations:
        raise UsageError(f"{source}: has no animation to convert")
    first = animation_index(doc, animation) if animation is not None else first_of_ours(doc)
    chosen, left = animations_together(doc, first)
    keys = key_times(doc, chosen)
    end = float(keys[-1]) if len(keys) else 0.0
    if not np.isfinite(end):
        raise InputError(f"{source}: its clip's key times are not finite numbers")
    if end * fps + 1 > MAX_FRAMES:  # (sampled at fps: a 1e4 s clip asked for 4 GiB)
        raise UsageError(f"{source}: its clip lasts {end:g} s, {math.floor(end * fps) + 1:,} "
                         f"frames at {fps:g} fps; at most {MAX_FRAMES:,} are made in one run: "
                         "lower «fps»")
    times = np.arange(0.0, end + 0.5 / fps, 1.0 / fps)
    parts, warnings = load_gltf_parts(doc)
    if not parts:
        raise UsageError(f"{source}: has no triangle meshes in its scene")
    frames = np.concatenate(sample_positions(doc, parts, times, chosen), axis=1)
    asset = Asset(path=source, format=source.suffix[1:].lower(),
                  parts=[replace(p, node=None, mesh=None, primitive=None, matrix=None)
                         for p in parts], metres_per_unit=1.0)
    name = doc.gltf.animations[chosen[0]].name or "neurok"
    report = write_animated(asset, [frames], output, fps=fps, encoding=encoding,
                            bones=bones, max_targets=max_targets, names=[name],
                            as_gltf=Path(output).suffix.lower() == ".gltf", meshopt=meshopt)
    report.warnings[:0] = warnings
    if left:
        names = ", ".join(repr(doc.gltf.animations[i].name or f"#{i}") for i in left)
        report.warnings.append(f"left out {names}: they drive what the converted clip does; "
                               "--animation picks another")
    return report
