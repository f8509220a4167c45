"""The plausibility measures on clips whose answer is known."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from neurok_cli.evaluate.plausibility import crumple, enclosed_volume, plausibility, welded_surface


def _sphere(n: int = 12):
    """A closed UV sphere of radius 1 (vertices, faces), with its seam split as loaders do."""
    th = np.linspace(0, np.pi, n + 1)
    ph = np.linspace(0, 2 * np.pi, 2 * n + 1)  # the seam column repeats the first
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = np.stack([np.sin(t) * np.cos(p), np.cos(t), np.sin(t) * np.sin(p)], -1).reshape(-1, 3)
    cols = 2 * n + 1
    faces = []
    for i in range(n):
        for j in range(2 * n):
            a, b, c, d = i * cols + j, i * cols + j + 1, (i + 1) * cols + j, (i + 1) * cols + j + 1
            faces += [[a, c, b], [b, c, d]]
    return v, np.array(faces)


def _sheet(n: int = 10):
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    v = np.stack([x, np.zeros_like(x), z], -1).reshape(-1, 3)
    f = [[i * n + j, i * n + j + 1, (i + 1) * n + j] for i in range(n - 1) for j in range(n - 1)]
    f += [[i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j] for i in range(n - 1)
          for j in range(n - 1)]
    return v, np.array(f)


def test_the_welded_sphere_is_closed_and_encloses_its_volume():
    v, f = _sphere(24)
    s = welded_surface(v, f)
    assert s.closed
    x = np.zeros((int(s.index.max()) + 1, 3))
    x[s.index] = v
    assert abs(enclosed_volume(x, s.faces)) == pytest.approx(4 / 3 * np.pi, rel=0.02)


def test_a_rigid_motion_neither_crumples_nor_strains_and_its_tilt_is_measured():
    v, f = _sphere()
    turn = Rotation.from_rotvec([0.0, 0.0, np.radians(40.0)]).as_matrix()
    frames = np.stack([v, v @ turn.T + [3.0, 0.5, 0.0]])
    p = plausibility(frames, f)
    assert p.crumple == pytest.approx(0.0, abs=1e-9)
    assert p.strain == pytest.approx(0.0, abs=1e-9)
    assert p.volume_min == pytest.approx(1.0) and p.volume_end == pytest.approx(1.0)
    assert p.tilt_deg == pytest.approx(40.0, abs=1e-6)
    assert p.travel_end == pytest.approx(3.0 / 2.0)


def test_shape_change_leaves_out_rigid_motion_and_reads_a_squash():
    v, f = _sphere()
    turn = Rotation.from_rotvec([0.2, 0.9, -0.4]).as_matrix()
    assert plausibility(np.stack([v, v @ turn.T + 2.0]), f).deform == pytest.approx(
        0.0, abs=1e-9)
    squash = v * [1.1, 0.8, 1.1]
    diagonal = float(np.linalg.norm(np.ptp(v, axis=0)))
    turned = np.stack([v, squash @ turn.T, v])
    p = plausibility(turned, f)  # the largest over frames: the squashed one, turned
    assert p.deform > 0.02
    assert p.deform * diagonal == pytest.approx(
        np.linalg.norm(squash - v, axis=1).mean(), rel=0.15)


def test_a_squash_loses_volume_and_bumps_crumple():
    v, f = _sphere()
    squash = v * [1.0, 0.5, 1.0]
    bumps = v * (1.0 + 0.05 * np.random.default_rng(0).standard_normal(len(v)))[:, None]
    p = plausibility(np.stack([v, squash, v]), f)
    assert p.volume_min == pytest.approx(0.5, rel=1e-6) and p.volume_end == pytest.approx(1.0)
    assert p.strain > 0.02  # averaged over the three frames, two of them at rest
    assert plausibility(np.stack([v, bumps]), f).crumple > 0.05
    assert plausibility(np.stack([v, v * 1.01]), f).crumple == pytest.approx(0.0, abs=1e-9)


def test_a_sheet_has_no_volume_and_bends_only_when_it_curves():
    v, f = _sheet()
    curved = v.copy()
    curved[:, 1] = 0.3 * (v[:, 0] - 0.5) ** 2
    card = v @ Rotation.from_rotvec([0.5, 0.0, 0.0]).as_matrix().T
    p_curved = plausibility(np.stack([v, curved]), f)
    p_card = plausibility(np.stack([v, card]), f)
    assert p_curved.volume_min is None
    assert p_card.bend == pytest.approx(0.0, abs=1e-9)
    assert p_curved.bend > 0.01


def test_crumple_per_frame_is_the_clips_measure_frame_by_frame():
    """A rigid turn has none; noise on the vertices has some, more the more noise; the mean
    over frames is what plausibility() reports for the clip (whose rest adds a zero)."""
    v, f = _sphere(16)
    rng = np.random.default_rng(0)
    turned = v @ Rotation.from_rotvec([0.3, 1.0, -0.2]).as_matrix().T
    weld = welded_surface(v, f).index
    noise = rng.normal(size=(int(weld.max()) + 1, 3))[weld]  # seams move together
    frames = np.stack([turned, v + 0.01 * noise, v + 0.03 * noise])
    per_frame = crumple(v, frames, f)
    assert per_frame[0] < 1e-9
    assert 0.0 < per_frame[1] < per_frame[2]
    clip = plausibility(np.concatenate([v[None], frames]), f)
    assert clip.crumple == pytest.approx(per_frame.sum() / 4, rel=1e-9)


def test_crumple_above_the_ground_leaves_out_the_edges_near_the_lowest_point():
    """Bumps on a sphere's bottom cap crumple it, and none of them is above a fifth of its
    height from the lowest point; bumps all over are seen either way."""
    v, f = _sphere(16)
    weld = welded_surface(v, f).index
    noise = np.random.default_rng(1).normal(size=(int(weld.max()) + 1, 3))[weld]
    cap = v + 0.03 * noise * (v[:, 1] < -0.8)[:, None]
    everywhere = v + 0.03 * noise
    frames = np.stack([cap, everywhere])
    overall, away = crumple(v, frames, f), crumple(v, frames, f, above=0.2)
    assert overall[0] > 0.01 and away[0] == pytest.approx(0.0, abs=1e-9)
    assert away[1] > 0.5 * overall[1] > 0.01
