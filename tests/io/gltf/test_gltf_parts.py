"""A glTF's own node animation and ours together: the milk truck's spinning wheels ride on its
body (gltf_parts.py), measured as the issue measured them, with every animation playing."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated, write_animated
from neurok_cli.io.gltf.anim import Sampler, first_of_ours
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.gltf.parts import find_riders, rigid_fits
from neurok_cli.io.gltf.scene import world_matrices
from neurok_cli.io.mesh import load_mesh
from tests.conftest import assert_valid_gltf, asset_path

WHEEL_NODES = (2, 4)  # CesiumMilkTruck: each wheel node spins below its axle's node


def _kabsch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ca, cb = a.mean(axis=0), b.mean(axis=0)
    u, _, vt = np.linalg.svd((a - ca).T @ (b - cb))
    d = np.sign(np.linalg.det(u @ vt))
    r = (u @ np.diag([1.0, 1.0, d]) @ vt).T
    return r, cb - r @ ca


def wheel_offsets(path, times: np.ndarray) -> dict[int, np.ndarray]:
    """Per wheel node, (T,) distance of the wheel's centre from where it rides on the body,
    over the rest's bounding-box diagonal, with all of the file's animations applied: the
    body vertices within 1.5 wheel radii of the wheel's rest centre are fitted rigidly from
    rest to each time, and carry the rest centre with them."""
    scene = read_animated(path, times=times)
    parts = scene.parts
    rest = np.concatenate([p.vertices for p in parts])
    diag = np.linalg.norm(np.ptp(rest, axis=0))
    body = [i for i, p in enumerate(parts) if p.node not in WHEEL_NODES]
    body_rest = np.concatenate([parts[i].vertices for i in body])
    body_now = np.concatenate([scene.positions[i] for i in body], axis=1)
    out = {}
    for i, p in enumerate(parts):
        if p.node not in WHEEL_NODES:
            continue
        c0 = p.vertices.mean(axis=0)
        radius = np.linalg.norm(p.vertices - c0, axis=1).max()
        near = np.linalg.norm(body_rest - c0, axis=1) < 1.5 * radius
        centre = scene.positions[i].mean(axis=1)
        off = []
        for t in range(len(times)):
            r, tr = _kabsch(body_rest[near], body_now[t, near])
            off.append(np.linalg.norm(centre[t] - (r @ c0 + tr)) / diag)
        out[p.node] = np.array(off)
    return out


def _dropped(vertices: np.ndarray, frames: int) -> np.ndarray:
    """(T, N, 3) a synthetic drop: down by the truck's height, a 25 degree roll and a squash
    to 80 % of the height at the end, all growing over time."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    out = []
    for s in np.linspace(0.0, 1.0, frames):
        v = vertices.copy()
        v[:, 1] = lo[1] + (v[:, 1] - lo[1]) * (1.0 - 0.2 * s)
        v = v @ Rotation.from_euler("x", 25 * s, degrees=True).as_matrix().T
        out.append(v - np.array([0.0, (hi - lo)[1] * s, 0.0]))
    return np.stack(out)


def test_the_input_truck_keeps_its_wheels_on():
    """The measure itself: the file's own spin moves no wheel centre off the body."""
    offsets = wheel_offsets(asset_path("truck"), np.linspace(0.0, 1.25, 11))
    assert max(o.max() for o in offsets.values()) < 0.003


def test_wheels_ride_on_the_body_with_every_animation_playing(tmp_path):
    asset = load_mesh(asset_path("truck"))
    riders = find_riders(asset)
    assert sorted(r.top for r in riders) == list(WHEEL_NODES)
    motion = _dropped(asset.vertices, 49)  # 2 s at 24 fps: longer than the wheels' 1.25 s
    out = tmp_path / "truck.glb"
    write_animated(asset, [motion], out, fps=24, names=["neurok_drop"])
    times = np.linspace(0.0, 2.0, 17)
    offsets = wheel_offsets(out, times)
    assert max(o.max() for o in offsets.values()) < 0.02
    # not a still truck: the wheels fell with the body, by about its height
    scene = read_animated(out, times=times[[0, -1]])
    for i, p in enumerate(scene.parts):
        if p.node in WHEEL_NODES:
            fell = scene.positions[i][0].mean(axis=0) - scene.positions[i][1].mean(axis=0)
            assert fell[1] > 0.5 * np.ptp(asset.vertices[:, 1])
    assert_valid_gltf(out)


