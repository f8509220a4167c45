"""The compiled energy pass (deform/kernels.py) against the laws' NumPy definitions
(deform/elastic.py): the same energy and gradient, for solids, sheets and cloth's
compression, far from rest as near it."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.deform.elastic import Membrane
from neurok_cli.deform.handle_motion import build_mechanics
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


@pytest.fixture(scope="module")
def solid():
    box = trimesh.creation.box(extents=(1.0, 0.4, 0.4)).subdivide()
    return build_mechanics(np.asarray(box.vertices), np.asarray(box.faces), "soft",
                           PRESET_MATERIALS["soft"], handles=10)


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

    from neurok_cli.deform.handles import affine_coords

    R = Rotation.from_rotvec([0.4, 1.1, -0.3]).as_matrix()
    Z = affine_coords(R - np.eye(3), np.array([0.1, 2.0, 0.0]), sheet.basis.centres)
    val, grad = sheet.law.energy_grad(sheet.elements, Z)
    assert abs(val) < 1e-12 and np.abs(grad).max() < 1e-6
