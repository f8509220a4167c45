"""The latent Euler–Lagrange dynamics on small synthetic bodies whose physics is known."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model.dynamics.bodies import Body, Environment
from neurok_cli.model.dynamics.equations import LatentDynamics, exp_so3, inv_right_jacobian
from neurok_cli.model.dynamics.rollout import Event, integrate, rollout
from neurok_cli.model.reduced import ReducedShape, fit_quadratic

F64 = torch.float64


def cube_body(*, curvature: float = 1.0, stiffness: float = 2000.0, side: float = 0.5,
              height: float = 1.0, pinned: torch.Tensor | None = None) -> Body:
    """27 points of a cube of 18 kg; three deformation modes (shear, bulge, twist), the
    first one curved (a quadratic term), springs between near neighbours."""
    g = torch.linspace(-side / 2, side / 2, 3, dtype=F64)
    rest = torch.stack(torch.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    Q, k = len(rest), 3
    A = torch.zeros(Q, 3, k, dtype=F64)
    A[:, 0, 0] = rest[:, 1]
    A[:, 1, 1] = rest[:, 1] ** 2
    A[:, 2, 2] = rest[:, 0] * rest[:, 2]
    B = torch.zeros(Q, 3, k, k, dtype=F64)
    B[:, 1, 0, 0] = -curvature * rest[:, 1]
    d = torch.cdist(rest, rest)
    edges = torch.tensor([(i, j) for i in range(Q) for j in range(i + 1, Q)
                          if d[i, j] < 0.8 * side])
    normals = torch.nn.functional.normalize(rest + 1e-9, dim=-1)
    return Body(shape=ReducedShape(rest, A, B), mass=torch.full((Q,), 18.0 / Q, dtype=F64),
                normals=normals, areas=torch.full((Q,), side**2 * 6 / Q, dtype=F64),
                edges=edges, stiffness=torch.full((len(edges),), stiffness, dtype=F64),
                pinned=torch.zeros(Q, dtype=torch.bool) if pinned is None else pinned,
                centre=torch.tensor([0.0, height, 0.0], dtype=F64))


def run(body: Body, env: Environment, *, seconds: float, q0=(0.3, 0.0, 0.1), qd0=(0, 0, 0),
        velocity=(0, 0, 0), spin=(0, 0, 0), events=(), fps: float = 30.0):
    dyn = LatentDynamics(body, env)
    y0 = dyn.initial_state(torch.tensor([q0], dtype=F64), torch.tensor([qd0], dtype=F64),
                           torch.tensor(velocity, dtype=F64), torch.tensor(spin, dtype=F64))
    times = torch.arange(int(seconds * fps) + 1, dtype=F64) / fps
    return dyn, rollout(dyn, y0, times, events=list(events))


def drift(roll) -> float:
    total = roll.energy["total"][:, 0]
    scale = max(float(roll.energy["kinetic"].max()), float(roll.energy["elastic"].max()))
    return float((total - total[0]).abs().max()) / scale


def test_rotations_are_exact_and_small_angle_safe():
    theta = torch.tensor([[0.3, -0.2, 0.5], [0.0, 0.0, 0.0], [1e-7, 0.0, 0.0]], dtype=F64)
    R = exp_so3(theta)
    eye = torch.eye(3, dtype=F64)
    assert torch.allclose(R @ R.transpose(1, 2), eye.expand(3, 3, 3), atol=1e-12)
    assert torch.allclose(torch.linalg.det(R), torch.ones(3, dtype=F64))
    # a rotation about z by 0.5 rad
    Rz = exp_so3(torch.tensor([0.0, 0.0, 0.5], dtype=F64))
    c, s = math.cos(0.5), math.sin(0.5)
    assert torch.allclose(Rz, torch.tensor([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=F64))
    # d/dt Exp(θ + t J_r⁻¹ ω) at t = 0 is Exp(θ) [ω]x (ω in the body frame)
    w = torch.tensor([0.2, 0.7, -0.4], dtype=F64)
    th = theta[0]
    h = 1e-6
    dR = (exp_so3(th + h * inv_right_jacobian(th) @ w) - exp_so3(th - h * inv_right_jacobian(
        th) @ w)) / (2 * h)
    from neurok_cli.model.dynamics.equations import skew
    assert torch.allclose(dR, exp_so3(th) @ skew(w), atol=1e-7)


def test_still_air_slows_a_fall_and_books_the_work_it_takes():
    """Without wind, air still drags: a falling body ends slower than in a vacuum, and the
    drag's (negative) work keeps the energy balance."""
    falls = {}
    for air in (False, True):
        env = Environment(gravity=(0.0, -9.81, 0.0), ground=False, still_air=air,
                          air_density=100.0)  # dense air, so 1 s shows it
        _, roll = run(cube_body(), env, seconds=1.0, q0=(0, 0, 0))
        falls[air] = roll
        assert drift(roll) <= 0.01
    assert float(falls[True].translation[-1, 0, 1]) > float(falls[False].translation[-1, 0, 1])
    assert float(falls[True].energy["work"][-1, 0]) < 0.0
    assert float(falls[False].energy["work"][-1, 0]) == 0.0


