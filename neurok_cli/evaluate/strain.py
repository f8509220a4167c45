"""The strain limit: how far the engine's own frames stretch or shorten a mesh's edges.

The decoded frames of ``neurok animate`` keep every edge within ``1 ± limit`` of its rest
length (model/strain.py). The limit is the data's, per category: over the frames of
sequences of a split, the QUANTILE of each edge's strain |l / l0 - 1| against the first
frame, so the projection touches only what the engine itself rarely shows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data.dataset import PairDataset, SamplingConfig
from ..model.strain import mesh_edges

QUANTILE = 0.9
MAX_VALUES = 200_000  # per sequence: edges x frames subsampled evenly beyond this


def edge_strain(rest: np.ndarray, x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """|l / l0 - 1| of ``edges`` (E, 2) in shapes ``x`` (..., N, 3) against ``rest``."""
    length0 = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=-1)
    length = np.linalg.norm(x[..., edges[:, 0], :] - x[..., edges[:, 1], :], axis=-1)
    return np.abs(length / np.maximum(length0, 1e-12) - 1.0)


def fit_strain_limit(folder, split: str = "train", *, per_category: int = 64,
                     quantile: float = QUANTILE, seed: int = 0,
                     categories: tuple[str, ...] | None = None,
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """Per category: the ``quantile`` of edge strain over every frame of up to
    ``per_category`` sequences of ``split`` (drawn at random, each weighted alike).
    Returns {category: {"limit", "quantile", "mean", "p50", "p99", "sequences", "split"}}."""
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    ds = PairDataset(folder, split, SamplingConfig(seed=seed), cache=False)
    rng = np.random.default_rng([seed, 41])
    chosen = {}
    for name in ds.categories:
        if categories is None or name in categories:
            members = np.flatnonzero(np.array(ds.category_of) == name)
            chosen[name] = rng.permutation(members)[:per_category]
    total = sum(len(m) for m in chosen.values())
    done = 0
    out = {}
    for name, members in chosen.items():
        values = []
        for idx in members:
            entry = ds.sequence(int(idx))
            frames = entry.frames.astype(np.float64)
            s = edge_strain(frames[0], frames[1:], mesh_edges(entry.faces)).ravel()
            stride = max(1, len(s) // MAX_VALUES)
            values.append(s[::stride])
            done += 1
            if progress:
                progress(done, total)
        v = np.concatenate(values)
        out[name] = {"limit": float(np.quantile(v, quantile)), "quantile": quantile,
                     "mean": float(v.mean()), "p50": float(np.quantile(v, 0.5)),
                     "p99": float(np.quantile(v, 0.99)), "sequences": len(members),
                     "split": split}
    return out
