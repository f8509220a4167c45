"""Frames back in the file's frame: the welded surface's frames in metres (the physics'
ground at y = 0) gathered to the file's vertices and mapped to its own axes and units, in one
compiled pass where the clip is large (docs/design.md, "Data flow")."""

from __future__ import annotations

import functools

import numpy as np

from ..io.mesh import CanonicalFrame
from ..limits import COMPILED_FROM


def to_file(frames: np.ndarray, frame: CanonicalFrame, back: float, index: np.ndarray
             ) -> np.ndarray:
    """Welded frames (T, M, 3) in metres (the physics' ground at y = 0, ``back`` above the
    file's) -> the file's vertices (T, N, 3) as float64, C-ordered: the gather and the
    affine map in one compiled pass (a 121-frame clip of 100k vertices is 290 MB a pass;
    NumPy's gather, cast, product and shift took 1.0 s, this 0.24 s)."""
    m, shift = file_map(frame, back)
    if frames.shape[0] * len(index) < COMPILED_FROM:  # the penguin's clip: 11 ms
        return np.ascontiguousarray(frames[:, index].astype(np.float64) @ m + shift)
    return _gather_kernel()(np.ascontiguousarray(frames), np.asarray(index, np.int64), m, shift)


def file_map(frame: CanonicalFrame, back: float) -> tuple[np.ndarray, np.ndarray]:
    """The physics' points (metres, the ground at y = 0, ``back`` above the file's) to the
    file's: x @ m + shift -> (m (3, 3), shift (3,))."""
    m = (frame.extent / frame.size_m) * np.asarray(frame.rotation, np.float64)
    return m, frame.from_canonical(np.array([0.0, -back, 0.0]) / frame.size_m)


@functools.cache
def _gather_kernel():
    """:func:`_gather_affine` compiled (numba, cached on disk), imported only when frames are
    written: numba's start-up is not paid by commands that never get here."""
    from ..jit import njit

    return njit(cache=True, nogil=True)(_gather_affine)


def _gather_affine(frames: np.ndarray, index: np.ndarray, m: np.ndarray, shift: np.ndarray
                   ) -> np.ndarray:
    """out[t, i] = frames[t, index[i]] @ m + shift, in float64."""
    out = np.empty((frames.shape[0], index.shape[0], 3))
    for t in range(frames.shape[0]):
        for i in range(index.shape[0]):
            x, y, z = frames[t, index[i], 0], frames[t, index[i], 1], frames[t, index[i], 2]
            for c in range(3):
                out[t, i, c] = x * m[0, c] + y * m[1, c] + z * m[2, c] + shift[c]
    return out