@pytest.mark.parametrize("spin", [(0.0, 0.0, 0.0), (1.0, 2.0, 0.5)])
def test_undamped_free_motion_keeps_its_energy_for_ten_seconds(spin):
    body = cube_body()
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False)
    dyn, roll = run(body, env, seconds=10.0, spin=spin)
    assert drift(roll) <= 0.02
    # the elastic modes really oscillate: energy moves between kinetic and elastic
    assert float(roll.energy["elastic"][:, 0].max()) > 10 * float(
        roll.energy["elastic"][:, 0].min())


def test_a_mode_too_fast_to_follow_is_kept_stable_and_never_gains_energy():
    """A mode faster than ACCURACY / MIN_STEP (a small, stiff body's squash) is not followed
    step by step: the step stays at MIN_STEP, where RK4 is stable for it and damps it; a
    slower mode's step follows it (ACCURACY / its frequency) and keeps its energy (above)."""
    from neurok_cli.model.dynamics.steps import ACCURACY, MIN_STEP, STABILITY

    env = Environment(gravity=(0.0, 0.0, 0.0), ground=False, still_air=False)
    slow = LatentDynamics(cube_body(), env)
    assert slow.step_size() == pytest.approx(ACCURACY / slow.elastic_rate(), rel=1e-9)
    body = cube_body(stiffness=2e5)
    dyn, roll = run(body, env, seconds=2.0, q0=(0.01, 0.0, 0.005))
    omega = dyn.elastic_rate()
    assert ACCURACY / MIN_STEP < omega < STABILITY / MIN_STEP
    assert dyn.step_size() == pytest.approx(MIN_STEP)
    mech = (roll.energy["kinetic"] + roll.energy["elastic"])[:, 0]
    assert torch.isfinite(roll.q).all()
    assert (mech[1:] <= mech[:-1] * (1 + 1e-9)).all()
    assert float(mech[-1]) < 1e-3 * float(mech[0])  # damped by the integrator


def test_modes_past_the_fastest_are_given_inertia_and_the_slower_ones_kept():
    from neurok_cli.model.dynamics.steps import _lifted_inertia

    g = torch.Generator().manual_seed(0)
    B = torch.randn(5, 5, generator=g, dtype=F64)
    M = B @ B.T + 5 * torch.eye(5, dtype=F64)
    C = torch.randn(5, 5, generator=g, dtype=F64)
    K = C @ torch.diag(torch.logspace(0, 6, 5, dtype=F64)) @ C.T  # rates over 3 decades
    fastest = 30.0

    def rates(mass):
        return torch.linalg.eigvals(torch.linalg.solve(mass, K)).real.sort().values.sqrt()

    before, after = rates(M), rates(M + _lifted_inertia(M, K, fastest))
    assert (before > fastest).any() and (before < fastest).any()
    assert torch.allclose(after, before.clamp_max(fastest), rtol=1e-8)


