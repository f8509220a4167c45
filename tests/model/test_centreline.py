"""A slender body's centreline: Euler–Bernoulli bending whatever the decoded bend does to its
cross-sections, and springs whose forces are the gradient of their energy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurok_cli.deform.learned.body import beam_centreline
from neurok_cli.model.dynamics.bodies import Body, Environment
from neurok_cli.model.dynamics.equations import LatentDynamics
from neurok_cli.model.dynamics.rollout import rollout
from neurok_cli.model.reduced import ReducedShape

F64 = torch.float64
LENGTH, YOUNG, DENSITY = 1.0, 2e7, 1000.0


def rod_points(side: float, nx: int = 41) -> torch.Tensor:
    """The surface points of a square rod along x: 8 around each of nx sections, centred."""
    ring = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0)]
    x = np.linspace(-LENGTH / 2, LENGTH / 2, nx)
    pts = [(xi, a * side / 2, b * side / 2) for xi in x for a, b in ring]
    return torch.tensor(pts, dtype=F64)


def cantilever(rest: torch.Tensor, mode: torch.Tensor, *, centreline: bool = True,
               quadratic: float = 0.0) -> Body:
    """The rod of points ``rest`` clamped at its -x end, one deformation coordinate moving
    them by ``mode`` (Q, 3); ``quadratic`` adds a curved term so that the springs work
    nonlinearly."""
    Q = len(rest)
    side = float(rest[:, 1].max() - rest[:, 1].min())
    mass = torch.full((Q,), DENSITY * LENGTH * side**2 / Q, dtype=F64)
    A = mode[:, :, None]
    B = torch.zeros(Q, 3, 1, 1, dtype=F64)
    B[:, 0, 0, 0] = -quadratic * (rest[:, 0] + LENGTH / 2)
    d = torch.cdist(rest, rest)
    near = d.topk(9, largest=False).indices[:, 1:]
    edges = torch.tensor(sorted({(min(i, j), max(i, j)) for i in range(Q)
                                 for j in near[i].tolist()}))
    lengths = (rest[edges[:, 0]] - rest[edges[:, 1]]).norm(dim=-1)
    k_edge = YOUNG * LENGTH * side**2 / float((lengths**2).sum())  # as latent_motion's
    line = beam_centreline(rest.numpy(), mass.numpy(), YOUNG, LENGTH * side**2,
                           edges.numpy(), k_edge) if centreline else None
    return Body(shape=ReducedShape(rest, A, B), mass=mass,
                normals=torch.nn.functional.normalize(rest, dim=-1),
                areas=torch.full((Q,), 1e-3, dtype=F64), edges=edges,
                stiffness=torch.full((len(edges),), k_edge, dtype=F64),
                pinned=rest[:, 0] < -LENGTH / 2 + 1e-9, centre=torch.zeros(3, dtype=F64),
                clamped=True, centreline=line)


def sag_shape(rest: torch.Tensor, *, turn_sections: bool) -> torch.Tensor:
    """The Euler–Bernoulli deflection of a uniformly loaded cantilever, w(s) = s²(6 - 4s + s²)
    / 3 (tip 1), s = distance from the clamp / length; with ``turn_sections`` each cross-
    section also turns with the centreline (u = -y w'), without it it only moves down."""
    s = (rest[:, 0] + LENGTH / 2) / LENGTH
    w = s**2 * (6 - 4 * s + s**2) / 3
    dw = (12 * s - 12 * s**2 + 4 * s**3) / 3 / LENGTH
    mode = torch.zeros_like(rest)
    mode[:, 1] = w
    if turn_sections:
        mode[:, 0] = -rest[:, 1] * dw
    return mode


def static_tip(body: Body) -> float:
    """The tip deflection under gravity of the one-coordinate body: q = Q / K0 at rest."""
    dyn = LatentDynamics(body, Environment(ground=False))
    A = body.shape.linear[:, :, 0]
    load = float((A[:, 1] * body.mass).sum()) * -9.81
    return load / float(dyn.K0[0, 0])


@pytest.mark.parametrize("side", [0.1, 0.05, 0.025])  # aspect ratios 10, 20, 40
def test_beam_bending_follows_euler_bernoulli_whatever_the_sections_do(side):
    exact = -DENSITY * 9.81 * LENGTH**4 / (8 * YOUNG * side**2 / 12)  # w L^4 / (8 E I)
    rest = rod_points(side)
    for turn in (True, False):
        tip = static_tip(cantilever(rest, sag_shape(rest, turn_sections=turn)))
        assert tip == pytest.approx(exact, rel=0.25)
    # the springs alone read a bend whose sections do not turn as shear: far too stiff
    stiff = static_tip(cantilever(rest, sag_shape(rest, turn_sections=False),
                                  centreline=False))
    assert abs(stiff) < 0.1 * abs(exact)


def test_centreline_slices_and_section():
    side = 0.05
    rest = rod_points(side)
    mass = np.full(len(rest), 0.01)
    line = cantilever(rest, sag_shape(rest, turn_sections=False)).centreline
    n = int(line.slice_of.max()) + 1
    assert n == 8 and line.bending.shape == (n - 2,) and line.stretch.shape == (n - 1,)
    counts = np.bincount(line.slice_of.numpy())
    assert counts.max() - counts.min() <= 1
    # the slices follow the axis: each one's points lie beyond the one before
    x = rest[:, 0].numpy()
    for j in range(n - 1):
        assert x[line.slice_of.numpy() == j].max() <= x[line.slice_of.numpy() == j + 1].min()
    # the bending's I is the solid square's, to the points' coarseness (8 around a section)
    h = float((LENGTH - LENGTH / 41) * (1 - 1 / n)) / (n - 1)
    second = float(line.bending.mean()) * h / YOUNG
    assert second == pytest.approx(side**4 / 12, rel=0.2)
    # stretch: E A / h, weighted by 1 / aspect^2
    assert float(line.stretch.mean()) == pytest.approx(
        YOUNG * side**2 / h * side**2 / LENGTH**2, rel=0.05)
    assert 0.0 < line.graph < 1.0
    few = rest[:16].numpy()
    assert beam_centreline(few, mass[:16], YOUNG, 1e-3, np.array([[0, 1]]), 1.0) is None


def test_centreline_forces_are_the_gradient_of_its_energy():
    rest = rod_points(0.05)
    body = cantilever(rest, sag_shape(rest, turn_sections=False), quadratic=0.3)
    dyn = LatentDynamics(body, Environment(ground=False))
    gen = torch.Generator().manual_seed(0)
    p = (rest + 0.01 * torch.randn(rest.shape, generator=gen, dtype=F64))[None]
    force, _ = dyn._elastic(p)
    direction = torch.randn(p.shape, generator=gen, dtype=F64)
    h = 1e-6
    e_plus = dyn._elastic(p + h * direction, energy=True)[1]
    e_minus = dyn._elastic(p - h * direction, energy=True)[1]
    numeric = float((e_plus - e_minus) / (2 * h))
    assert float((force * direction).sum()) == pytest.approx(-numeric, rel=1e-5)


def test_a_released_cantilever_swings_about_its_sag_and_keeps_its_energy():
    """Held straight and let go under gravity, undamped: it falls past its static sag (not
    twice as far: the large deflection stiffens it) and back, its energy balance closed."""
    rest = rod_points(0.05)
    body = cantilever(rest, sag_shape(rest, turn_sections=False), quadratic=0.3)
    sag = static_tip(body)
    dyn = LatentDynamics(body, Environment(gravity=(0.0, -9.81, 0.0), ground=False))
    zero = torch.zeros(1, 1, dtype=F64)
    y0 = dyn.initial_state(zero, zero, torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64))
    roll = rollout(dyn, y0, torch.arange(61, dtype=F64) / 30.0)
    total, elastic = roll.energy["total"][:, 0], roll.energy["elastic"][:, 0]
    assert float((total - total[0]).abs().max()) <= 0.02 * float(elastic.max())
    tip = roll.q[:, 0, 0]
    assert float(tip.min()) < 1.3 * sag  # overshoots the sag (sag < 0: down)
    low = int(tip.argmin())
    assert float(tip[low:].max()) > 0.4 * sag  # and comes back up


