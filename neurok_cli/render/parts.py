"""Renderer inputs (faces, colours, textures, smooth groups) from loaded parts."""

from __future__ import annotations

import io

import numpy as np

from ..io.asset import Part
from ..io.mesh import weld
from .renderer import RenderPart


def _decode_texture(part: Part) -> np.ndarray | None:
    if part.material is None or part.material.texture is None or part.uvs is None:
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(part.material.texture)) as im:
            return np.asarray(im.convert("RGBA"))
    except (UnidentifiedImageError, OSError):
        return None


def _single_sided(faces: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Drop the second copy of double-sided triangles (same corners, any winding): lighting is
    two-sided already, and a reversed copy would cancel the smooth normals it shares."""
    _, first = np.unique(np.sort(groups[faces], axis=1), axis=0, return_index=True)
    return faces[np.sort(first)]


def render_parts(parts: list[Part]) -> list[RenderPart]:
    """Renderer inputs (faces, colours, textures, smooth groups) for loaded parts."""
    out = []
    for p in parts:
        groups = weld(p.vertices, p.faces).index
        out.append(RenderPart(
            faces=_single_sided(p.faces, groups).astype(np.int32),
            base_color=tuple(p.material.base_color) if p.material else (0.8, 0.8, 0.8, 1.0),
            uvs=p.uvs, texture=_decode_texture(p),
            smooth_groups=groups))
    return out