def test_a_stiff_body_moves_at_the_step_floor_and_keeps_its_energy_books():
    """A wooden cube's modes (thousands of rad/s) get inertia down to FASTEST_MODE: the step
    is the floor, not 1.5 / their frequency, and a drop's energy balance still closes."""
    from neurok_cli.model.dynamics.equations import FASTEST_MODE, LATENT_INERTIA
    from neurok_cli.model.dynamics.steps import MIN_STEP

    stiff = LatentDynamics(cube_body(stiffness=1e8),
                           Environment(gravity=(0.0, -9.81, 0.0), ground=False))
    assert stiff.elastic_rate() == pytest.approx(FASTEST_MODE, rel=1e-6)
    assert stiff.step_size() == pytest.approx(MIN_STEP)
    soft = LatentDynamics(cube_body(), Environment(gravity=(0.0, -9.81, 0.0), ground=False))
    floor = LATENT_INERTIA * torch.linalg.eigvalsh(soft.M0 - soft.latent_inertia)[-1]
    assert torch.allclose(soft.latent_inertia, floor * torch.eye(3, dtype=F64))  # none added
    body = cube_body(stiffness=1e8, height=0.5)
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=True)
    _, roll = run(body, env, seconds=1.5, q0=(0.0, 0.0, 0.0))
    assert torch.isfinite(roll.q).all()
    assert roll.steps < 1.5 / MIN_STEP * 3  # the contact shortens some steps, no more
    assert drift(roll) < 0.02


def test_free_fall_is_ballistic_and_spin_is_kept():
    body = cube_body()
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False, still_air=False)  # vacuum
    _, roll = run(body, env, seconds=1.0, q0=(0, 0, 0), velocity=(0.5, 0.0, 0.0),
                  spin=(0.0, 0.0, 1.0))
    t = roll.times[-1]
    r = roll.translation[-1, 0]
    assert torch.allclose(r, torch.tensor([0.5 * t, -0.5 * 9.81 * t**2, 0.0], dtype=F64),
                          atol=1e-6)
    # a body spinning about a principal axis keeps spinning: R(1 s) = Rz(1 rad)
    assert torch.allclose(roll.rotation[-1, 0], exp_so3(torch.tensor([0.0, 0.0, 1.0],
                                                                    dtype=F64)), atol=1e-6)


def test_damping_never_adds_energy():
    body = cube_body()
    env = Environment(gravity=(0.0, 0.0, 0.0), ground=False, beta=0.01)
    _, roll = run(body, env, seconds=3.0, qd0=(5.0, -3.0, 2.0))
    mech = (roll.energy["kinetic"] + roll.energy["elastic"])[:, 0]
    assert (mech[1:] <= mech[:-1] + 1e-9).all()
    assert float(mech[-1]) < 0.5 * float(mech[0])
    # what left was booked as dissipated
    assert drift(roll) < 0.01


def test_dropped_body_comes_to_rest_on_the_ground():
    body = cube_body(height=0.6)
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=True, friction=0.8,
                      contact_rate=float(math.sqrt(16 * 9.81 / (0.005 * 0.5))), beta=0.01)
    dyn, roll = run(body, env, seconds=3.0, q0=(0, 0, 0), velocity=(0.3, 0.0, 0.0))
    rest = body.shape.rest
    final = body.centre + roll.translation[-1, 0] + (
        body.shape.positions(roll.q[-1]) [0]) @ roll.rotation[-1, 0].T
    penetration = float((-final[:, 1]).clamp_min(0).max())
    assert penetration <= 0.01 * 0.5
    assert float(final[:, 1].min()) < 0.01 * 0.5  # it is on the ground, not hovering
    assert float(roll.energy["kinetic"][-1, 0]) < 1e-3  # friction stopped the sliding
    assert float(rest[:, 1].min()) + float(body.centre[1]) > 0.3  # it started in the air


