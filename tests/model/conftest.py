"""Shared pieces of the model tests: devices, a tiny model, synthetic deforming spheres."""

from __future__ import annotations

import math

import torch

from neurok_cli.model import NeurokModel, model_config

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def tiny_model(device: str = "cpu", dtype: torch.dtype = torch.float32, seed: int = 0,
               **overrides) -> NeurokModel:
    torch.manual_seed(seed)
    return NeurokModel(model_config("tiny", **overrides)).to(device=device, dtype=dtype)


def train_steps(model: NeurokModel, batch: dict, steps: int, lr: float = 3e-3,
                optimizer=torch.optim.Adam) -> dict:
    """``steps`` optimiser steps of the model's loss on one batch -> the last step's stats."""
    opt = optimizer(model.parameters(), lr=lr)
    stats: dict = {}
    for _ in range(steps):
        loss, stats = model.loss(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return stats


def randomize_zero_inits(model: NeurokModel, std: float = 0.2, seed: int = 1) -> NeurokModel:
    """Give the zero-initialised adaLN and output layers random values, so that the decoder
    depends on z (an untrained model decodes to exactly 0 everywhere)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ada." in name or "final.linear" in name:
                p.copy_(torch.randn(p.shape, generator=g) * std)
    return model


def sphere(n: int, radius: float = 0.5) -> torch.Tensor:
    """n points spread evenly on a sphere (Fibonacci lattice) -> (n, 3)."""
    i = torch.arange(n, dtype=torch.float64) + 0.5
    y = 1 - 2 * i / n
    r = (1 - y**2).sqrt()
    phi = math.pi * (3 - math.sqrt(5)) * i
    return radius * torch.stack([r * phi.cos(), y, r * phi.sin()], dim=-1)


def bend_twist(x: torch.Tensor, bend: torch.Tensor, twist: torch.Tensor) -> torch.Tensor:
    """A smooth displacement of points x (B, N, 3): bend along x by bend * y^2 and twist
    about +Y by twist * y radians; bend, twist (B,)."""
    y = x[..., 1]
    angle = twist[:, None] * y  # (B, N)
    c, s = angle.cos(), angle.sin()
    rx = c * x[..., 0] - s * x[..., 2]
    rz = s * x[..., 0] + c * x[..., 2]
    delta = torch.stack([rx - x[..., 0], torch.zeros_like(y), rz - x[..., 2]], dim=-1)
    delta[..., 0] += bend[:, None] * y**2
    return delta


def make_batch(B: int = 4, P: int = 128, Q: int = 64, seed: int = 0, device: str = "cpu",
               dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """B spheres (radius varying) with different bend/twist displacements, as a model batch."""
    g = torch.Generator().manual_seed(seed)
    radius = 0.35 + 0.15 * torch.rand(B, 1, 1, generator=g, dtype=torch.float64)
    pts = sphere(P)[None] / 0.5 * radius  # (B, P, 3)
    query = sphere(Q)[None] / 0.5 * radius  # (B, Q, 3)
    bend = 0.4 * (torch.rand(B, generator=g, dtype=torch.float64) - 0.5)
    twist = 0.6 * (torch.rand(B, generator=g, dtype=torch.float64) - 0.5)
    batch = {"points": pts, "normals": pts / radius, "delta_points": bend_twist(pts, bend, twist),
             "query": query, "delta_query": bend_twist(query, bend, twist)}
    return {k: v.to(device=device, dtype=dtype) for k, v in batch.items()}
