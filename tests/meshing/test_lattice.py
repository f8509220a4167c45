"""Soft bodies as a lattice of tetrahedra: the lattice, the map that carries the surface, and
the engine's solid against theory."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.errors import UsageError
from neurok_cli.meshing.lattice import (
    _volumes,
    carry_weights,
    lattice,
    thickness,
    voxels,
    winding_number,
)
from neurok_cli.scenario.conditions import Conditions, Impulse, SimMaterial
from neurok_cli.scenario.mass import closed_volume
from neurok_cli.sim.engine import run
from neurok_cli.sim.setup import lattice_cells, prepare


def _ball(radius: float = 0.25, sub: int = 3) -> tuple[np.ndarray, np.ndarray]:
    s = trimesh.creation.icosphere(subdivisions=sub, radius=radius)
    return np.asarray(s.vertices), np.asarray(s.faces)


def _box(extents, sub: int = 2) -> tuple[np.ndarray, np.ndarray]:
    b = trimesh.creation.box(extents=extents)
    for _ in range(sub):
        b = b.subdivide()
    return np.asarray(b.vertices), np.asarray(b.faces)


def test_winding_number_and_voxels_tell_inside_from_outside():
    v, f = _ball(0.5, 2)
    w = winding_number(np.array([[0.0, 0, 0], [0.2, 0.1, -0.1], [0.8, 0, 0], [0, 0.6, 0.1]]), v, f)
    assert np.allclose(w, [1, 1, 0, 0], atol=1e-6)
    inside, side = voxels(v, f, cells=32)
    assert inside.sum() * side**3 == pytest.approx(closed_volume(v, f), rel=0.03)


def test_thickness_finds_the_thin_part():
    # a 1 m slab 0.1 m thick, and a ball: the thin part is the slab's thickness
    v, f = _box((1.0, 0.1, 0.6))
    assert thickness(v, f) == pytest.approx(0.1, rel=0.35)
    v, f = _ball(0.5)
    assert thickness(v, f) == pytest.approx(1.0, rel=0.35)
    cells, enough = lattice_cells(*_box((1.0, 0.02, 1.0)))
    assert (cells, enough) == (12, False)  # a sheet-thin solid wants more than a lattice holds
    cells, enough = lattice_cells(*_ball(0.5))
    assert cells == 6 and enough


def test_the_lattice_fills_the_solid_with_well_shaped_tetrahedra():
    v, f = _ball()
    nodes, tets = lattice(v, f, 6)
    vol = _volumes(nodes, tets)
    assert (vol > 0).all()
    assert vol.sum() == pytest.approx(closed_volume(v, f), rel=0.1)
    lo, hi = v.min(axis=0), v.max(axis=0)
    assert (nodes >= lo - 1e-9).all() and (nodes <= hi + 1e-9).all()  # snapped onto the surface
    assert vol.min() > 0.2 * np.median(vol)


def test_the_carry_map_is_exact_at_rest_and_for_affine_motions():
    v, f = _ball()
    nodes, _ = lattice(v, f, 6)
    w = carry_weights(v, nodes, 0.5 / 6)
    assert np.abs(w @ nodes - v).max() < 1e-9
    assert np.allclose(np.asarray(w.sum(axis=1)).ravel(), 1.0)
    a = np.array([[0.9, 0.2, 0.0], [-0.1, 1.1, 0.3], [0.0, -0.2, 0.8]])
    t = np.array([0.3, -1.0, 2.0])
    assert np.abs(w @ (nodes @ a.T + t) - (v @ a.T + t)).max() < 1e-9


def test_a_lattice_cube_sags_under_its_weight_as_elasticity_says():
    # a 1 m cube on frictionless ground, nu = 0: the top comes down rho g L^2 / (2 E)
    v, f = _box((1.0, 1.0, 1.0))
    young, rho = 1e5, 1000.0
    mat = SimMaterial(young=young, poisson=0.0, density=rho, damping=0.05)
    spec = prepare(v, f, "soft", mat, Conditions(height=0.0, friction=0.0), dof="lattice",
                   cells=(4, 1, 1))
    result = run(spec, seconds=1.5, fps=30, closed=True)
    assert result.rejected is None
    drop = 1.0 - result.frames[-1][:, 1].max()
    assert drop == pytest.approx(rho * 9.81 / (2 * young), rel=0.08)


def test_a_dropped_lattice_ball_squashes_springs_back_and_rests():
    v, f = _ball()
    rho, size = 500.0, 0.5
    mat = SimMaterial(young=rho * 9.81 * size / 0.05, poisson=0.4, density=rho, damping=0.003)
    spec = prepare(v, f, "soft", mat, Conditions(height=0.3 * size), dof="lattice")
    assert spec.cells == (6, 1, 1) and len(spec.lattice_tets) > 100
    result = run(spec, seconds=2.0, fps=30, closed=True)
    assert result.rejected is None
    height = np.ptp(result.frames[:, :, 1], axis=1) / size
    assert 0.6 < height.min() < 0.9  # flattened by 10-40 % on landing
    assert height[-1] > 0.9  # and back up, resting on its weight
    assert -result.frames[-1][:, 1].min() < 0.01 * size
    vol = [closed_volume(x, f) for x in result.frames]
    assert min(vol) > 0.85 * vol[0]


def test_lattice_pushes_and_determinism():
    v, f = _ball(0.2, 2)
    mat = SimMaterial(young=5e4, poisson=0.35, density=300, damping=0.003)
    cond = Conditions(height=0.1, velocity=(0.5, 0, 0), spin=(0, 2, 0),
                      impulses=[Impulse("top", (0, 0, 1.0), 0.3)])
    a = run(prepare(v, f, "soft", mat, cond, dof="lattice"), seconds=0.6, fps=30, closed=True)
    b = run(prepare(v, f, "soft", mat, cond, dof="lattice"), seconds=0.6, fps=30, closed=True)
    assert np.array_equal(a.frames, b.frames)
    assert a.work[-1] > 0  # the push did work on the body
    assert a.frames[-1][:, 0].mean() > a.frames[0][:, 0].mean() + 0.05  # it slid along x


def test_simulate_checks_the_lattice_cells():
    from neurok_cli.sim.simulate import SimulateConfig, _cells

    with pytest.raises(UsageError, match="one whole number"):
        _cells(SimulateConfig(input="x.obj", output="y.glb", dof="lattice", cells=(4, 4, 4)))
    assert _cells(SimulateConfig(input="x.obj", output="y.glb", dof="lattice", cells=(8,))
                  ) == (8, 1, 1)


def test_a_solid_thinner_than_the_lattice_is_refused_in_words():
    v, f = _box((1.0, 0.01, 1.0))
    with pytest.raises(UsageError, match="thinner than the cubes"):
        lattice(v, f, 4)
    with pytest.raises(UsageError, match="not closed"):
        lattice(v, f[: len(f) // 2], 4)  # half a box: no inside at all


def test_closest_points_on_triangles_against_dense_sampling():
    from neurok_cli.meshing.lattice import _closest_on_triangles

    rng = np.random.default_rng(4)
    tri = rng.normal(size=(6, 3, 3))
    u, w = np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201))
    keep = u + w <= 1
    bary = np.stack([1 - u[keep] - w[keep], u[keep], w[keep]], axis=1)
    for p in rng.normal(size=(20, 3)) * 2:
        got = _closest_on_triangles(p, tri)
        for t, q in zip(tri, got):
            dense = bary @ t
            best = np.linalg.norm(dense - p, axis=1).min()
            assert np.linalg.norm(q - p) <= best + 1e-9
            assert np.linalg.norm(q - p) >= best - 0.02  # on the triangle, as close as any