def test_a_drop_onto_critically_damped_contact_keeps_its_energy_balance():
    """The contact damper is critical (as the engine's) but takes a point's speed only within
    the contact rate x its depth: in full at first touch, the force stepped and the dropped
    cube's energy balance missed by 17 % of its largest kinetic energy; within, 0.65 %."""
    body = cube_body(height=0.6)
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=True, friction=0.8,
                      contact_rate=float(math.sqrt(16 * 9.81 / (0.005 * 0.5))))
    assert env.contact_damping == 1.0
    _, roll = run(body, env, seconds=2.0, q0=(0, 0, 0), velocity=(0.3, 0.0, 0.0))
    assert drift(roll) < 0.02


def test_a_body_at_rest_sleeps_until_a_push_wakes_it():
    """Dropped, the cube settles; once still for SLEEP_TIME it is held without integrating
    (steps stop, frames stay equal, its last kinetic energy booked as dissipated), and a push
    at 5 s moves it again, from where it rested."""
    body = cube_body(height=0.6)
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=True, friction=0.8,
                      contact_rate=float(math.sqrt(16 * 9.81 / (0.005 * 0.5))), beta=0.01)
    _, short = run(body, env, seconds=4.0, q0=(0, 0, 0))
    _, long = run(body, env, seconds=5.0, q0=(0, 0, 0))
    assert long.steps == short.steps  # asleep before 4 s: the last second costs no step
    asleep = slice(90, None)  # from 3 s on the state is held
    assert torch.equal(long.q[asleep], long.q[-1:].expand_as(long.q[asleep]))
    assert torch.equal(long.translation[asleep], long.translation[-1:].expand_as(
        long.translation[asleep]))
    assert float(long.energy["kinetic"][-1, 0]) == 0.0
    top = body.shape.rest[:, 1] > 0.2
    push = Event(time=5.0, mask=top, dv=torch.tensor([2.0, 0.0, 0.0], dtype=F64))
    _, pushed = run(body, env, seconds=6.0, q0=(0, 0, 0), events=[push])
    assert torch.equal(pushed.translation[150, 0], long.translation[150, 0])
    assert pushed.steps > long.steps
    moved = (pushed.translation[-1, 0] - pushed.translation[150, 0]).norm()
    assert float(moved) > 0.01


def test_halting_books_the_kinetic_energy_as_dissipated():
    body = cube_body()
    dyn = LatentDynamics(body, Environment())
    y = dyn.initial_state(torch.tensor([[0.2, 0.0, 0.1]], dtype=F64),
                          torch.tensor([[1.0, -2.0, 0.5]], dtype=F64),
                          torch.tensor([0.3, 0.1, 0.0], dtype=F64),
                          torch.tensor([0.0, 1.0, 0.0], dtype=F64))
    before, held = dyn.energy(y), dyn.halt(y)
    after = dyn.energy(held)
    assert float(before["kinetic"][0]) > 1.0 and float(after["kinetic"][0]) == 0.0
    assert float(after["total"][0]) == pytest.approx(float(before["total"][0]), rel=1e-12)
    r, th, q, *_ = dyn.split(held)
    assert torch.equal(torch.cat([r, th, q], -1), torch.cat(dyn.split(y)[:3], -1))


def test_pinned_points_stay_put():
    pinned = torch.zeros(27, dtype=torch.bool)
    pinned[:9] = True  # the x = -side/2 face
    body = cube_body(pinned=pinned, stiffness=5000.0)
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False, pin_rate=300.0, beta=0.005)
    _, roll = run(body, env, seconds=2.0, q0=(0, 0, 0), qd0=(2.0, 0.0, 0.0))
    x = body.centre + roll.translation[:, 0, None] + torch.einsum(
        "tpi,tji->tpj", body.shape.positions(roll.q[:, 0]), roll.rotation[:, 0])
    moved = (x[:, pinned] - (body.centre + body.shape.rest[pinned])).norm(dim=-1)
    assert float(moved.max()) < 0.01 * 0.5


