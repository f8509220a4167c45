"""What the latent dynamics move (model/dynamics/equations.py): one object's body, its
beam terms and its environment, and the elastic terms of a body as springs on linear maps
of its points (float64, SI units)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
from torch import Tensor

from ..reduced import ReducedShape
from ..volume import VolumeTerm


@dataclass
class Body:
    """One object's dynamics points, float64, metres, body frame = centre of mass at rest."""

    shape: ReducedShape  # p(q) at the Q dynamics points
    mass: Tensor  # (Q,) lumped masses, kg
    normals: Tensor  # (Q, 3) outward unit normals at rest (wind)
    areas: Tensor  # (Q,) surface area each point stands for, m^2 (wind)
    edges: Tensor  # (E, 2) long: the elastic graph
    stiffness: Tensor  # (E,) spring constants, N/m
    pinned: Tensor  # (Q,) bool
    centre: Tensor  # (3,) world position of the body origin at rest, m
    closed: bool = True  # a solid (wind pushes its windward side only) or a sheet
    clamped: bool = False  # the frame is held (pins hold a clamp): only q moves
    q_radius: float = 3.0  # the latent bound: |q| beyond it is pushed back (see _bound)
    centreline: Centreline | None = None  # a slender body's beam terms
    # (P, 3), one row per pinned point in order: the pin holds the anchor p_i(q) - offset_i
    # (it deforms with its point and turns with the frame) rather than the point itself. A
    # sheet's pins collapsed onto their line or their centre (``body.pin_joint``) then make
    # a hinge or a ball joint: the sheet swings about them as it would by bending at their
    # edge, a crease the decoder cannot draw. None: every pin at its point.
    pin_offset: Tensor | None = None
    volume: VolumeTerm | None = None  # a solid's bulk resistance (see model/volume.py)


@dataclass
class Centreline:
    """Euler–Bernoulli terms of a slender body, on a centreline through slices of its points.

    A decoded bend of a beam moves each cross-section sideways but need not turn it: the
    points' spring graph then reads the bend as shear, far stiffer than bending (a slender
    rod would hardly move). With a centreline, the graph's springs act only on what is left
    once every slice's mean displacement is taken out (the cross-sections' own shape, twist
    and turn, and the shear inside a slice), weighted by ``graph``; the slices' centres
    carry the rest: springs between neighbouring centres (stretch) and, at every inner
    centre, a zero-length spring on the change of the turn between its two segments
    (bending). ``body.beam_centreline`` sizes them."""

    slice_of: Tensor  # (Q,) long: the slice of each point, 0..n-1 along the axis
    stretch: Tensor  # (n - 1,) N/m: each segment's axial stiffness
    bending: Tensor  # (n - 2,) N m: E I / ds at each inner centre
    graph: float = 1.0  # weight of the graph's springs


@dataclass
class Environment:
    """Forces and contact parameters (SI units; +Y up; the ground is the plane y = 0)."""

    gravity: tuple[float, float, float] = (0.0, -9.81, 0.0)
    ground: bool = True
    friction: float = 0.8
    wind: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gust: float = 0.0
    air_density: float = 1.2
    drag: float = 1.0
    still_air: bool = True  # air drag without wind too (a body moving through still air)
    contact_rate: float = 100.0  # sqrt(contact stiffness per unit mass), 1/s
    # damping ratio of contact: critical, as the engine's contacts (solref "0.005 1" in
    # sim/scene.py); at 0.4 a capsule dropped on its side bounced and lost 7.7 % of its
    # volume at the lowest where the engine's lost 2.6 %. The damper takes the point's
    # vertical speed within contact_rate x its depth: in full at first touch it was a step
    # in the force that the RK4 steps straddle (a dropped teapot's energy balance missed by
    # 6.8 % of its largest kinetic energy; 0.02 % within), while a point resting in contact,
    # moving slower than that, is damped in full
    contact_damping: float = 1.0
    pin_rate: float = 100.0  # sqrt(pin stiffness per unit mass), 1/s
    alpha: float = 0.0  # mass-proportional damping of q, 1/s
    beta: float = 0.0  # stiffness-proportional damping of q, s


