"""Choosing the material from geometry, and how pins hold a body (the presets:
tests/scenario/test_presets.py)."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.deform.learned.body import (
    auto_category,
    holds_frame,
    hole_share,
    open_boundary,
    pin_joint,
    spans_plane,
)
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.errors import InputError
from neurok_cli.io.mesh import load_mesh
from tests.conftest import asset_path


def test_material_from_geometry():
    ball = trimesh.creation.icosphere(subdivisions=2)
    assert open_boundary(ball.vertices, ball.faces) == 0.0
    assert auto_category(ball.vertices, ball.faces) == "soft"
    rod = trimesh.creation.box(extents=(1.0, 0.1, 0.1))
    assert auto_category(rod.vertices, rod.faces) == "beam"
    sheet = trimesh.creation.box(extents=(1.0, 0.1, 1.0))
    sheet = trimesh.Trimesh(sheet.vertices, sheet.faces[sheet.face_normals[:, 1] > 0.5])
    assert open_boundary(sheet.vertices, sheet.faces) == pytest.approx(4.0)
    assert auto_category(sheet.vertices, sheet.faces) == "cloth"
    # a solid with one small hole is still a solid
    holed = trimesh.Trimesh(ball.vertices, ball.faces[1:])
    assert auto_category(holed.vertices, holed.faces) == "soft"


def test_an_open_solid_is_told_from_a_sheet_by_the_area_its_holes_take():
    ball = trimesh.creation.icosphere(subdivisions=3)
    low = ball.vertices[ball.faces].mean(axis=1)[:, 1] < 0
    bowl = trimesh.Trimesh(ball.vertices, ball.faces[low])  # a shell open at its rim
    assert hole_share(bowl.vertices, bowl.faces) == pytest.approx(0.5, abs=0.02)
    assert auto_category(bowl.vertices, bowl.faces) == "cloth"
    tube = trimesh.creation.cylinder(radius=0.5, height=2.0, sections=32)
    side = np.abs(tube.face_normals[:, 2]) < 0.5
    cup = trimesh.Trimesh(tube.vertices, tube.faces[side | (tube.face_normals[:, 2] < -0.5)])
    # open at the top: pi r^2 closes it, a ninth of its area; open at both ends (a sleeve):
    # the two loops' areas add, though their orientations cancel
    assert hole_share(cup.vertices, cup.faces) == pytest.approx(1 / 9, rel=0.02)
    assert auto_category(cup.vertices, cup.faces) == "soft"
    sleeve = trimesh.Trimesh(tube.vertices, tube.faces[side])
    assert hole_share(sleeve.vertices, sleeve.faces) == pytest.approx(1 / 4, rel=0.02)
    assert hole_share(ball.vertices, ball.faces) == 0.0


def test_the_teapot_is_a_solid_with_openings_not_a_cloth():
    teapot = load_mesh(asset_path("teapot")).welded()
    assert open_boundary(teapot.vertices, teapot.faces) > 1.0  # open at its lid and spout
    assert hole_share(teapot.vertices, teapot.faces) < 0.3
    assert auto_category(teapot.vertices, teapot.faces) == "soft"
    mountain = load_mesh(asset_path("mountain")).welded()  # a height field: a sheet
    assert auto_category(mountain.vertices, mountain.faces) == "cloth"


def test_pins_over_a_patch_hold_the_frame_and_pins_on_a_line_let_it_swing():
    line = np.stack([np.zeros(5), np.linspace(0, 1, 5), np.zeros(5)], 1)  # a flag's pole
    patch = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1.0]])  # a chair's feet
    assert not spans_plane(line)
    zigzag = np.array([0.001, 0.0, 0.0]) * (np.arange(5) % 2)[:, None]  # 1 mm off a 1 m line
    assert not spans_plane(line + zigzag)
    assert spans_plane(patch)
    assert not spans_plane(patch[:2])
    assert holds_frame("soft", patch) and holds_frame("beam", patch)
    assert holds_frame("beam", line)  # a beam's clamp holds it whatever its pins' shape
    assert not holds_frame("soft", line)
    assert not holds_frame("cloth", patch)  # a sheet bends at its pins and swings
    assert not holds_frame("soft", patch[:0])


def test_a_sheets_narrow_pins_make_a_hinge_or_a_ball_joint():
    """pin_joint: each pinned point's offset from its anchor; narrow directions collapse
    onto the part of the pins nearest the centre of mass, where the sheet bends."""
    def grid(xs, zs):
        x, z = np.meshgrid(xs, zs, indexing="ij")
        return np.stack([x.ravel(), np.zeros(x.size), z.ravel()], 1)

    centre = np.array([0.5, 0.0, 0.5])  # a 1 m sheet's, over x and z in [0, 1]
    edge = grid([0.0, 0.02], np.linspace(0, 1, 21))  # two rows along z, 2 % apart
    joint = pin_joint(edge, size=1.0, centre=centre)
    anchor = edge - joint.offset  # a hinge on the inner row
    assert joint.hold == "hinge"
    assert np.allclose(anchor[:, 0], 0.02) and np.allclose(anchor[:, 1:], edge[:, 1:])
    corner = grid([0.0, 0.02], [0.0, 0.05])  # 2 % x 5 %: a ball joint at the inner corner
    joint = pin_joint(corner, size=1.0, centre=centre)
    assert joint.hold == "ball joint" and np.allclose(corner - joint.offset, [0.02, 0, 0.05])
    middle = grid([0.48, 0.5, 0.52], [0.48, 0.5, 0.52])  # around the centre: a ball joint there
    assert np.allclose(middle - pin_joint(middle, size=1.0, centre=centre).offset, centre)
    patch = grid(np.linspace(0.4, 0.6, 5), np.linspace(0.4, 0.6, 5))
    joint = pin_joint(patch, size=1.0, centre=centre)  # 20 % wide: held as it is
    assert joint.hold == "springs" and np.allclose(joint.offset, 0.0)
    joint = pin_joint(patch, size=5.0, centre=centre)  # 4 % of a 5 m sheet
    assert joint.hold == "ball joint" and np.allclose(joint.offset, patch - centre)
    assert np.allclose(pin_joint(edge - centre, size=1.0).offset,
                       pin_joint(edge, 1.0, centre=centre).offset)
    z = np.linspace(0.0, 1.0, 21)  # an edge along a curve 0.18 deep, as a terrain's
    wavy = np.stack([np.zeros_like(z), 0.09 * np.cos(2 * np.pi * z), z], 1)
    joint = pin_joint(wavy, size=1.0, centre=centre)
    assert joint.hold == "hinge"
    assert np.allclose(np.ptp(wavy - joint.offset, axis=0)[:2], 0.0, atol=0.03)  # on a line
    deep = wavy * [1.0, 3.0, 1.0]  # 0.54 deep: no line holds it
    assert pin_joint(deep, size=1.0, centre=centre).hold == "springs"
    one = pin_joint(edge[:1], size=1.0)
    assert one.offset.shape == (1, 3) and not one.offset.any() and one.hold == "ball joint"
    assert pin_joint(edge[:0], size=1.0).offset.shape == (0, 3)


def test_unknown_weights():
    with pytest.raises(InputError, match="neurok-base"):
        resolve_weights("no-such-bundle")