def test_several_motions_of_a_pinned_body_are_each_its_own_motion():
    """Samples of one pinned body (a flag fluttering, K ways) integrate side by side; each
    row follows the motion it would follow alone."""
    pinned = torch.zeros(27, dtype=torch.bool)
    pinned[:9] = True
    body = cube_body(pinned=pinned, stiffness=5000.0)
    env = Environment(ground=False, pin_rate=300.0, beta=0.005)
    q0 = torch.tensor([[0.2, 0.0, 0.0], [0.0, -0.1, 0.3]], dtype=F64)
    times = torch.arange(16, dtype=F64) / 30.0
    both = LatentDynamics(body, env, samples=2)
    zero3 = torch.zeros(3, dtype=F64)
    together = rollout(both, both.initial_state(q0, torch.zeros_like(q0), zero3, zero3), times)
    for s in range(2):
        one = LatentDynamics(body, env)
        alone = rollout(one, one.initial_state(q0[s:s + 1], torch.zeros_like(q0[s:s + 1]),
                                               zero3, zero3), times, step=both.step_size())
        assert torch.allclose(together.q[:, s], alone.q[:, 0], atol=1e-4)


def test_a_clamped_frame_stays_put_and_its_start_velocity_goes_to_the_deformation():
    pinned = torch.zeros(27, dtype=torch.bool)
    pinned[:9] = True  # the x = -side/2 face holds the frame
    body = dataclasses.replace(cube_body(pinned=pinned, stiffness=5000.0), clamped=True)
    env = Environment(ground=False, pin_rate=300.0)
    dyn, roll = run(body, env, seconds=1.0, q0=(0, 0, 0), spin=(0.0, 0.0, 2.0))
    assert float(roll.translation.abs().max()) == 0.0
    assert torch.equal(roll.rotation, torch.eye(3, dtype=F64).expand_as(roll.rotation))
    assert float(roll.q.abs().max()) > 1e-3  # the start velocity moved the deformation
    work = roll.energy["work"][:, 0]
    assert float(work[0]) > 0 and torch.allclose(work, work[0].expand_as(work))  # booked once
    assert torch.allclose(roll.energy["kinetic"][0, 0], work[0])  # all of it kinetic at 0
    still = dyn.initial_state(torch.zeros(1, 3, dtype=F64), torch.zeros(1, 3, dtype=F64),
                              torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64))
    assert float(still.abs().max()) == 0.0
    two = LatentDynamics(body, env, samples=2)  # each sample kicked from its own start shape
    q0 = torch.tensor([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]], dtype=F64)
    y0 = two.initial_state(q0, torch.zeros_like(q0), torch.zeros(3, dtype=F64),
                           torch.tensor([0.0, 0.0, 2.0], dtype=F64))
    one = dyn.initial_state(q0[1:], torch.zeros_like(q0[1:]), torch.zeros(3, dtype=F64),
                            torch.tensor([0.0, 0.0, 2.0], dtype=F64))
    assert torch.allclose(y0[1], one[0]) and not torch.allclose(y0[0], y0[1])


def test_a_kick_adds_the_work_it_books():
    body = cube_body()
    env = Environment(gravity=(0.0, 0.0, 0.0), ground=False)
    top = body.shape.rest[:, 1] > 0.2
    kick = Event(time=0.5, mask=top, dv=torch.tensor([1.0, 0.0, 0.0], dtype=F64))
    _, roll = run(body, env, seconds=1.5, q0=(0, 0, 0), events=[kick])
    work = roll.energy["work"][:, 0]
    assert float(work[0]) == 0.0 and float(work[-1]) > 0.0
    # the momentum given: the top third's mass times 1 m/s, now carried by the whole body
    v = (roll.translation[-1, 0] - roll.translation[-2, 0]) * 30.0
    assert float(v[0]) == pytest.approx(float(body.mass[top].sum()) / 18.0, rel=0.02)
    assert drift(roll) < 0.02