class _Springs:
    """Every elastic term as a spring on a linear map of the points: the spring vectors are
    d = G p + g (E rows), with energy ½ k (|d| - L)² each. A graph's edge is the row
    p_a - p_b; a centreline's segment the difference of two slice means; a bending term a
    zero-length spring (L = 0) on the change of the turn at a centre. G is kept as sparse
    matrices, so that G x and Gᵀ f are one product each (an index gather, or a scatter with
    index_add_, costs several times more on the few hundred edges the dynamics use)."""

    def __init__(self, body: Body) -> None:
        rest, edges = body.shape.rest, body.edges
        Q, E = rest.shape[0], edges.shape[0]
        f64 = dict(dtype=torch.float64, device=rest.device)
        rows = torch.arange(E, device=rest.device)
        D = torch.zeros(E, Q, **f64)
        D[rows, edges[:, 0]] = 1.0
        D[rows, edges[:, 1]] -= 1.0
        G, offset, stiffness = D, torch.zeros(E, 3, **f64), body.stiffness
        line = body.centreline
        if line is not None:
            n = int(line.slice_of.max()) + 1
            member = torch.zeros(n, Q, **f64)
            member[line.slice_of, torch.arange(Q)] = body.mass.to(**f64)
            average = member / member.sum(1, keepdim=True)  # (n, Q): the slices' centres
            P = average[line.slice_of]  # (Q, Q): each point's slice mean
            graph = D - D @ P  # the edges of p - P (p - rest)
            seg = average[1:] - average[:-1]  # (n - 1, Q)
            h = (seg @ rest).norm(dim=-1, keepdim=True)
            turn = seg[1:] / h[1:] - seg[:-1] / h[:-1]  # (n - 2, Q)
            G = torch.cat([graph, seg, turn])
            offset = torch.cat([D @ P @ rest, torch.zeros(n - 1, 3, **f64), -(turn @ rest)])
            stiffness = torch.cat([body.stiffness * line.graph, line.stretch.to(**f64),
                                   line.bending.to(**f64)])
        self.offset, self.stiffness = offset, stiffness
        length = (G @ rest + offset).norm(dim=-1)
        self.zero = torch.zeros(len(length), dtype=torch.bool, device=rest.device)
        if line is not None:  # the bending rows come last
            self.zero[len(length) - line.bending.shape[0]:] = True
        self.rest_length = torch.where(self.zero, 0.0, length)  # (E,)
        with warnings.catch_warnings():  # CSR is marked beta; products with it are stable
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support")
            self.G = G.to_sparse_csr()
            self.Gt = G.t().contiguous().to_sparse_csr()

    @staticmethod
    def _apply(A: Tensor, x: Tensor) -> Tensor:
        S, n, m = x.shape  # (S, n, m) -> (S, rows of A, m)
        y = A @ x.transpose(0, 1).reshape(n, S * m)
        return y.view(-1, S, m).transpose(0, 1)

    def diff(self, x: Tensor) -> Tensor:
        """(S, Q, m) -> (S, E, m): G x, the linear part of the spring vectors (for the graph's
        edges without a centreline, x_a - x_b)."""
        return self._apply(self.G, x)

    def vectors(self, p: Tensor) -> Tensor:
        """Positions (S, Q, 3) -> spring vectors d = G p + g (S, E, 3)."""
        return self._apply(self.G, p) + self.offset

    def adjoint(self, f: Tensor) -> Tensor:
        """(S, E, m) -> (S, Q, m): Gᵀ f, each spring's value carried back to its points."""
        return self._apply(self.Gt, f)

    def stiffness_matrix(self, d: Tensor, GJ: Tensor) -> Tensor:
        """The springs' stiffness in the coordinates whose Jacobian maps to GJ (S, E, 3, k),
        at spring vectors d (S, E, 3) -> (S, k, k): k (n·GJ)ᵀ(n·GJ) along each stretched
        spring (the stretch alone: a compressed one's sideways term would be negative) and
        k GJᵀGJ for the zero-length ones, which pull the same in every direction."""
        n_e = d / d.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        dl = (n_e[..., None, :] @ GJ)[..., 0, :]  # (S, E, k)
        k = torch.where(self.zero, 0.0, self.stiffness)[None, :, None]
        K = (dl * k).transpose(1, 2) @ dl
        if bool(self.zero.any()):
            Z = GJ[:, self.zero]  # (S, Z, 3, k)
            kz = self.stiffness[self.zero][None, :, None, None]
            K = K + torch.einsum("szia,szib->sab", Z * kz, Z)
        return K
