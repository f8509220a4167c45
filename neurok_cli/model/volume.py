"""A solid's resistance to changing its volume, on the dynamics points.

Springs between nearby points resist stretch, but a body can lose much of its volume while
they hardly change length (a capsule dropped in the latent space flattened to 0.39 of its
volume where the engine's kept 0.80). The enclosed volume of the surface with every vertex
moved to its nearest dynamics point is an exact cubic in the points' positions,

    V(p) = 1/6 sum_t p_a · (p_b x p_c)      over the triangles t = (a, b, c) of points,

where the triangles are the mesh's faces whose three vertices have three different nearest
points. Its energy is the bulk modulus' ½ K V0 (V / V0 - 1)², K = E / (3 (1 - 2ν)). On a
surface with openings (a teapot's spout, a truck's wheel arches) V is the volume of the
cones from the body frame's origin, the centre of mass, to the triangles: the openings
count as lids through it, and V still falls when the body is squashed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class VolumeTerm:
    """The volume energy of a soft solid's dynamics points (float64, SI units)."""

    triangles: Tensor  # (T, 3) long: triangles over the dynamics points, outward
    bulk: float  # bulk modulus K, Pa
    rest_volume: float  # V0, m^3, of the triangles at the points' rest

    @classmethod
    def build(cls, owner: Tensor, faces: Tensor, rest: Tensor, bulk: float
              ) -> VolumeTerm | None:
        """From each mesh vertex's nearest dynamics point ``owner`` (N,), the mesh's faces
        (F, 3) and the points' rest positions (Q, 3); None when the triangles enclose no
        volume (a sheet, or too few points)."""
        tri = owner[faces]
        keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
        tri = tri[keep]
        if len(tri) < 4:
            return None
        v0 = float(volume(rest[None], tri)[0])
        extent = float((rest.max(0).values - rest.min(0).values).max())
        if not v0 > 1e-3 * extent**3:
            return None
        return cls(tri, float(bulk), v0)

    def energy(self, p: Tensor) -> Tensor:
        """(S,) J at positions p (S, Q, 3)."""
        strain = volume(p, self.triangles) / self.rest_volume - 1.0
        return 0.5 * self.bulk * self.rest_volume * strain**2

    def forces(self, p: Tensor) -> Tensor:
        """-dE/dp (S, Q, 3)."""
        v, grad = volume_gradient(p, self.triangles)
        strain = v / self.rest_volume - 1.0  # (S,)
        return -self.bulk * strain[:, None, None] * grad

    def stiffness(self, p: Tensor, J: Tensor) -> Tensor:
        """The term's stiffness (S, k, k) in coordinates whose Jacobian at the points is
        J (S, Q, 3, k): (K / V0) g gᵀ with g = dV/dq (the Gauss–Newton part, which is the
        whole of it at rest)."""
        g = torch.einsum("sqi,sqik->sk", volume_gradient(p, self.triangles)[1], J)
        return (self.bulk / self.rest_volume) * g[:, :, None] * g[:, None, :]


def volume(p: Tensor, triangles: Tensor) -> Tensor:
    """Signed volume (S,) enclosed by ``triangles`` (T, 3) over points p (S, Q, 3)."""
    a, b, c = (p[:, triangles[:, i]] for i in range(3))
    return (a * torch.cross(b, c, dim=-1)).sum((-1, -2)) / 6.0


def volume_gradient(p: Tensor, triangles: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`volume` (S,) and its gradient dV/dp (S, Q, 3): each corner's share is the
    cross product of the other two, all three scattered in one pass."""
    corners = p[:, triangles.T.reshape(-1)].view(p.shape[0], 3, -1, 3)  # (S, 3, T, 3)
    rolled = corners.roll(-1, dims=1)  # b, c, a
    crosses = torch.cross(rolled, rolled.roll(-1, dims=1), dim=-1)  # b x c, c x a, a x b
    v = (corners[:, 0] * crosses[:, 0]).sum((-1, -2)) / 6.0
    grad = torch.zeros_like(p).index_add_(1, triangles.T.reshape(-1),
                                          crosses.reshape(p.shape[0], -1, 3) / 6.0)
    return v, grad