def test_wind_does_work_on_a_sheet():
    body = cube_body()
    body.closed = False
    env = Environment(gravity=(0.0, 0.0, 0.0), ground=False, wind=(5.0, 0.0, 0.0))
    _, roll = run(body, env, seconds=0.5, q0=(0, 0, 0))
    assert float(roll.translation[-1, 0, 0]) > 0.0
    assert float(roll.energy["work"][-1, 0]) > 0.0


def test_integrate_rejects_unknown_methods():
    body = cube_body()
    dyn = LatentDynamics(body, Environment(ground=False))
    y = dyn.initial_state(torch.zeros(1, 3, dtype=F64), torch.zeros(1, 3, dtype=F64),
                          torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64))
    with pytest.raises(UsageError, match="dopri5"):
        integrate(dyn, y, 0.0, 0.1, method="euler")


def test_dopri5_agrees_with_rk4():
    body = cube_body()
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False)
    dyn = LatentDynamics(body, env)
    y = dyn.initial_state(torch.tensor([[0.3, 0.0, 0.1]], dtype=F64),
                          torch.zeros(1, 3, dtype=F64), torch.zeros(3, dtype=F64),
                          torch.tensor([0.0, 1.0, 0.0], dtype=F64))
    a = integrate(dyn, y, 0.0, 0.5, method="rk4", step=dyn.step_size() / 10)
    b = integrate(dyn, y, 0.0, 0.5, method="dopri5", rtol=1e-9, atol=1e-11)
    assert torch.allclose(a, b, atol=1e-4)


def test_quadratic_fit_recovers_a_quadratic_map():
    torch.manual_seed(0)
    Q, k = 10, 3
    A = torch.randn(Q, 3, k, dtype=F64)
    B = torch.randn(Q, 3, k, k, dtype=F64)
    B = 0.5 * (B + B.transpose(-1, -2))
    true = ReducedShape(torch.zeros(Q, 3, dtype=F64), A, B)
    fit = fit_quadratic(lambda q: true.positions(q), torch.zeros(Q, 3, dtype=F64), k)
    assert fit.residual < 1e-10
    assert torch.allclose(fit.shape.linear, A, atol=1e-8)
    assert torch.allclose(fit.shape.quadratic, B, atol=1e-8)
    q = torch.randn(4, k, dtype=F64)
    assert torch.allclose(fit.shape.jacobian(q), true.jacobian(q), atol=1e-8)


def test_a_pin_on_a_light_coordinate_does_not_gain_energy():
    """A pin carries the whole weight (a flag's edge, a chair's feet), and a latent direction
    moves mostly the pinned point: the pin's damping, sized for the body, must stay within
    what the step can integrate, or the motion gains energy from the first frame."""
    pinned = torch.zeros(27, dtype=torch.bool)
    pinned[0] = True  # a corner
    body = cube_body(pinned=pinned, stiffness=500.0)
    A = body.shape.linear.clone()
    A[:, 2, 2] = 0.0
    A[0, 2, 2] = 0.5  # the third direction moves the pinned corner alone
    body = dataclasses.replace(body, shape=ReducedShape(body.shape.rest, A,
                                                        body.shape.quadratic))
    rate = math.sqrt(16.0 * 9.81 / (0.003 * 0.5))
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False, pin_rate=rate, beta=0.003)
    _, roll = run(body, env, seconds=1.0, q0=(0.0, 0.0, 0.0))
    total = roll.energy["total"][:, 0]
    assert float((total - total[0]).max()) <= 1e-3 * float(roll.energy["kinetic"].max())


