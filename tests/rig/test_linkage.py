"""Lagrangian motion in joint coordinates (rig/linkage.py) against the engine and the laws it
must keep."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.rig.animate import throw_speeds
from neurok_cli.rig.articulation import infer_rig
from neurok_cli.rig.linkage import Linkage, integrate, mass_points, mass_properties
from neurok_cli.scenario.joints import RigBody
from neurok_cli.sim.articulated import Motion, make_articulated, run_articulated, run_rig


def _linkage(family: str, seed: int = 0, **kw):
    obj = make_articulated(family, np.random.default_rng(seed))
    _, faces, owner = obj.mesh()
    start = run_articulated(obj, Motion(), seconds=0.0, fps=30).frames[0]
    rig = infer_rig(start, faces, owner, [p.name for p in obj.parts])
    return obj, Linkage(rig, start, faces, density=obj.density, **kw), faces


def test_six_points_carry_a_parts_mass_centre_and_second_moment():
    import trimesh

    box = trimesh.creation.box(extents=(0.4, 0.1, 0.2))
    from scipy.spatial.transform import Rotation

    R = Rotation.random(random_state=1).as_matrix()
    v = np.asarray(box.vertices) @ R.T + [0.3, 0.2, -0.1]
    m, c, S = mass_properties(v, np.asarray(box.faces), 500.0)
    assert m == pytest.approx(0.4 * 0.1 * 0.2 * 500)
    pts = mass_points(m, c, S)
    assert np.allclose(pts.mean(0), c)
    assert np.allclose((m / 6) * (pts - c).T @ (pts - c), S)
    assert np.allclose(S, R @ np.diag(m * np.array([0.4, 0.1, 0.2]) ** 2 / 12) @ R.T)


def test_an_undamped_lid_swinging_free_keeps_its_energy():
    """No damping, limits out of reach, no ground: kinetic + potential stays put."""
    _, link, _ = _linkage("laptop", 0, ground=False)
    link.coords[0].damping = 0.0
    link.coords[0].limits = (-1e9, 1e9)
    run = integrate(link, np.zeros(1), np.array([3.0]), seconds=1.0, fps=30)
    total = run.kinetic + run.potential
    assert np.ptp(run.q) > 1.0  # it swung
    assert np.abs(total - total[0]).max() < 1e-5 * run.kinetic.max()


@pytest.mark.parametrize("family,speed", [("chest", 3.0), ("chest", -1.0), ("cabinet", 2.0),
                                          ("laptop", 2.0)])
def test_joint_angles_follow_the_engine_within_five_degrees(family, speed):
    """The same rig in the engine (rigid bodies on hinges, the base free on the ground)."""
    obj, link, faces = _linkage(family)
    rig = link.rig
    run = integrate(link, np.zeros(1), np.array([speed]), seconds=2.0, fps=30)
    bodies = []
    for p, name in enumerate(rig.names):
        sel = np.flatnonzero(rig.owner == p)
        remap = np.full(len(rig.owner), -1)
        remap[sel] = np.arange(len(sel))
        bodies.append(RigBody(name, link.rest[sel], remap[faces[(rig.owner[faces] == p).all(1)]],
                              rig.parent[p], link.joints()[0] if p else None))
    eng = run_rig(bodies, obj.density, Motion(joint_speeds=[speed]), seconds=2.0, fps=30)
    assert eng.mass == pytest.approx(link.mass.sum(), rel=1e-5)
    assert np.degrees(np.abs(run.q[:, 0] - eng.joints[:, 0]).max()) < 5.0


def test_a_limit_stops_a_part_dead_and_holds_it_there():
    _, link, _ = _linkage("chest")
    lo = link.coords[0].limits[0]
    run = integrate(link, np.zeros(1), np.array([-4.0]), seconds=1.0, fps=30)
    hit = np.argmax(run.q[:, 0] <= lo + 1e-12)
    assert hit > 0 and (run.q[:, 0] >= lo - 1e-12).all()  # never past it
    assert np.abs(run.q[hit:, 0] - lo).max() < 1e-9 and np.abs(run.qd[hit:, 0]).max() < 1e-9


def test_a_dropped_object_lands_and_stays_on_the_ground():
    _, link, _ = _linkage("cabinet", base="drop")
    run = integrate(link, np.array([0.3, 0.0]), np.zeros(2), seconds=1.0, fps=30)
    frames = link.frames(run)
    low = frames[:, :, 1].min(axis=1)
    assert low[0] == pytest.approx(0.3, abs=1e-9) and low[-1] == pytest.approx(0.0, abs=1e-3)
    assert low.min() > -1e-3
    # the parts keep their shape: a rigid motion of each
    for p in range(len(link.rig.names)):
        a, b = frames[0][link.rig.owner == p], frames[-1][link.rig.owner == p]
        assert np.allclose(np.linalg.norm(a - a[0], axis=1), np.linalg.norm(b - b[0], axis=1))


def test_the_presets_throw_open_shut_and_part_way():
    _, link, _ = _linkage("cabinet")
    lo, hi = link.coords[0].limits
    speeds = {p: throw_speeds(link, p)[0] for p in ("open", "close", "swing", "free")}
    assert speeds["open"] > speeds["swing"] > 0 > speeds["close"] and speeds["free"] == 0
    ends = {p: integrate(link, np.zeros(1), np.array([v]), seconds=2.0, fps=30).q[-1, 0]
            for p, v in speeds.items()}
    assert ends["open"] == pytest.approx(hi, abs=1e-6)
    assert ends["close"] == pytest.approx(lo, abs=1e-6)
    assert 0.2 * hi < ends["swing"] < 0.8 * hi
    # the lid of a chest thrown to swing rises, then gravity shuts it
    _, chest, _ = _linkage("chest")
    run = integrate(chest, np.zeros(1), throw_speeds(chest, "swing"), seconds=2.0, fps=30)
    assert run.q[:, 0].max() > 0.02 and run.q[-1, 0] == pytest.approx(
        chest.coords[0].limits[0], abs=1e-6)


def test_a_flat_part_has_the_inertia_of_its_sheet():
    """A surface bounding no solid (a flag) weighs 1 mm of its material per area, spread as
    its area is: a square's second moment is m / 12 along each of its sides."""
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1.0]])
    f = np.array([[0, 1, 2], [0, 2, 3]])
    m, c, S = mass_properties(v, f, 600.0)
    assert m == pytest.approx(0.6) and np.allclose(c, (0.5, 0, 0.5))
    assert np.allclose(S / m, np.diag([1 / 12, 0, 1 / 12]), atol=1e-9)
