"""A body's volume, and so its mass, wherever its mesh sits."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.scenario.mass import closed_volume


def test_an_open_mesh_has_the_same_volume_wherever_it_sits():
    """A scan with a hole: from the origin, its signed volume (and mass) changed 14 % as
    the mesh moved by 0-1 m."""
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.2)
    faces = sphere.faces[sphere.triangles_center[:, 1] < 0.15]  # a hole at the top
    volumes = [closed_volume(sphere.vertices + shift, faces)
               for shift in ([0, 0, 0], [1.0, 0.7, -1.0], [0, -1.0, 0], [0.3, 0, 0])]
    assert np.ptp(volumes) < 1e-9 * abs(volumes[0])
    whole = 4 / 3 * np.pi * 0.2 ** 3
    assert 0.8 * whole < volumes[0] < whole  # the missing cap is 4 % of it


def test_a_closed_mesh_keeps_its_volume():
    box = trimesh.creation.box((0.4, 0.2, 0.3))
    assert closed_volume(box.vertices + 5.0, box.faces) == pytest.approx(0.024, rel=1e-9)