def plate_body(length: float = 1.0, rows: int = 21) -> tuple[Body, torch.Tensor]:
    """A stiff 1 m square plate of 2 kg lying flat (x along its length, z across), held by
    the two rows of points nearest x = 0 (a strip 5 % of its length wide)."""
    x = torch.linspace(0.0, length, rows, dtype=F64)
    grid = torch.stack(torch.meshgrid(x, torch.zeros(1, dtype=F64), x - length / 2,
                                      indexing="ij"), -1).reshape(-1, 3)
    Q = len(grid)
    mass = torch.full((Q,), 2.0 / Q, dtype=F64)
    com = grid.mean(0)
    rest = grid - com
    A = torch.zeros(Q, 3, 1, dtype=F64)
    A[:, 1, 0] = rest[:, 0] ** 2  # one bend, kept small by stiff springs
    d = torch.cdist(rest, rest)
    edges = torch.tensor([(i, j) for i in range(Q) for j in range(i + 1, Q)
                          if d[i, j] < 1.5 * length / (rows - 1)])
    pinned = grid[:, 0] < 1.5 * length / (rows - 1)
    body = Body(shape=ReducedShape(rest, A, torch.zeros(Q, 3, 1, 1, dtype=F64)), mass=mass,
                normals=torch.tensor([[0.0, 1.0, 0.0]], dtype=F64).expand(Q, 3),
                areas=torch.full((Q,), length**2 / Q, dtype=F64), edges=edges,
                stiffness=torch.full((len(edges),), 2e4, dtype=F64), pinned=pinned,
                centre=com + torch.tensor([0.0, 2.0, 0.0], dtype=F64), closed=False)
    return body, pinned


def test_pins_at_anchors_make_a_hinge_that_swings_like_a_physical_pendulum():
    """A plate held by a strip of its points, the pins collapsed onto the strip's inner row
    (body.pin_joint), falls from horizontal like a plate on a hinge: at the bottom its
    kinetic energy is the weight's drop m g d and the far edge hangs below the hinge; springs
    at the points themselves hold it up instead (the strip is a stiff torsion spring)."""
    from neurok_cli.deform.learned.body import pin_joint
    body, pinned = plate_body()
    offset = torch.as_tensor(pin_joint(body.shape.rest[pinned].numpy(), 1.0).offset)
    assert float(offset[:, 0].min()) == pytest.approx(-0.05)  # the outer row onto the inner
    assert float(offset[:, 0].max()) == 0.0
    assert float(offset[:, 1:].abs().max()) < 1e-12
    env = Environment(gravity=(0.0, -9.81, 0.0), ground=False, pin_rate=300.0,
                      still_air=False)  # in a vacuum it swings as a pendulum does
    hinged = dataclasses.replace(body, pin_offset=offset)
    _, roll = run(hinged, env, seconds=1.0, q0=(0.0,), qd0=(0.0,), fps=200.0)
    x = hinged.centre + roll.translation[:, 0, None] + torch.einsum(
        "tpi,tji->tpj", hinged.shape.positions(roll.q[:, 0]), roll.rotation[:, 0])
    hinge = hinged.centre + (hinged.shape.rest[pinned] - offset).mean(0)
    far = hinged.shape.rest[:, 0] > hinged.shape.rest[:, 0].max() - 1e-9
    drop = float((hinge[1] - x[:, far, 1].mean(-1)).max())
    assert drop > 0.9 * (1.0 - 0.05)  # hangs (nearly) straight down from the hinge
    d = 0.5 - 0.05  # the hinge line to the centre of mass
    assert float(roll.energy["kinetic"].max()) == pytest.approx(2.0 * 9.81 * d, rel=0.01)
    assert drift(roll) < 0.01
    _, held = run(body, env, seconds=1.0, q0=(0.0,), qd0=(0.0,), fps=200.0)
    x = body.centre + held.translation[:, 0, None] + torch.einsum(
        "tpi,tji->tpj", body.shape.positions(held.q[:, 0]), held.rotation[:, 0])
    assert float((hinge[1] - x[:, far, 1].mean(-1)).max()) < 0.7 * drop


