"""Locally affine skinning: every vertex follows its nearest driving points' local motions.

The decoder moves a few hundred driving points; a mesh's vertices follow them. Averaging
the points' displacements with inverse-distance weights (:func:`.drive.knn_weights`) puts
a cusp at every point (its weight is 1 there and falls off as 1 / d): neighbouring points
that move a little differently dimple the surface between them, and a soft body comes out
as crumpled foil (the 95th-percentile dihedral change of a capsule dropped at 0.3 m was
0.12 rad where the engine's is 0.007). Here instead:

- weights are a smooth partition of unity, (1 - (d / h)²)² over the k nearest points with
  h the distance to the (k + 1)-th, so the field has no cusp and no seam where the
  neighbour set changes;
- each driving point carries a local linear map A_i fitted to how its neighbourhood moved
  (least squares, pulled towards the neighbourhood's rotation where the neighbours do not
  span three dimensions, e.g. on a sheet), and a vertex moves as the weighted blend of
  ``p_i + d_i + A_i (v - p_i)``. A bend then turns the surface's detail with it rather
  than shearing it; a rigid motion is reproduced exactly, a squash nearly (the pull
  towards the rotation takes ~3 % of it off between the points: a sphere squashed 20 %
  comes back within 0.6 % of its radius).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ..errors import UsageError
from .rigid import blend_vertices
from .rotation import nearest_rotation
from .strain import driving_graph, limit_strain, mesh_edges

NEIGHBOURS = 16  # driving points each vertex blends
FRAME_NEIGHBOURS = 10  # neighbours a driving point's local map is fitted to
PULL = 0.05  # pull of a local map towards its rotation, x the neighbourhood's mean spread
_CHUNK = 16  # frames per blending block: bounds memory at _CHUNK x N x 3 floats


def smooth_weights(vertices: Tensor, points: Tensor, k: int = NEIGHBOURS
                   ) -> tuple[Tensor, Tensor]:
    """Each vertex's k nearest points (vertices (N, 3), points (Q, 3), same units) and
    smooth weights summing to 1 -> idx (N, k'), w (N, k'), k' = min(k, Q), nearest first.

    The neighbours come from a k-d tree over the points (100k vertices, 530 points: 2.2 s
    -> 0.26 s against all pairwise distances), with the distances exact: cdist's
    matrix-product form was off by up to 5e-9 of the size, which decided 2 of a 10k
    sphere's vertices' nearest point where two were as near."""
    from scipy.spatial import cKDTree

    if vertices.dim() != 2 or points.dim() != 2 or len(points) == 0:
        raise UsageError("smooth_weights: vertices and points must be (N, 3) and (Q, 3)")
    k = min(k, len(points))
    n = min(k + 1, len(points))
    pts = points.detach().cpu().to(torch.float64).numpy()
    dist, idx = cKDTree(pts).query(vertices.detach().cpu().to(torch.float64).numpy(), k=n)
    dist, idx = dist.reshape(len(vertices), n), idx.reshape(len(vertices), n)
    # the support reaches the (k + 1)-th point, which so gets weight 0 (no seam)
    h = dist[:, -1:] if n > k else 1.5 * dist[:, -1:]
    h = np.maximum(h, 1e-12)
    w = np.maximum(1.0 - (dist[:, :k] / h) ** 2, 0.0) ** 2 + 1e-12
    w /= w.sum(axis=1, keepdims=True)
    dtype = torch.promote_types(vertices.dtype, points.dtype)
    return (torch.from_numpy(idx[:, :k].astype(np.int64)).to(vertices.device),
            torch.from_numpy(w).to(dtype=dtype, device=vertices.device))


def point_neighbours(points: Tensor, m: int = FRAME_NEIGHBOURS) -> Tensor:
    """(Q, m') the m' = min(m, Q - 1) nearest other points of each point (Q, 3)."""
    m = min(m, len(points) - 1)
    if m < 1:
        return torch.zeros(len(points), 0, dtype=torch.long, device=points.device)
    d = torch.cdist(points, points)
    d.fill_diagonal_(float("inf"))
    return d.topk(m, dim=1, largest=False).indices


def local_maps(rest: Tensor, moved: Tensor, neighbours: Tensor) -> Tensor:
    """Local linear maps (B, Q, 3, 3) taking each point's rest neighbourhood to its moved
    one: rest (Q, 3), moved (B, Q, 3) positions, neighbours (Q, m) from
    :func:`point_neighbours`. Least squares, regularised towards the rotation of the
    neighbourhood (the polar factor of its cross-covariance): A = (H + λR)(C + λI)⁻¹."""
    if neighbours.shape[1] == 0:
        return torch.eye(3, dtype=moved.dtype).expand(*moved.shape[:2], 3, 3)
    e0 = rest[neighbours] - rest[:, None]  # (Q, m, 3)
    e = moved[:, neighbours] - moved[:, :, None]  # (B, Q, m, 3)
    C = e0.transpose(1, 2) @ e0  # (Q, 3, 3)
    H = e.transpose(2, 3) @ e0  # (B, Q, 3, 3)
    R = nearest_rotation(H)  # (B, Q, 3, 3)
    lam = PULL * C.diagonal(dim1=-2, dim2=-1).sum(-1)[:, None, None]  # (Q, 1, 1)
    eye = torch.eye(3, dtype=C.dtype, device=C.device)
    inv = torch.linalg.inv(C + lam * eye)  # (Q, 3, 3)
    return (H + lam * R) @ inv


class Skin:
    """Vertices (N, 3) at rest following driving points ``points`` (Q, 3), blended with
    :func:`smooth_weights`' (idx, w) (N, k); built once per object and applied to blocks of
    frames.

    A vertex's blend sum_i w_i (A_i v + t_i), t_i = moved_i - A_i points_i, is linear in
    the points' maps: with the vertex's homogeneous coordinates (v, 1) folded into the
    weights (4 per point), it is one sparse (N, 4Q) product with the maps stacked as
    (4Q, 3) per frame, whose rows are the vertices themselves: no (N, frames, 12) blend to
    contract with v afterwards (100k vertices, 121 frames: 1.55 s -> 0.55 s). A rigid
    motion of the whole (R, shift) is folded into the maps the same way."""

    def __init__(self, vertices: Tensor, points: Tensor, idx: Tensor, w: Tensor,
                 neighbours: Tensor) -> None:
        N, k = idx.shape
        homog = torch.cat([vertices, torch.ones_like(vertices[:, :1])], dim=1)  # (N, 4)
        values = (w[:, :, None] * homog[:, None, :].to(w.dtype)).reshape(-1)  # (N k 4,)
        cols = (idx[:, :, None] * 4 + torch.arange(4, device=idx.device)).reshape(-1)
        crow = torch.arange(0, N * k * 4 + 1, k * 4, device=idx.device)
        if len(values) < 2**31:  # 32-bit indices: less to read per product (~15 %)
            cols, crow = cols.int(), crow.int()
        with warnings.catch_warnings():  # CSR is marked beta; products with it are stable
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
            warnings.filterwarnings("ignore", message="Sparse invariant checks")
            self.W = torch.sparse_csr_tensor(crow, cols, values, (N, 4 * len(points)))
        self.p, self.neighbours = points, neighbours

    def __call__(self, moved: Tensor, rotation: Tensor | None = None,
                 shift: Tensor | None = None, out: Tensor | None = None) -> Tensor:
        """moved (B, Q, 3) driving points -> (B, N, 3) vertices, in _CHUNK frames at a time;
        then turned by ``rotation`` (B, 3, 3) and moved by ``shift`` (B, 3) where given,
        written into ``out`` (B, N, 3) where given."""
        W = self.W.to(moved.dtype)
        p = self.p.to(moved.dtype)
        (N, Q4), B = W.shape, len(moved)
        if out is None:
            out = torch.empty(B, N, 3, dtype=moved.dtype, device=moved.device)
        for s in range(0, B, _CHUNK):
            chunk = moved[s:s + _CHUNK]
            b = len(chunk)
            A = local_maps(p, chunk, self.neighbours)  # (b, Q, 3, 3)
            t = chunk - (A @ p[None, :, :, None])[..., 0]  # (b, Q, 3)
            if rotation is not None:  # x -> R x + shift, on the Q maps, not the N vertices
                R = rotation[s:s + b].to(moved.dtype)[:, None]  # (b, 1, 3, 3)
                A, t = R @ A, (R @ t[..., None])[..., 0]
            if shift is not None:
                t = t + shift[s:s + b].to(moved.dtype)[:, None]
            maps = torch.cat([A, t[..., None]], dim=-1)  # (b, Q, 3, 4): row c, column j
            maps = maps.permute(1, 3, 0, 2).reshape(Q4, b * 3)  # rows (i, j), columns (f, c)
            out[s:s + b] = (W @ maps).view(N, b, 3).transpose(0, 1)
        return out


@dataclass
class Driven:
    """A mesh driven by points, as ``animate`` makes one (and ``eval`` measures it): its
    :class:`Skin`, and the strain limit on the points' own graph (the mesh's edges between
    the points nearest their ends), so its cost does not grow with the mesh. Where the
    points carry rotations (a rigid head), :meth:`blend` moves the vertices by the points'
    rigid transforms instead of fitted local maps."""

    skin: Skin
    nearest: np.ndarray  # (N,) each vertex's nearest driving point
    faces: np.ndarray  # (F, 3) the mesh's
    vertices: Tensor  # (N, 3) at rest
    idx: Tensor  # (N, k) each vertex's points and their smooth weights
    w: Tensor

    @classmethod
    def of(cls, vertices: Tensor, points: Tensor, faces: np.ndarray) -> Driven:
        """Rest ``vertices`` (N, 3) on rest driving ``points`` (Q, 3), float64."""
        idx, w = smooth_weights(vertices, points)
        w = w.to(torch.float64)
        return cls(Skin(vertices, points, idx, w, point_neighbours(points)),
                   idx[:, 0].numpy(), faces, vertices, idx, w)

    def blend(self, moved: Tensor, turns: Tensor, rotation: Tensor | None = None,
              shift: Tensor | None = None, out: Tensor | None = None) -> Tensor:
        """Vertices (B, N, 3) from the points ``moved`` (B, Q, 3) and their rotation
        vectors ``turns`` (B, Q, 3) relative to rest, blended as dual quaternions
        (model/rigid.py), _CHUNK frames at a time; then turned and moved as in
        :meth:`Skin.__call__`."""
        p = self.skin.p.to(moved.dtype)
        B, N = len(moved), len(self.vertices)
        if out is None:
            out = torch.empty(B, N, 3, dtype=moved.dtype, device=moved.device)
        v = self.vertices.to(moved.dtype)
        for s in range(0, B, _CHUNK):
            x = blend_vertices(v, p, moved[s:s + _CHUNK] - p,
                               turns[s:s + _CHUNK].to(moved.dtype), self.idx, self.w)
            if rotation is not None:
                x = x @ rotation[s:s + _CHUNK].to(moved.dtype).transpose(1, 2)
            if shift is not None:
                x = x + shift[s:s + _CHUNK].to(moved.dtype)[:, None]
            out[s:s + len(x)] = x
        return out

    def limited(self, moved: Tensor, limit: float, fixed: Tensor | None = None
                ) -> tuple[Tensor, int]:
        """The driving points ``moved`` (B, Q, 3) within strain ``limit`` of their rest
        graph (model.strain.limit_strain), and the sweeps it took."""
        graph = driving_graph(mesh_edges(self.faces), self.nearest)
        return limit_strain(moved, self.skin.p, graph, limit, fixed=fixed)


def skin(vertices: Tensor, points: Tensor, moved: Tensor, idx: Tensor, w: Tensor,
         neighbours: Tensor) -> Tensor:
    """Vertices (N, 3) at rest moved with the driving points: rest ``points`` (Q, 3) to
    ``moved`` (B, Q, 3), blended with :func:`smooth_weights`' (idx, w) -> (B, N, 3) (see
    :class:`Skin`)."""
    return Skin(vertices, points, idx, w, neighbours)(moved)
