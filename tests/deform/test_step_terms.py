"""The step's fast terms against their definitions: the compiled energy pass
(deform/own/kernels.py) against the laws' NumPy ``energy_stress`` (deform/own/laws.py), for
solids, sheets and cloth's compression, far from rest as near it; bending's lagged terms
and the handles' rotations read from sums taken once against the sums over every vertex."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.deform.own.laws import Membrane
from neurok_cli.deform.own.mechanics import build_mechanics
from neurok_cli.scenario.conditions import PRESET_MATERIALS


def _numpy(mech, law, Z):
    psi, P = law.energy_stress(mech.elements.gradients(Z))
    return float(mech.elements.measure @ psi), mech.elements.pull(P)


def _sheet(n=10):
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    v = np.stack([x.ravel(), 0.3 * np.sin(3 * x.ravel()) * z.ravel(), z.ravel()], axis=1)
    f = [(i * n + j, i * n + j + 1, (i + 1) * n + j) for i in range(n - 1) for j in range(n - 1)]
    f += [(i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j)
          for i in range(n - 1) for j in range(n - 1)]
    return v, np.asarray(f, np.int64)


def _box():
    box = trimesh.creation.box(extents=(1.0, 0.4, 0.4)).subdivide()
    return np.asarray(box.vertices), np.asarray(box.faces)


def _faces_of(which):
    return (_box() if which == "solid" else _sheet())[1]


@pytest.fixture(scope="module")
def solid():
    return build_mechanics(*_box(), "soft", PRESET_MATERIALS["soft"], handles=10)


@pytest.fixture(scope="module")
def sheet():
    v, f = _sheet()
    return build_mechanics(v, f, "cloth", PRESET_MATERIALS["cloth"], handles=12)


@pytest.mark.parametrize("scale", [1e-4, 1e-2, 0.3])
def test_the_solid_pass_is_the_neo_hookean_law(solid, scale):
    Z = np.random.default_rng(1).standard_normal(solid.M.shape[:1] + (3,)) * scale
    val, grad = solid.law.energy_grad(solid.elements, Z)
    ref_val, ref_grad = _numpy(solid, solid.law, Z)
    assert val == pytest.approx(ref_val, rel=1e-10, abs=1e-12 * abs(ref_val))
    assert np.allclose(grad, ref_grad, rtol=1e-9, atol=1e-10 * np.abs(ref_grad).max())


@pytest.mark.parametrize("compression", [1.0, 0.03, 0.0])
@pytest.mark.parametrize("scale", [1e-3, 0.2])
def test_the_sheet_pass_is_the_membrane_law_with_its_compression(sheet, compression, scale):
    law = Membrane(PRESET_MATERIALS["cloth"], compression)
    Z = np.random.default_rng(2).standard_normal(sheet.M.shape[:1] + (3,)) * scale
    val, grad = law.energy_grad(sheet.elements, Z)
    ref_val, ref_grad = _numpy(sheet, law, Z)
    assert ref_val > 0
    assert val == pytest.approx(ref_val, rel=1e-10)
    assert np.allclose(grad, ref_grad, rtol=1e-9, atol=1e-10 * np.abs(ref_grad).max())


def test_a_rigid_turn_of_the_sheet_costs_nothing_in_the_pass(sheet):
    from scipy.spatial.transform import Rotation

    from neurok_cli.deform.own.handles import affine_coords

    R = Rotation.from_rotvec([0.4, 1.1, -0.3]).as_matrix()
    Z = affine_coords(R - np.eye(3), np.array([0.1, 2.0, 0.0]), sheet.basis.centres)
    val, grad = sheet.law.energy_grad(sheet.elements, Z)
    assert abs(val) < 1e-12 and np.abs(grad).max() < 1e-6


def test_bending_s_lagged_terms_from_the_handles_are_the_vertices_sums(sheet):
    from scipy.spatial.transform import Rotation

    H = sheet.basis.handles
    R = Rotation.from_rotvec(np.random.default_rng(3).standard_normal((H, 3)) * 0.5
                             ).as_matrix()
    blend = (sheet.basis.weights @ R.reshape(-1, 9)).reshape(-1, 3, 3)
    b, c = sheet.bending.turned(blend)
    fast_b, fast_c = sheet.bending.by_handles(sheet.basis.weights).at(R)
    assert c > 0
    assert fast_c == pytest.approx(c, rel=1e-9)
    assert np.allclose(fast_b, b, rtol=1e-9, atol=1e-12 * np.abs(b).max())


@pytest.mark.parametrize("which", ["solid", "sheet"])
def test_the_handles_rotations_are_their_points_shape_matching(which, request):
    from neurok_cli.deform.own.rotations import polar
    from neurok_cli.deform.own.step import Step
    from neurok_cli.scenario.conditions import Conditions
    from neurok_cli.scenario.spec import MotionConfig

    mech = request.getfixturevalue(which)
    v = mech.basis.points[: mech.vertex_rows.shape[0]]
    faces = _faces_of(which)
    category = "soft" if which == "solid" else "cloth"
    cfg = MotionConfig(category=category, material=PRESET_MATERIALS[category],
                       conditions=Conditions(ground=False), seconds=0.1, fps=30)
    step = Step(mech, v, faces, cfg, 1 / 120)
    Z = np.random.default_rng(4).standard_normal((mech.M.shape[0], 3)) * 0.05
    step.rotations(Z)
    turns = step.turns
    x = turns.material_rest + mech.mass_rows @ Z  # every point's, as the rotations read them
    W = turns.material_weights
    cov = (W @ (x[:, :, None] * turns.material_rest[:, None, :]).reshape(-1, 9)
           ).reshape(-1, 3, 3) - (W @ x)[:, :, None] * turns.material_centres[:, None, :]
    H = mech.basis.handles
    own = polar(np.eye(3) + Z.reshape(H, 4, 3)[:, :3, :].transpose(0, 2, 1))
    assert np.allclose(step.R_handles, polar(cov + turns.material_spread[:, None, None] * own),
                       atol=1e-10)


def _patched(sheet, share):
    """The sheet's cloth membrane with ``share`` of it on its handles' patches."""
    from neurok_cli.deform.own.mechanics import _corner_mean

    law = Membrane(PRESET_MATERIALS["cloth"], 0.03)
    n = len(sheet.areas)
    return law.over_patches(sheet.elements, _corner_mean(sheet.elements.faces, n)
                            @ sheet.basis.weights[:n], share)


@pytest.mark.parametrize("scale", [1e-3, 0.2])
def test_the_patches_mean_strain_s_gradient_is_its_energy_s(sheet, scale):
    law = _patched(sheet, 0.9)
    rng = np.random.default_rng(4)
    Z = rng.standard_normal(sheet.M.shape[:1] + (3,)) * scale
    dZ = rng.standard_normal(Z.shape)
    val, grad = law.energy_grad(sheet.elements, Z)
    eps = 1e-6 * scale
    up = law.energy_grad(sheet.elements, Z + eps * dZ)[0]
    down = law.energy_grad(sheet.elements, Z - eps * dZ)[0]
    assert val > 0
    assert (up - down) / (2 * eps) == pytest.approx(float(np.sum(grad * dZ)), rel=1e-5)
    # a patch's mean strain is no triangle's own: the patches' share changes the energy
    assert law.energy_grad(sheet.elements, Z)[0] != pytest.approx(
        Membrane(PRESET_MATERIALS["cloth"], 0.03).energy_grad(sheet.elements, Z)[0], rel=1e-3)


def test_the_patches_rest_hessian_is_their_gradient_s_derivative(sheet):
    law = _patched(sheet, 0.9)
    K = law.rest_hessian(sheet.elements)
    n = K.shape[0]
    dims = np.random.default_rng(5).choice(n, 12, replace=False)
    eps = 1e-7
    for k in dims:
        dz = np.zeros(n)
        dz[k] = eps
        up = law.energy_grad(sheet.elements, dz.reshape(-1, 3))[1].reshape(-1)
        down = law.energy_grad(sheet.elements, -dz.reshape(-1, 3))[1].reshape(-1)
        column = (up - down) / (2 * eps)
        assert np.allclose(K[:, k], column, atol=1e-6 * np.abs(K).max())
    assert np.allclose(K, K.T)
    # a rigid turn stays free: the patches measure strain, not motion
    from scipy.spatial.transform import Rotation

    from neurok_cli.deform.own.handles import affine_coords

    R = Rotation.from_rotvec([0.4, 1.1, -0.3]).as_matrix()
    Z = affine_coords(R - np.eye(3), np.array([0.1, 2.0, 0.0]), sheet.basis.centres)
    val, grad = law.energy_grad(sheet.elements, Z)
    assert abs(val) < 1e-12 and np.abs(grad).max() < 1e-6