def test_the_first_animation_is_ours_with_the_files_own_looped(tmp_path):
    asset = load_mesh(asset_path("truck"))
    out = tmp_path / "truck.glb"
    write_animated(asset, [_dropped(asset.vertices, 49)], out, fps=24, names=["neurok_drop"])
    doc, src = load_document(out), load_document(asset_path("truck"))
    anims = doc.gltf.animations
    assert first_of_ours(doc) == 0 and anims[0].name == "neurok_drop"
    kept = anims[1]  # the file's own, as it was
    assert kept.channels == src.gltf.animations[0].channels
    for a, b in zip(kept.samplers, src.gltf.animations[0].samplers):
        assert np.array_equal(doc.accessor(a.output), src.accessor(b.output))
    # ours spins the wheels for its whole 2 s, as a viewer loops the file's 1.25 s
    spin = {c.target.node: Sampler(doc, anims[0].samplers[c.sampler], "rotation")
            for c in anims[0].channels if c.target.path == "rotation"
            and c.target.node in WHEEL_NODES}
    theirs = Sampler(src, src.gltf.animations[0].samplers[0], "rotation")
    for t in (0.3, 0.9):
        q_ours, q_file = spin[4](1.25 + t), theirs(t)
        assert abs(abs(np.dot(q_ours, q_file)) - 1.0) < 1e-6


def test_the_first_animation_shows_the_deformation(tmp_path):
    asset = load_mesh(asset_path("truck"))
    motion = _dropped(asset.vertices, 25)
    out = tmp_path / "truck.glb"
    write_animated(asset, [motion], out, fps=24, names=["neurok_drop"])
    body = [i for i, p in enumerate(asset.parts) if p.node not in WHEEL_NODES]
    scene = read_animated(out, times=np.array([1.0]), animations=[0])
    rest = np.concatenate([asset.parts[i].vertices for i in body])
    now = np.concatenate([scene.positions[i][0] for i in body])
    r, tr = _kabsch(rest, now)  # what no rigid motion explains: the squash
    squash = np.abs(now - (rest @ r.T + tr)).max()
    assert squash > 0.05 * np.ptp(rest[:, 1])


def test_rigid_fits_recover_a_rigid_motion():
    rng = np.random.default_rng(0)
    rest = rng.normal(size=(40, 3))
    rot = Rotation.random(5, random_state=1).as_matrix()
    shift = rng.normal(size=(5, 3))
    moved = np.einsum("tij,kj->tki", rot, rest) + shift[:, None]
    m = rigid_fits(rest, moved, rng.uniform(0.1, 1.0, 40))
    np.testing.assert_allclose(m[:, :3, :3], rot, atol=1e-10)
    np.testing.assert_allclose(m[:, :3, 3], shift, atol=1e-10)


def test_riders_hang_below_their_inserted_node(tmp_path):
    """The file's nodes keep their indices; the world matrix of a wheel at rest is the
    file's, so a still frame of the output shows the truck as the file does."""
    asset = load_mesh(asset_path("truck"))
    out = tmp_path / "truck.glb"
    write_animated(asset, [np.repeat(asset.vertices[None], 3, axis=0)], out, fps=24)
    before, after = world_matrices(load_document(asset_path("truck"))), \
        world_matrices(load_document(out))
    for node in (0, 1, 2, 3, 4):
        np.testing.assert_allclose(after[node], before[node], atol=1e-6)


@pytest.mark.slow
def test_the_animated_milk_truck_keeps_its_wheels(tmp_path):
    """`neurok animate CesiumMilkTruck.glb`: the issue's acceptance, on the real motion."""
    from neurok_cli.deform.animate import AnimateConfig, animate

    out = tmp_path / "truck.glb"
    animate(AnimateConfig(input=asset_path("truck"), output=out, seconds=1.5))
    offsets = wheel_offsets(out, np.linspace(0.0, 1.5, 19))
    assert max(o.max() for o in offsets.values()) < 0.02
    doc = load_document(out)
    assert first_of_ours(doc) == 0
    assert any(c.target.path == "weights" for c in doc.gltf.animations[0].channels)
    assert_valid_gltf(out)


def test_preview_of_our_truck_names_no_rival_animation(tmp_path):
    """Our first animation already plays the file's wheel spin: preview shows it without a
    warning that the file's own animation was left out; rival motions of ours still warn."""
    from neurok_cli.render.preview import PreviewConfig, _load_motion
    from tests.conftest import asset_path

    truck = asset_path("truck")
    out = tmp_path / "truck.glb"
    made = CliRunner().invoke(app, ["animate", str(truck), "-o", str(out), "--seconds", "0.3"])
    assert made.exit_code == 0, made.output
    *_, warnings = _load_motion(PreviewConfig(input=out, output=tmp_path / "t.png"))
    assert not any("drive the same parts" in w for w in warnings), warnings
    two = tmp_path / "two.glb"
    made = CliRunner().invoke(app, ["animate", str(truck), "-o", str(two), "--seconds", "0.3",
                                    "--samples", "2"])
    assert made.exit_code == 0, made.output
    *_, warnings = _load_motion(PreviewConfig(input=two, output=tmp_path / "t.png"))
    assert any("drive the same parts" in w for w in warnings), warnings
