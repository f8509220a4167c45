"""Locally rigid deformation: a rigid transform per driving point, and vertices blended from
their nearest points' transforms by dual quaternions.

With a rigid head (``ModelConfig.rigid``) the decoder gives, at every driving point p_i, a
displacement t_i and a rotation vector ω_i (radians, relative to the rest shape). The point's
transform is x -> R_i (x - p_i) + p_i + t_i: a vertex near p_i turns with it, so a bend or a
fold is rotations, which keep edge lengths, and a squash is a smooth field of translations.

Blending rigid transforms linearly (as matrices) collapses volume where neighbouring
rotations differ (a twisted tube thins to a "candy wrapper"); blending them as unit dual
quaternions and normalising (Kavan et al. 2008) gives a rigid transform at every vertex.
Rotations relative to the rest shape stay well within half a turn, so their quaternions,
taken with a non-negative real part, lie in one hemisphere and need no sign alignment.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..errors import UsageError
from ..jit import njit

_TINY = 1e-12


def rotation_matrix(omega: Tensor) -> Tensor:
    """Rodrigues: rotation vectors (..., 3) -> matrices (..., 3, 3), smooth through 0 (its
    coefficients by their series below 1e-4 rad)."""
    theta2 = omega.pow(2).sum(-1, keepdim=True)[..., None]  # (..., 1, 1)
    theta = theta2.clamp_min(_TINY).sqrt()
    small = theta2 < 1e-8
    a = torch.where(small, 1.0 - theta2 / 6.0, torch.sin(theta) / theta)
    b = torch.where(small, 0.5 - theta2 / 24.0, (1.0 - torch.cos(theta)) / theta2.clamp_min(
        _TINY))
    x, y, z = omega.unbind(-1)
    zero = torch.zeros_like(x)
    K = torch.stack([zero, -z, y, z, zero, -x, -y, x, zero], -1).reshape(*omega.shape, 3)
    eye = torch.eye(3, dtype=omega.dtype, device=omega.device)
    return eye + a * K + b * (K @ K)


def quaternion(omega: Tensor) -> Tensor:
    """Rotation vectors (..., 3) -> unit quaternions (..., 4), (w, x, y, z), w >= 0 for
    turns up to half a turn."""
    theta2 = omega.pow(2).sum(-1, keepdim=True)
    theta = theta2.clamp_min(_TINY).sqrt()
    half = torch.where(theta2 < 1e-8, 0.5 - theta2 / 48.0, torch.sin(0.5 * theta) / theta)
    return torch.cat([torch.cos(0.5 * theta), half * omega], -1)


def _mul(a: Tensor, b: Tensor) -> Tensor:
    """Quaternion products a b, (..., 4) each."""
    aw, av = a[..., :1], a[..., 1:]
    bw, bv = b[..., :1], b[..., 1:]
    return torch.cat([aw * bw - (av * bv).sum(-1, keepdim=True),
                      aw * bv + bw * av + torch.cross(av, bv, dim=-1)], -1)


def dual_quaternions(points: Tensor, shift: Tensor, omega: Tensor) -> Tensor:
    """The transforms x -> R(ω_i) (x - p_i) + p_i + t_i as unit dual quaternions: rest points
    (Q, 3), displacements ``shift`` and rotation vectors ``omega`` (B, Q, 3) -> (B, Q, 8),
    the real part first."""
    real = quaternion(omega)  # (B, Q, 4)
    turned = rotation_matrix(omega) @ points[..., None]  # (B, Q, 3, 1)
    tau = points + shift - turned[..., 0]  # the translation after the rotation about 0
    pure = torch.cat([torch.zeros_like(tau[..., :1]), tau], -1)
    return torch.cat([real, 0.5 * _mul(pure, real)], -1)


@njit(cache=True)
def _blend_apply(dq, idx, w, v, out):
    """:func:`blend_vertices` in machine code: each vertex's weighted sum of its points'
    dual quaternions dq (B, Q, 8) (idx, w (N, k)), normalised and applied to v (N, 3) ->
    out (B, N, 3)."""
    q = np.empty(8)
    for b in range(dq.shape[0]):
        for i in range(idx.shape[0]):
            q[:] = 0.0
            for j in range(idx.shape[1]):
                wij, p = w[i, j], idx[i, j]
                for c in range(8):
                    q[c] += wij * dq[b, p, c]
            n = max(np.sqrt(q[0] ** 2 + q[1] ** 2 + q[2] ** 2 + q[3] ** 2), _TINY)
            qw, x, y, z = q[0] / n, q[1] / n, q[2] / n, q[3] / n
            a, ax, ay, az = q[4] / n, q[5] / n, q[6] / n, q[7] / n
            tx = 2.0 * (qw * ax - a * x + y * az - z * ay)  # vector part of 2 d r*
            ty = 2.0 * (qw * ay - a * y + z * ax - x * az)
            tz = 2.0 * (qw * az - a * z + x * ay - y * ax)
            px, py, pz = v[i, 0], v[i, 1], v[i, 2]
            cx = y * pz - z * py + qw * px  # (x, y, z) x p + w p
            cy = z * px - x * pz + qw * py
            cz = x * py - y * px + qw * pz
            out[b, i, 0] = px + 2.0 * (y * cz - z * cy) + tx
            out[b, i, 1] = py + 2.0 * (z * cx - x * cz) + ty
            out[b, i, 2] = pz + 2.0 * (x * cy - y * cx) + tz


def apply_blend(blend: Tensor, vertices: Tensor) -> Tensor:
    """Blended dual quaternions (B, N, 8), one per vertex, applied to the rest ``vertices``
    (N, 3) after normalising -> (B, N, 3)."""
    norm = blend[..., :4].norm(dim=-1, keepdim=True).clamp_min(_TINY)
    real, dual = blend[..., :4] / norm, blend[..., 4:] / norm
    w, v = real[..., :1], real[..., 1:]
    a, A = dual[..., :1], dual[..., 1:]
    tau = 2.0 * (w * A - a * v + torch.cross(v, A, dim=-1))  # vector part of 2 d r*
    x = vertices.to(blend.dtype).expand_as(tau)
    turned = x + 2.0 * torch.cross(v, torch.cross(v, x, dim=-1) + w * x, dim=-1)
    return turned + tau


def blend_vertices(vertices: Tensor, points: Tensor, shift: Tensor, omega: Tensor,
                   idx: Tensor, w: Tensor) -> Tensor:
    """Vertices (N, 3) at rest moved by their nearest driving points' transforms: rest points
    (Q, 3), their displacements and rotation vectors (B, Q, 3), each vertex's points and
    weights idx, w (N, k) (``skinning.smooth_weights``) -> (B, N, 3).

    Dual-quaternion blending: a rigid motion of all points is reproduced exactly, and a
    vertex on a driving point with weight 1 follows it exactly."""
    if shift.shape != omega.shape or shift.dim() != 3 or shift.shape[1] != len(points):
        raise UsageError(f"blend_vertices: shift and omega must be (B, {len(points)}, 3), "
                         f"got {tuple(shift.shape)} and {tuple(omega.shape)}")
    dq = dual_quaternions(points.to(shift.dtype), shift, omega)  # (B, Q, 8)
    if (dq.dtype == torch.float64 and dq.device.type == "cpu"
            and not (torch.is_grad_enabled() and dq.requires_grad)):
        # compiled: no (B, N, k, 8) gather (100k vertices, 121 frames: 5.9 s -> ~1 s)
        out = np.empty((len(dq), len(vertices), 3))
        _blend_apply(dq.detach().numpy(), idx.numpy(), w.to(torch.float64).numpy(),
                     np.ascontiguousarray(vertices.detach().to(torch.float64).numpy()), out)
        return torch.from_numpy(out)
    blend = (w.to(dq.dtype)[None, :, :, None] * dq[:, idx]).sum(2)  # (B, N, 8)
    return apply_blend(blend, vertices)


def nearest_points(rest: Tensor, neighbours: int) -> Tensor:
    """Each point's k nearest other points, k = min(neighbours, Q - 1): rest (B, Q, 3) ->
    indices (B, Q, k), nearest first (the k + 1 nearest less the first, itself)."""
    k = min(neighbours, rest.shape[1] - 1)
    with torch.no_grad():
        d = torch.cdist(rest, rest)  # (B, Q, Q)
        return d.topk(k + 1, dim=-1, largest=False).indices[..., 1:]


def offset_error(rest: Tensor, target: Tensor, omega: Tensor, neighbours: int) -> Tensor:
    """How well each point's rotation carries its neighbourhood: rest points (B, Q, 3), their
    target displacements and decoded rotation vectors (B, Q, 3) -> (B,), the mean over each
    point i and its k nearest points j of |R_i (r_j - r_i) - (x_j - x_i)|^2 / |r_j - r_i|^2,
    x = r + target (rest lengths floored at half the mean, as in ``neurok.edge_strain``).
    A rotation of the neighbourhood scores 0; a stretch or shear leaves what no rotation
    can take, the rotation nearest to it scoring least."""
    near = nearest_points(rest, neighbours)
    B = rest.shape[0]
    rows = torch.arange(B, device=rest.device)[:, None, None]
    e0 = rest[rows, near] - rest[:, :, None]  # (B, Q, k, 3)
    moved = rest + target
    e = moved[rows, near] - moved[:, :, None]
    turned = (rotation_matrix(omega)[:, :, None] @ e0[..., None])[..., 0]
    length2 = e0.pow(2).sum(-1)
    length2 = torch.maximum(length2, 0.25 * length2.mean(dim=(1, 2), keepdim=True))
    return ((turned - e).pow(2).sum(-1) / length2).mean(dim=(1, 2))


def infinitesimal_rotations(rest: Tensor, fields: Tensor, neighbours: Tensor) -> Tensor:
    """Each point's small rotation under displacement fields (to first order): rest points
    (Q, 3), fields (m, Q, 3), neighbours (Q, k) -> rotation vectors (m, Q, 3), per point the
    least-squares ω of ω x (r_j - r_i) ≈ u_j - u_i over its neighbours j, i.e.
    (Σ |e|² I - e eᵀ)⁻¹ Σ e x Δu with e = r_j - r_i (regularised by 1e-6 of the trace where
    the neighbours lie on a line)."""
    e = rest[neighbours] - rest[:, None]  # (Q, k, 3)
    du = fields[:, neighbours] - fields[:, :, None]  # (m, Q, k, 3)
    eye = torch.eye(3, dtype=rest.dtype, device=rest.device)
    length2 = e.pow(2).sum(-1)  # (Q, k)
    A = (length2[..., None, None] * eye - e[..., :, None] * e[..., None, :]).sum(1)
    A = A + 1e-6 * length2.sum(1)[:, None, None] * eye  # (Q, 3, 3)
    rhs = torch.cross(e.expand_as(du), du, dim=-1).sum(2)  # (m, Q, 3)
    return torch.linalg.solve(A, rhs[..., None])[..., 0]