def test_edge_incidence_matches_gather_and_scatter():
    body = cube_body()
    dyn = LatentDynamics(body, Environment())
    a, b = body.edges[:, 0], body.edges[:, 1]
    x = torch.randn(2, 27, 4, dtype=F64)
    assert torch.allclose(dyn.springs.diff(x), x[:, a] - x[:, b], atol=1e-14)
    f = torch.randn(2, len(a), 4, dtype=F64)
    expected = torch.zeros_like(x)
    expected.index_add_(1, a, f)
    expected.index_add_(1, b, -f)
    assert torch.allclose(dyn.springs.adjoint(f), expected, atol=1e-12)


def test_a_rollout_hands_back_ordinary_tensors():
    """Integration runs in inference mode; nothing it returns or leaves in the module may be
    an inference tensor (those refuse in-place updates outside that mode)."""
    dyn, roll = run(cube_body(), Environment(ground=False), seconds=0.2)
    for t in (roll.rotation, roll.translation, roll.q, *roll.energy.values(), dyn.R_ref):
        assert not t.is_inference()
    roll.q.add_(1.0)  # in-place updates work
    dyn.R_ref.mul_(1.0)


def test_a_rollout_runs_on_one_thread_and_restores_the_callers_count():
    """The ODE's tensors are tiny: a rollout integrates on one CPU thread, and leaves the
    thread count as it found it, also when the motion fails."""
    torch.set_num_threads(2)
    seen = []

    class Watch(LatentDynamics):
        def forward(self, t, y):
            seen.append(torch.get_num_threads())
            return super().forward(t, y)

    body = cube_body()
    dyn = Watch(body, Environment(ground=False))
    y0 = dyn.initial_state(torch.tensor([[0.3, 0.0, 0.1]], dtype=F64),
                           torch.zeros(1, 3, dtype=F64), torch.zeros(3, dtype=F64),
                           torch.zeros(3, dtype=F64))
    rollout(dyn, y0, torch.tensor([0.0, 0.05], dtype=F64), compiled=False)  # torch's steps
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == 2
    for compiled in (True, False):
        with pytest.raises(FloatingPointError):
            rollout(dyn, torch.full_like(y0, math.nan), torch.tensor([0.0, 0.05], dtype=F64),
                    compiled=compiled)
        assert torch.get_num_threads() == 2


def test_the_step_is_stable_for_the_latent_bound_a_coordinate_leans_on():
    """The latent bound is as stiff as the ground contact: a soft body pushed against it in
    mid-air (no contact to shorten the step) must get a step its bound can take. The bound's
    frequency is over the coordinate's effective mass, the frame free to react (the Schur
    complement of the metric), which is lighter than its own block."""
    from neurok_cli.model.dynamics.steps import STABILITY

    body = cube_body(stiffness=1e-3, height=5.0)
    dyn = LatentDynamics(body, Environment(ground=True, contact_rate=400.0))
    inside = dyn.initial_state(torch.tensor([[0.5, 0.0, 0.0]], dtype=F64),
                               torch.tensor([[10.0, 0.0, 0.0]], dtype=F64),
                               torch.zeros(3, dtype=F64), torch.zeros(3, dtype=F64))
    fr = dyn._frame(inside)
    assert dyn._bound_step(fr["q"], lambda: dyn._whitening(dyn._mass_matrix(fr["W"]))) \
        == math.inf
    at = inside.clone()
    at[:, 6] = body.q_radius  # the first coordinate on its bound
    fr = dyn._frame(at)
    M = dyn._mass_matrix(fr["W"])[0]
    Mqq, Mqf, Mff = M[6:, 6:], M[6:, :6], M[:6, :6]
    effective = Mqq - Mqf @ torch.linalg.solve(Mff, Mqf.T)
    K = torch.diag(torch.tensor([float(dyn.bound_stiffness[0]), 0.0, 0.0], dtype=F64))
    omega = float(torch.linalg.eigvals(torch.linalg.solve(effective, K)).real.max()) ** 0.5
    assert dyn._bound_step(fr["q"], lambda: dyn._whitening(M[None])) == pytest.approx(
        STABILITY / omega, rel=1e-9)
    assert dyn.step_now(at, 1.0) <= STABILITY / omega * (1 + 1e-9)
