"""Flat (or waved) sheets as test meshes: a grid of vertices triangulated two a cell."""

from __future__ import annotations

import numpy as np


def grid(cols: int, rows: int, width: float, depth: float, height: float = 1.0,
         wave: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``cols`` x ``rows`` vertices over x in [0, width], z in [0, depth], each at
    y = ``height`` + ``wave`` sin(3x); (N, 3) vertices and (F, 3) faces."""
    x, z = np.meshgrid(np.linspace(0, width, cols), np.linspace(0, depth, rows), indexing="ij")
    v = np.stack([x.ravel(), height + wave * np.sin(3 * x.ravel()), z.ravel()], axis=1)
    f = []
    for i in range(cols - 1):
        for j in range(rows - 1):
            a, b, c, d = i * rows + j, i * rows + j + 1, (i + 1) * rows + j, (i + 1) * rows + j + 1
            f += [(a, b, c), (b, d, c)]
    return v, np.asarray(f, np.int64)
