"""Inverse kinematics without correspondences: the latent state and rigid pose of an object
whose deformed surface is known only as points (a point cloud, or a mesh of another topology).

The deformed surface is x(z, R, t) = R (p + decode(z, p)) + t over surface samples p of the
rest shape, all in the rest's canonical frame; z, the rotation vector of R and t are found by
Adam on the Chamfer distance to the observed points, from several starts at once.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from ..errors import UsageError
from .encoder import Prior
from .neurok import NeurokModel

CHUNK = 4096  # rows of the distance matrix at a time


class SurfaceFit(NamedTuple):
    z: Tensor  # (k,) latent of the deformed state
    rotation: Tensor  # (3, 3) deformed = rotation @ (rest + displacement) + translation
    translation: Tensor  # (3,)
    loss: float  # symmetric Chamfer-L1 at the fitting samples, canonical units


def nearest_distance(a: Tensor, b: Tensor) -> Tensor:
    """For each point of a (B, M, 3), the distance to its nearest point of b (B, N, 3)
    -> (B, M); differentiable in both (through the nearest pair)."""
    out = []
    for rows in a.split(CHUNK, dim=1):
        idx = torch.cdist(rows.detach(), b.detach()).argmin(dim=-1)  # (B, m)
        near = torch.gather(b, 1, idx[..., None].expand(*idx.shape, 3))
        out.append((rows - near).norm(dim=-1))
    return torch.cat(out, dim=1)


def chamfer_l1(a: Tensor, b: Tensor) -> Tensor:
    """½(mean nearest distance a→b + b→a) per object: a (B, M, 3), b (B, N, 3) -> (B,)."""
    return 0.5 * (nearest_distance(a, b).mean(dim=1) + nearest_distance(b, a).mean(dim=1))


def rotation_matrix(w: Tensor) -> Tensor:
    """Rodrigues: rotation vectors (B, 3) -> (B, 3, 3), smooth at 0."""
    theta2 = (w * w).sum(-1, keepdim=True)[..., None]  # (B, 1, 1)
    theta = theta2.clamp_min(1e-24).sqrt()
    small = theta2 < 1e-8
    a = torch.where(small, 1.0 - theta2 / 6.0, torch.sin(theta) / theta)
    b = torch.where(small, 0.5 - theta2 / 24.0, (1.0 - torch.cos(theta)) / theta2.clamp_min(1e-24))
    zero = torch.zeros_like(w[:, 0])
    K = torch.stack([zero, -w[:, 2], w[:, 1], w[:, 2], zero, -w[:, 0],
                     -w[:, 1], w[:, 0], zero], dim=-1).reshape(-1, 3, 3)
    eye = torch.eye(3, dtype=w.dtype, device=w.device).expand_as(K)
    return eye + a * K + b * (K @ K)


def fit_surface(model: NeurokModel, prior: Prior, surface: Tensor, target: Tensor,
                starts: Tensor, *, steps: int = 150, lr: float = 0.05, rigid: bool = True,
                latent: bool = True, prior_weight: float = 0.0) -> SurfaceFit:
    """The z, R, t of ONE object whose decoded surface best matches ``target`` (Chamfer-L1).

    Args:
        prior: the object's prior (B = 1), from ``model.encode_prior``.
        surface: (P, 3) samples of the rest surface, canonical units.
        target: (N, 3) observed points in the same frame (roughly centred on the rest).
        starts: (S, k) latents to start from; all run at once and the best is returned.
        rigid: also fit a rotation and translation (else they stay identity and 0).
        latent: fit z (else it stays at the start: a rigid fit of that shape).
        prior_weight: weight of |z - mu|² / 2 per start (0 = maximum likelihood).
    """
    if prior.batch_size != 1 or surface.dim() != 2 or target.dim() != 2 or starts.dim() != 2:
        raise UsageError("fit_surface: one object (B = 1), surface (P, 3), target (N, 3) and "
                         f"starts (S, k); got {tuple(surface.shape)}, {tuple(target.shape)}, "
                         f"{tuple(starts.shape)}")
    was_training = model.training
    model.eval()
    try:
        S = starts.shape[0]
        prior = prior.detach().repeat(S)
        z = starts.detach().clone().requires_grad_(latent)  # (S, k)
        w = torch.zeros(S, 3, dtype=z.dtype, device=z.device, requires_grad=rigid)
        t = torch.zeros(S, 3, dtype=z.dtype, device=z.device, requires_grad=rigid)
        params = [p for p, on in ((z, latent), (w, rigid), (t, rigid)) if on]
        if not params:
            raise UsageError("fit_surface: nothing to fit (latent and rigid both off)")
        opt = torch.optim.Adam(params, lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1), eta_min=lr / 20)
        query = surface[None].expand(S, -1, -1)
        goal = target[None].expand(S, -1, -1)
        best = (float("inf"), None)
        fixed = None
        if not latent:  # the shape does not change: decode it once
            with torch.no_grad():
                fixed = query + model.decode(z, prior, query)
        with torch.enable_grad():
            for step in range(steps + 1):
                shape = fixed if fixed is not None else query + model.decode(z, prior, query)
                x = shape @ rotation_matrix(w).transpose(1, 2) + t[:, None]
                loss = chamfer_l1(x, goal)  # (S,)
                total = loss + prior_weight * 0.5 * (z - prior.mu).pow(2).sum(-1) / len(surface)
                now = loss.detach()
                i = int(now.argmin())
                if float(now[i]) < best[0]:
                    best = (float(now[i]), (z[i].detach().clone(), w[i].detach().clone(),
                                            t[i].detach().clone()))
                if step == steps:
                    break
                grads = torch.autograd.grad(total.sum(), params)
                for p, g in zip(params, grads):
                    p.grad = g
                opt.step()
                sched.step()
        zb, wb, tb = best[1]
        return SurfaceFit(zb, rotation_matrix(wb[None])[0], tb, best[0])
    finally:
        model.train(was_training)
