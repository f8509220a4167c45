"""Rigs read from assets (rig/articulation.py): parts, hinges and sliders where parts touch,
joints given by hand."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.errors import UsageError
from neurok_cli.rig.articulation import connected_pieces, infer_rig, parse_joint
from neurok_cli.sim.articulated import Motion, make_articulated, run_articulated


def _posed(family: str, seed: int):
    """A generated object in its start pose (joints at q0), with its true joints."""
    obj = make_articulated(family, np.random.default_rng(seed))
    _, faces, owner = obj.mesh()
    start = run_articulated(obj, Motion(), seconds=0.0, fps=30).frames[0]
    return obj, start, faces, owner


@pytest.mark.parametrize("family,seed", [("chest", s) for s in range(3)]
                         + [("cabinet", s) for s in range(3)]
                         + [("laptop", s) for s in range(2)])
def test_a_hinge_is_found_where_a_part_touches_its_parent_along_a_line(family, seed):
    obj, start, faces, owner = _posed(family, seed)
    rig = infer_rig(start, faces, owner, [p.name for p in obj.parts])
    assert rig.names == [p.name for p in obj.parts] and rig.parent == [-1, 0]
    true, found = obj.layout()[0], rig.joints[1]
    assert found.kind == "hinge" and rig.found[1] == "touches along a line"
    # the design's axis is fixed to the parent, which has not turned: compare directly
    assert abs(np.dot(found.axis, true["axis"])) > np.cos(np.radians(1.5))
    # the hinge line passes within 1 % of the object's size of the true one
    size = np.linalg.norm(np.ptp(start, axis=0))
    lift = start[owner == 0].min(axis=0)[1] - 0.0  # the start stands on the ground
    anchor = np.asarray(true["anchor"]) + [0.0, lift, 0.0]
    d = np.asarray(found.anchor) - anchor
    assert np.linalg.norm(d - np.dot(d, found.axis) * np.asarray(found.axis)) < 0.01 * size
    # shut is where the part meets its parent again: the true closing, to within 6 degrees
    shut = true["q0"] - true["limits"][0]
    assert -found.limits[0] == pytest.approx(shut, abs=np.radians(6))
    assert -found.limits[0] <= shut + 1e-9  # never past it
    assert found.limits[1] > 0  # and it opens


def test_drawers_sticking_out_slide_along_their_depth_and_closed_ones_are_one_with_it():
    obj, start, faces, owner = _posed("drawers", 0)  # two drawers out, the third shut
    rig = infer_rig(start, faces, owner, [p.name for p in obj.parts])
    q0 = {j["part"]: j["q0"] for j in obj.layout()}
    assert rig.names == ["carcass", "drawer1", "drawer2"] and q0["drawer3"] < 0.005
    assert rig.merged == {"drawer3": ("carcass", "touches over a patch")}
    for p in (1, 2):
        j = rig.joints[p]
        assert j.kind == "slide" and np.allclose(j.axis, (0.0, 0.0, 1.0))
        # pushed in as far as it is out (to the sampling's few millimetres)
        assert -j.limits[0] == pytest.approx(q0[rig.names[p]], abs=0.005)


def test_one_piece_has_no_joints_and_loose_pieces_ride_on_the_nearest():
    import trimesh

    a = trimesh.creation.box(extents=(1, 1, 1))
    b = trimesh.creation.box(extents=(0.2, 0.2, 0.2))
    v = np.concatenate([a.vertices + [0, 0.5, 0], b.vertices + [0, 1.5, 0]])
    f = np.concatenate([a.faces, b.faces + len(a.vertices)])
    piece = connected_pieces(v, f)
    assert sorted(np.bincount(piece)) == [8, 8]
    rig = infer_rig(v, f, piece, ["a", "b"])
    assert rig.names == ["a"] and not rig.jointed
    assert rig.merged == {"b": ("a", "touches nothing")}


def test_a_joint_given_by_hand_keeps_its_direction_and_point():
    obj, start, faces, owner = _posed("chest", 0)
    names = [p.name for p in obj.parts]
    found = infer_rig(start, faces, owner, names).joints[1]
    back = parse_joint("lid:hinge:" + ",".join(str(-x) for x in found.axis) + "@"
                       + ",".join(str(x) for x in found.anchor))
    given = infer_rig(start, faces, owner, names, [back]).joints[1]
    assert np.allclose(given.axis, -np.asarray(found.axis))  # the way it was told opens
    assert given.limits == pytest.approx((-found.limits[1], -found.limits[0]), abs=0.04)
    rig = infer_rig(start, faces, owner, names, [parse_joint("lid:slide:0,1,0")])
    assert rig.joints[1].kind == "slide" and rig.found[1] == "--joint"


@pytest.mark.parametrize("text,needle", [
    ("lid", "expected PART:hinge"), ("lid:turn:1,0,0", "must be hinge or slide"),
    ("lid:hinge:1,0", "not three numbers"), ("lid:hinge:0,0,0", "must not be zero"),
    ("lid:slide:1,0,0@0,0,0", "takes no point"), ("lid:hinge:1,0,0@a,b,c", "not three")])
def test_bad_joints_are_refused_in_words(text, needle):
    with pytest.raises(UsageError, match=needle):
        parse_joint(text)


def test_a_joint_for_a_part_that_is_not_there_names_the_parts():
    obj, start, faces, owner = _posed("chest", 0)
    with pytest.raises(UsageError, match="no part named 'door'.*'box', 'lid'"):
        infer_rig(start, faces, owner, [p.name for p in obj.parts],
                  [parse_joint("door:hinge:0,1,0")])
