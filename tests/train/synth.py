"""Tiny synthetic 4D datasets for the training tests: analytic squash, bend and twist of
small meshes plus a rigid motion, a few frames each (no physics engine, milliseconds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

from neurok_cli.data.format import Header, Sequence, save_sequence, split_dir, write_header


def _sheet(n: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """An n x n grid in the XZ plane, 0.5 m wide, at height 1 m."""
    u = np.linspace(-0.25, 0.25, n)
    x, z = np.meshgrid(u, u, indexing="ij")
    v = np.stack([x.ravel(), np.ones(n * n), z.ravel()], axis=1)
    idx = np.arange(n * n).reshape(n, n)
    a, b = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    c, d = idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    return v, np.concatenate([np.stack([a, c, b], 1), np.stack([b, c, d], 1)])


def _mesh(category: str) -> tuple[np.ndarray, np.ndarray]:
    if category == "soft":
        m = trimesh.creation.icosphere(subdivisions=1, radius=0.2)
        return m.vertices + [0, 0.2, 0], m.faces
    if category == "cloth":
        return _sheet()
    m = trimesh.creation.box(extents=(0.6, 0.1, 0.1)).subdivide().subdivide()
    return m.vertices + [0, 0.5, 0], m.faces


def deform(category: str, v: np.ndarray, t: float) -> np.ndarray:
    """An analytic deformation of ``v (N, 3)`` at phase ``t`` in [0, 1]."""
    v = v.copy()
    if category == "soft":  # squash along Y, bulge in XZ (volume-ish preserving)
        s = 1.0 - 0.3 * t
        v[:, 1] = 0.2 + (v[:, 1] - 0.2) * s
        v[:, [0, 2]] /= np.sqrt(s)
    elif category == "cloth":  # bend the sheet down along X
        v[:, 1] -= 0.8 * t * (v[:, 0] + 0.25) ** 2
    else:  # twist the beam about its axis and bend its tip
        ang = 1.2 * t * (v[:, 0] + 0.3)
        y, z = v[:, 1] - 0.5, v[:, 2]
        v[:, 1] = 0.5 + np.cos(ang) * y - np.sin(ang) * z - 0.2 * t * (v[:, 0] + 0.3) ** 2
        v[:, 2] = np.sin(ang) * y + np.cos(ang) * z
    return v


def rigid(v: np.ndarray, t: float) -> np.ndarray:
    """A rigid rotation (about a tilted axis) and translation of ``v (N, 3)`` at phase t."""
    axis = np.array([0.3, 1.0, 0.2]) / np.linalg.norm([0.3, 1.0, 0.2])
    ang = 1.5 * t
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    r = np.eye(3) + np.sin(ang) * k + (1 - np.cos(ang)) * k @ k
    return v @ r.T + np.array([0.5, -0.1, 0.3]) * t


def make_sequence(category: str, frames: int = 8, *, deformed: bool = True,
                  amount: float = 1.0) -> Sequence:
    rest, faces = _mesh(category)
    ts = np.linspace(0.0, 1.0, frames)
    poses = [rigid(deform(category, rest, amount * t) if deformed else rest, t) for t in ts]
    return Sequence(rest_vertices=rest.astype(np.float32), faces=faces.astype(np.int32),
                    frames=np.stack(poses).astype(np.float32), fps=10.0,
                    meta={"category": category})


def make_dataset(root: Path, *, train: int = 2, val: int = 1, frames: int = 8,
                 deformed: bool = True,
                 categories: tuple[str, ...] = ("soft", "cloth", "beam")) -> Path:
    """A dataset folder with ``train``/``val`` sequences per category; returns ``root``."""
    counts: dict = {}
    for split, count in (("train", train), ("val", val)):
        for cat in categories:
            for i in range(count):
                seq = make_sequence(cat, frames, deformed=deformed, amount=1.0 - 0.3 * i)
                save_sequence(seq, split_dir(root, split) / f"{cat}_{i:03d}.npz")
                counts.setdefault(split, {}).setdefault(cat, 0)
                counts[split][cat] += 1
    write_header(root, Header(generator={"command": "tests"}, counts=counts))
    return root


# a model that trains in milliseconds per step on a CPU
TINY_MODEL = {"width": 16, "depth": 1, "heads": 2, "latent_tokens": 8, "latent_dim": 4,
              "cond_dim": 8, "posterior_depth": 1, "n_points": 64, "n_query": 32}


def tiny_config(data: Path, out: Path, **overrides) -> dict:
    """TrainConfig fields of a few-step run on ``data``."""
    fields = {"data": str(data), "out": str(out), "size": TINY_MODEL, "steps": 6, "batch": 4,
              "warmup": 2, "val_every": 3, "val_pairs": 4, "val_ik_steps": 3, "ckpt_every": 3,
              "log_every": 2, "device": "cpu"}
    return {**fields, **overrides}
