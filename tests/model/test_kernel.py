"""The compiled right-hand side and integrator (model/dynamics/kernel.py) against the torch
reference (LatentDynamics evaluated through torchdiffeq): the same motions, to rounding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from scipy.spatial import ConvexHull

from neurok_cli.model.dynamics import kernel, kernel_params
from neurok_cli.model.dynamics.bodies import Environment
from neurok_cli.model.dynamics.equations import LatentDynamics
from neurok_cli.model.dynamics.rollout import KERNEL_CONSTANTS, Event, rollout
from neurok_cli.model.dynamics.steps import BURST
from neurok_cli.model.volume import VolumeTerm, volume

from .test_centreline import cantilever, rod_points, sag_shape
from .test_dynamics import cube_body, plate_body

F64 = torch.float64
CONSTANTS = KERNEL_CONSTANTS


def with_volume(body, bulk: float = 2e4):
    """The body with a volume term over its convex hull's triangles, turned outward."""
    rest = body.shape.rest
    tri = ConvexHull(rest.numpy()).simplices.copy()
    a, b, c = (rest.numpy()[tri[:, i]] for i in range(3))
    outward = (np.cross(b - a, c - a) * (a - rest.numpy().mean(0))).sum(-1) < 0
    tri[outward] = tri[outward][:, ::-1]
    tri = torch.as_tensor(tri)
    return dataclasses.replace(body, volume=VolumeTerm(tri, bulk, float(volume(rest[None],
                                                                                tri)[0])))


def cube_case():
    env = Environment(wind=(1.5, 0.0, -0.5), gust=0.4, friction=0.6)
    body = with_volume(cube_body(height=0.4))
    q0 = torch.tensor([[0.3, 0.0, 0.1], [-0.2, 0.1, 0.0]], dtype=F64)
    return body, env, q0, torch.tensor([0.5, 0.0, 0.2], dtype=F64), torch.tensor(
        [0.0, 3.0, 1.0], dtype=F64)


def hinge_case():
    from neurok_cli.deform.learned.body import pin_joint

    body, pinned = plate_body()
    offset = torch.as_tensor(pin_joint(body.shape.rest[pinned].numpy(), 1.0).offset)
    body = dataclasses.replace(body, pin_offset=offset)
    zero = torch.zeros(3, dtype=F64)
    return body, Environment(ground=False, pin_rate=300.0), torch.zeros(1, 1, dtype=F64), \
        zero, zero


def cantilever_case():
    rest = rod_points(0.05)
    body = cantilever(rest, sag_shape(rest, turn_sections=True), quadratic=0.3)
    zero = torch.zeros(3, dtype=F64)
    return body, Environment(ground=False), torch.full((1, 1), 0.5, dtype=F64), \
        torch.tensor([0.0, 0.3, 0.0], dtype=F64), zero


CASES = {"cube: ground, friction, gusts, volume, two motions": cube_case,
         "plate on a hinge (pins at anchors)": hinge_case,
         "clamped cantilever (centreline, a held frame)": cantilever_case}


@pytest.mark.parametrize("case", CASES)
def test_the_compiled_motion_is_the_reference_motion(case):
    body, env, q0, velocity, spin = CASES[case]()
    times = torch.arange(16, dtype=F64) / 30.0
    rolls = []
    for compiled in (True, False):
        dyn = LatentDynamics(body, env, samples=q0.shape[0])
        y0 = dyn.initial_state(q0, torch.zeros_like(q0), velocity, spin)
        mask = torch.zeros(len(body.mass), dtype=torch.bool)
        mask[:3] = True
        push = Event(time=0.2, mask=mask, dv=torch.tensor([0.0, 0.5, 0.3], dtype=F64))
        rolls.append(rollout(dyn, y0, times, events=[push], compiled=compiled))
    fast, ref = rolls
    assert fast.steps == ref.steps > 0
    size = float(body.shape.rest.abs().max())
    assert float((fast.q - ref.q).abs().max()) < 1e-9
    assert float((fast.translation - ref.translation).abs().max()) < 1e-9 * size
    assert float((fast.rotation - ref.rotation).abs().max()) < 1e-9
    for name in ref.energy:
        scale = float(ref.energy["kinetic"].abs().max() + ref.energy["gravity"].abs().max())
        assert float((fast.energy[name] - ref.energy[name]).abs().max()) < 1e-9 * scale, name
    assert float(ref.q.abs().max()) > 1e-3  # it did deform: the comparison means something


def test_one_evaluation_and_the_step_are_the_references():
    body, env, q0, velocity, spin = cube_case()
    dyn = LatentDynamics(body, env, samples=2)
    y = dyn.initial_state(q0, torch.zeros_like(q0), velocity, spin)
    gen = torch.Generator().manual_seed(3)
    y = y + 0.05 * torch.randn(y.shape, generator=gen, dtype=F64)
    y[:, 1] -= 0.45  # some points below the ground: contact and friction act
    P = kernel_params.params(dyn, CONSTANTS)
    R = dyn.R_ref.numpy()
    with torch.inference_mode():
        want = dyn._evaluate(torch.tensor(0.3, dtype=F64), y)
        step = dyn.step_now(y, 1e-2, 0.3)
    got = kernel.rhs(P, 0.3, R, y.numpy())
    assert np.abs(got - want.numpy()).max() < 1e-10 * np.abs(want.numpy()).max()
    h, f0 = kernel.step_now(P, 0.3, R, y.numpy(), 1e-2)
    assert h == pytest.approx(step, rel=1e-9) and step < 1e-2
    assert np.abs(f0 - want.numpy()).max() < 1e-10 * np.abs(want.numpy()).max()


def test_the_step_budget_and_a_blow_up_are_reported_not_run():
    body, env, q0, velocity, spin = cube_case()
    dyn = LatentDynamics(body, env, samples=2)
    y = dyn.initial_state(q0, torch.zeros_like(q0), velocity, spin).numpy()
    P = kernel_params.params(dyn, CONSTANTS | dict(MAX_STEPS=4))
    *_, steps, _, status = kernel.advance(P, dyn.R_ref.numpy(), y, 0.0, 1.0, 1e-3, 0)
    assert status == kernel.TOO_MANY_STEPS and 4 < steps <= 4 + BURST
    bad = y.copy()
    bad[0, 6] = np.nan
    P = kernel_params.params(dyn, CONSTANTS)
    *_, status = kernel.advance(P, dyn.R_ref.numpy(), bad, 0.0, 0.01, 1e-3, 0)
    assert status == kernel.NOT_FINITE