def test_a_spinning_bent_beam_keeps_its_energy():
    """A floating arc, spinning: its centreline's terms are not invariant to turning the
    points, so they must act on its deformation alone, never as a torque on its frame."""
    straight = rod_points(0.05)
    angle = straight[:, 0] * 1.5  # bent through 1.5 rad
    radius = 1.0 / 1.5
    arc = torch.stack([(radius + straight[:, 1]) * torch.sin(angle),
                       (radius + straight[:, 1]) * torch.cos(angle) - radius,
                       straight[:, 2]], dim=-1)
    arc = arc - arc.mean(0)
    # bending it out of its plane: no net translation or turn (as the decoder's modes, whose
    # rigid part is removed, never have), but a turn of its curvature
    mode = torch.zeros_like(arc)
    mode[:, 2] = straight[:, 0] ** 2 - (straight[:, 0] ** 2).mean()
    body = cantilever(arc, mode, quadratic=0.0)
    body.pinned[:] = False
    body.clamped = False
    dyn = LatentDynamics(body, Environment(gravity=(0.0, 0.0, 0.0), ground=False))
    y0 = dyn.initial_state(torch.tensor([[0.05]], dtype=F64), torch.zeros(1, 1, dtype=F64),
                           torch.zeros(3, dtype=F64), torch.tensor([0.5, 2.0, 1.0], dtype=F64))
    # a fine fixed step: what is tested is the model's balance, not the step's choice
    roll = rollout(dyn, y0, torch.arange(16, dtype=F64) / 30.0, step=2e-4)
    total, kinetic = roll.energy["total"][:, 0], roll.energy["kinetic"][:, 0]
    assert float((total - total[0]).abs().max()) <= 1e-3 * float(kinetic.max())
