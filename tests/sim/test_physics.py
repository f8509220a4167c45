"""The engine against theory: beams, pins, drops, determinism, and rejection of unstable runs."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.errors import UsageError
from neurok_cli.scenario.conditions import Conditions, Impulse, SimMaterial, select_region
from neurok_cli.sim.engine import SimResult, _check_frame, energy_gain, run
from neurok_cli.sim.setup import prepare

L, B, E, RHO = 1.0, 0.05, 5e8, 1000.0  # a 1 m steel-stiff square beam of a light material


def _beam() -> tuple[np.ndarray, np.ndarray]:
    box = trimesh.creation.box(extents=(L, B, B)).subdivide().subdivide()
    return np.asarray(box.vertices) + [L / 2, 0, 0], np.asarray(box.faces)


def _sheet(n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    pts = np.stack([u, np.zeros_like(u), w], -1).reshape(-1, 3)
    q = np.arange(n * n).reshape(n, n)[:-1, :-1].reshape(-1)
    faces = np.concatenate([np.stack([q, q + 1, q + n + 1], 1), np.stack([q, q + n + 1, q + n], 1)])
    return pts, faces


def _beam_run(damping: float, seconds: float, fps: float) -> tuple[SimResult, int]:
    v, f = _beam()
    mat = SimMaterial(young=E, poisson=0.3, density=RHO, damping=damping)
    spec = prepare(v, f, "beam", mat, Conditions(ground=False, height=1.0), cells=(4, 1, 1))
    return run(spec, seconds=seconds, fps=fps, closed=True), int(np.argmax(v[:, 0]))


def test_clamped_beam_static_deflection_matches_euler_bernoulli():
    result, tip = _beam_run(damping=0.004, seconds=3.0, fps=30)
    assert result.rejected is None
    inertia, load = B**4 / 12, RHO * B * B * 9.81
    theory = load * L**4 / (8 * E * inertia)
    sim = result.frames[0, tip, 1] - result.frames[-10:, tip, 1].mean()
    assert sim == pytest.approx(theory, rel=0.03)


def test_clamped_beam_first_frequency_matches_euler_bernoulli():
    result, tip = _beam_run(damping=0.0, seconds=1.5, fps=240)
    y = result.frames[:, tip, 1] - result.frames[:, tip, 1].mean()
    crossings = np.flatnonzero(np.diff(np.sign(y)) != 0)
    freq = (len(crossings) - 1) / 2 / ((crossings[-1] - crossings[0]) / 240)
    inertia = B**4 / 12
    theory = 1.8751**2 / (2 * np.pi) * np.sqrt(E * inertia / (RHO * B * B * L**4))
    assert freq == pytest.approx(theory, rel=0.03)


def test_pinned_cloth_vertices_stay_put():
    v, f = _sheet()
    cond = Conditions(height=1.0, pins=["x<0.01 & z<0.01", "x>0.99 & z<0.01"], wind=(0, 0, 3),
                      gust=0.3)
    spec = prepare(v, f, "cloth", SimMaterial(young=5e4, poisson=0.25, density=300,
                                              damping=0.001, thickness=0.002), cond)
    result = run(spec, seconds=1.0, fps=30)
    pins = spec.pinned_vertices
    assert len(pins) == 2 and result.rejected is None
    assert np.abs(result.frames[:, pins] - result.frames[0, pins]).max() <= 1e-6
    free = np.setdiff1d(np.arange(len(v)), pins)
    assert np.abs(result.frames[-1, free] - result.frames[0, free]).max() > 0.1  # it swings


@pytest.mark.parametrize("dof", ["trilinear", "tet"])
def test_dropped_soft_body_rests_on_the_ground(dof):
    s = trimesh.creation.icosphere(subdivisions=2, radius=0.2)
    spec = prepare(np.asarray(s.vertices), np.asarray(s.faces), "soft",
                   SimMaterial(young=2e4, poisson=0.35, density=300, damping=0.003),
                   Conditions(height=0.3), dof=dof)
    result = run(spec, seconds=2.0, fps=30, closed=True)
    assert result.rejected is None
    size = 0.4
    last = result.frames[-1]
    assert -last[:, 1].min() < 0.01 * size  # penetration
    assert last[:, 1].min() < 0.02 * size  # it is down, not floating
    assert result.kinetic[-1] < 1e-3 * result.kinetic.max()  # and at rest


def test_same_inputs_give_identical_arrays():
    s = trimesh.creation.icosphere(subdivisions=2, radius=0.2)
    args = (np.asarray(s.vertices), np.asarray(s.faces), "soft",
            SimMaterial(young=2e4, poisson=0.35, density=300, damping=0.003))
    cond = Conditions(height=0.2, velocity=(0.5, 0, 0), spin=(0, 2, 0),
                      impulses=[Impulse("top", (0, 0, 1.0), 0.3)])
    a = run(prepare(*args, cond), seconds=1.0, fps=30, closed=True).frames
    b = run(prepare(*args, cond), seconds=1.0, fps=30, closed=True).frames
    assert np.array_equal(a, b)


def test_unstable_integration_is_rejected():
    v, f = _sheet()
    spec = prepare(v, f, "cloth", SimMaterial(young=1e5, poisson=0.25, density=300, damping=0.0,
                                              thickness=0.002), Conditions(height=1.0))
    spec.integrator = "Euler"  # explicit integration of a stiff membrane gains energy
    assert run(spec, seconds=1.0, fps=30).rejected is not None


def test_stability_checks():
    x = np.random.default_rng(0).normal(size=(10, 3))
    faces = np.array([[0, 1, 2]])
    assert _check_frame(3.0, None, x, faces, False) is None
    assert _check_frame(3.0, None, x * np.nan, faces, False) == "nan"
    assert _check_frame(1.0, None, x * 10, faces, False) == "blow-up"
    assert _check_frame(5.0, None, x - [0, 5, 0], faces, True) == "through-ground"
    r = SimResult(frames=np.zeros((3, 1, 3)), times=np.arange(3.0), kinetic=np.array([0, 1, 50.0]),
                  potential=np.zeros(3), work=np.zeros(3))
    assert energy_gain(r, mass=1.0, extent=1.0) == "energy-gain"
    r.kinetic = np.array([0, 1, 2.0])
    assert energy_gain(r, mass=1.0, extent=1.0) is None


def test_regions():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1.0]])
    assert select_region("y>0.9", v).tolist() == [False, False, True, True]
    assert select_region("x<0.5 & y<0.5", v).tolist() == [True, False, False, False]
    assert select_region("x>0.5 | z>0.5", v).tolist() == [False, True, False, True]
    assert select_region("top", v).tolist() == [False, False, True, True]
    assert select_region("0,3", v).tolist() == [True, False, False, True]
    with pytest.raises(Exception, match="cannot read"):
        select_region("height > 2", v)


def test_regions_on_a_flat_mesh():
    # a triangle in the z = 0 plane: z constrains nothing, the other axes still do
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 0.5, 0.0]])
    assert select_region("front", v).all() and select_region("back", v).all()
    assert select_region("z>0.9 & x>0.9", v).tolist() == [False, True, False]
    assert select_region("z<0.5 & y>0.9", v).tolist() == [False, False, True]
    assert not select_region("x>2", v).any()


def test_pins_that_hold_everything_are_refused():
    """"bottom" of a sheet lying flat is all of it: refused, rather than a clip in which
    nothing moves; the same for every node of a soft body's cage."""
    v, f = _sheet()
    with pytest.raises(UsageError, match="holds all of the object"):
        prepare(v, f, "cloth", SimMaterial(), Conditions(pins=["bottom"]))
    box = trimesh.creation.box(extents=(0.4, 0.2, 0.3))
    with pytest.raises(UsageError, match="holds all of the object"):
        prepare(box.vertices, box.faces, "soft", SimMaterial(), Conditions(pins=["y>-1"]))
    spec = prepare(v, f, "cloth", SimMaterial(), Conditions(pins=["x<0.05"]))
    assert 0 < len(spec.pinned_vertices) < len(v)
