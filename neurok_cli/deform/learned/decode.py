"""A latent motion decoded into vertices, a block of frames at a time: the decoded
displacements at the driving points, kept within the strain limit, skinned to the mesh's
vertices, turned and moved with the frame; pinned vertices held, vertices lifted out of the
ground (the last stages of deform/learned/motion.py's pipeline; metres, +Y up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...model.dynamics.rollout import Rollout
from ...model.reduced import ReducedShape
from ...model.skinning import Driven
from .body import nearest_index

if TYPE_CHECKING:
    from .motion import _Object

DECODE_FRAMES = 16  # frames x samples skinned per block


def decode_frames(roll: Rollout, displacement_all, shape: ReducedShape, obj: _Object,
                  strain_limit: float | None,
                  progress: Callable[[int, int], None] | None = None, *,
                  ground: bool = False) -> tuple[np.ndarray, float, int, float]:
    """Every frame's vertices (S, T, N, 3), metres: the decoded displacements at the query
    points (kept within the strain limit on their own graph), carried to the vertices by
    locally affine skinning, turned and moved with the frame; pinned vertices held; with
    ``ground``, vertices below it lifted onto it. Also the quadratic map's RMS residual
    along the run (fraction of the size), the sweeps the strain limit took and the lowest
    height a vertex had before the lift (m). The vertices are made a block of frames at a
    time, each written once into the result, and ``progress(done, total)`` follows the
    frames."""
    v, faces, com, size, pinned_v = obj.v, obj.faces, obj.com, obj.size, obj.pinned
    dyn_in_query, query_idx = obj.dyn_in_query, obj.query_idx
    T, S, k = roll.q.shape
    disp = displacement_all(roll.q.reshape(T * S, k))  # (T*S, Qall, 3 or 6) metres
    turns = disp[..., 3:].reshape(T, S, -1, 3) if disp.shape[-1] == 6 else None
    disp = disp[..., :3]
    approx = shape.positions(roll.q.reshape(T * S, k)) - shape.rest
    exact = disp[:, dyn_in_query]
    residual = float((approx - exact).pow(2).mean().sqrt()) / size  # fraction of the size
    rest_v = torch.as_tensor(v - com)
    rest_q = rest_v[torch.as_tensor(query_idx)]
    driven = Driven.of(rest_v, rest_q, faces)
    sweeps = 0
    if strain_limit is not None and len(faces):  # the vertices follow the corrected points
        x, sweeps = driven.limited(rest_q + disp.to(torch.float64), strain_limit,
                                   fixed=torch.as_tensor(pinned_v[query_idx]))
        disp = x - rest_q
    moved = (rest_q + disp.to(torch.float64)).view(T, S, -1, 3)
    R = roll.rotation.reshape(T, S, 3, 3).to(torch.float64)
    shift = torch.as_tensor(com) + roll.translation.reshape(T, S, 3).to(torch.float64)
    hold = _pin_hold(obj)
    out = np.empty((S, T, len(v), 3))
    lowest = np.inf
    step = max(1, DECODE_FRAMES // S)
    for t0 in range(0, T, step):
        t1 = min(t0 + step, T)
        # the frame's turn and shift ride in the skinning's per-point maps; one motion's
        # vertices are written straight into the result
        frame = (moved[t0:t1].reshape(-1, moved.shape[2], 3), R[t0:t1].reshape(-1, 3, 3),
                 shift[t0:t1].reshape(-1, 3))
        into = torch.from_numpy(out[0, t0:t1]) if S == 1 else None
        if turns is None:  # the points' local maps fitted to their neighbourhoods
            x = driven.skin(*frame, out=into)  # ((t1-t0)*S, N, 3)
        else:  # the rigid head's transforms, blended
            x = driven.blend(frame[0], turns[t0:t1].reshape(-1, turns.shape[2], 3),
                             *frame[1:], out=into)
        if S > 1:
            out[:, t0:t1] = x.numpy().reshape(t1 - t0, S, len(v), 3).transpose(1, 0, 2, 3)
        if hold is not None:  # pinned vertices exactly at rest; the correction fades
            near, fade = hold
            block = out[:, t0:t1]
            block += fade * (v[near][None, None] - block[:, :, near])
        if ground:  # the contact acts at the dynamics points; between them, a vertex that
            # the coarser sampling lets into the ground (up to ~3 % of the size, measured
            # on a penguin lying on its side) is lifted onto it, while the block is at hand
            height = out[:, t0:t1, :, 1]
            lowest = min(lowest, float(height.min()))
            np.maximum(height, 0.0, out=height)
        if progress is not None:
            progress(t1, T)
    return out, residual, sweeps, lowest


def _pin_hold(obj: _Object) -> tuple[np.ndarray, np.ndarray] | None:
    """Where pinned vertices are held: each vertex's nearest pinned vertex (N,) and how much
    of the pull back to its rest it takes (1, 1, N, 1), fading over 5 % of the size; None
    without pins."""
    if not obj.pinned.any():
        return None
    v, pins = obj.v, np.flatnonzero(obj.pinned)
    near = pins[nearest_index(v, v[pins])]
    dist = np.linalg.norm(v - v[near], axis=1)
    return near, np.exp(-(dist / (0.05 * obj.size)) ** 2)[None, None, :, None]
