"""The proxy that stands in for dense surfaces in the engine."""

from __future__ import annotations

import numpy as np
import trimesh

from neurok_cli.meshing.proxy import make_proxy


def _dense():
    s = trimesh.creation.icosphere(subdivisions=5)  # 10,242 vertices
    return np.asarray(s.vertices), np.asarray(s.faces)


def test_proxy_size_and_binding():
    v, f = _dense()
    proxy = make_proxy(v, f, 1000)
    assert 500 <= len(proxy.vertices) <= 1250
    assert proxy.faces.max() < len(proxy.vertices)
    np.testing.assert_allclose(proxy.weights.sum(axis=1), 1.0)


def test_carry_reproduces_rest_and_rigid_motion_exactly():
    v, f = _dense()
    proxy = make_proxy(v, f, 800)
    still = proxy.carry(proxy.vertices[None], v)
    np.testing.assert_allclose(still[0], v, atol=1e-12)
    moved = proxy.carry(proxy.vertices[None] + [0.3, -1.0, 2.0], v)
    np.testing.assert_allclose(moved[0], v + [0.3, -1.0, 2.0], atol=1e-12)


def test_carry_turns_the_relief_finer_than_the_proxy_with_it():
    """A bumpy sheet (relief a few proxy cells wide) turned to hang down: the relief turns
    with the sheet, as it would if the engine moved every vertex."""
    from scipy.spatial.transform import Rotation

    n = 120
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    y = 0.01 * np.sin(40 * x) * np.cos(37 * z)
    v = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    f = [(i * n + j, i * n + j + 1, (i + 1) * n + j) for i in range(n - 1) for j in range(n - 1)]
    f += [(i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j)
          for i in range(n - 1) for j in range(n - 1)]
    proxy = make_proxy(v, np.asarray(f), 1000)
    R = Rotation.from_rotvec([np.pi / 2, 0, 0]).as_matrix()
    carried = proxy.carry((proxy.vertices @ R.T)[None], v)[0]
    assert np.abs(carried - v @ R.T).max() < 1e-9
    # the relief's offsets kept their direction in space before: a bump's height moved
    # along the hanging sheet rather than out of it
    held = v + ((proxy.vertices @ R.T - proxy.vertices)[proxy.neighbours]
                * proxy.weights[..., None]).sum(axis=1)
    assert np.abs(held - v @ R.T).max() > 0.005


def test_carry_follows_smooth_deformation():
    v, f = _dense()
    proxy = make_proxy(v, f, 1500)

    def bend(x):
        return x + 0.1 * np.stack([np.sin(2 * x[:, 1]), 0 * x[:, 0], np.cos(2 * x[:, 0])], 1)

    carried = proxy.carry(bend(proxy.vertices)[None], v)[0]
    assert np.abs(carried - bend(v)).max() < 0.02  # 1 % of the 2 m sphere
