"""Articulated objects in the data engine: rigid parts on limited, damped joints."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.data.format import load_sequence, sequence_files
from neurok_cli.errors import UsageError
from neurok_cli.model.strain import mesh_edges
from neurok_cli.sim import articulated as art
from neurok_cli.sim.generate import GenerateConfig, generate, plan

SECONDS, FPS = 1.5, 30.0


def _run(family: str, seed: int = 0, motion: art.Motion | None = None):
    rng = np.random.default_rng(seed)
    obj = art.make_articulated(family, rng)
    motion = art.sample_motion(obj, rng) if motion is None else motion
    return obj, motion, art.run_articulated(obj, motion, seconds=SECONDS, fps=FPS)


def _part_edges(faces: np.ndarray, owner: np.ndarray) -> np.ndarray:
    e = mesh_edges(faces)
    return e[owner[e[:, 0]] == owner[e[:, 1]]]


@pytest.mark.parametrize("family", art.FAMILIES)
def test_parts_stay_rigid_and_joints_within_their_limits(family):
    for seed in range(12):
        obj, _, run = _run(family, seed)
        assert run.rejected is None and np.isfinite(run.frames).all()
        e = _part_edges(run.faces, run.owner)
        length = np.linalg.norm(run.frames[:, e[:, 0]] - run.frames[:, e[:, 1]], axis=-1)
        assert np.abs(length / length[0] - 1).max() < 1e-6  # every part keeps its shape
        lo, hi = np.array([p.joint.limits for p in obj.parts if p.joint]).T
        # a limit is a stiff spring in the engine: a lid slammed shut goes past it a little
        assert (run.joints >= lo - 0.02).all() and (run.joints <= hi + 0.02).all()
        assert np.allclose(run.joints[0], obj.q0)
        assert run.frames[0, :, 1].min() > -1e-3  # a start folded down is lifted onto it
        assert run.frames[:, :, 1].min() > -0.01  # on the ground, not through it


def test_an_unheld_open_lid_falls_shut_about_its_hinge():
    obj, _, run = _run("chest", motion=art.Motion())
    assert np.degrees(obj.q0[0]) > 20 and abs(np.degrees(run.joints[-1, 0])) < 2.0
    # the lid turns about its hinge: its points on the hinge line stay where they were
    lid = run.owner == 1
    anchor = np.asarray(obj.parts[1].joint.anchor)
    rest = obj.mesh()[0][lid]
    on_line = np.abs(rest[:, 1:] - anchor[1:]).sum(axis=1) < 1e-9
    assert on_line.sum() >= 2
    moved = run.frames[:, lid][:, on_line]
    assert np.abs(moved - moved[0]).max() < 1e-3


def test_a_cabinet_door_keeps_its_angle_without_a_push_and_swings_with_one():
    still = _run("cabinet", motion=art.Motion())[2]
    assert np.abs(still.joints - still.joints[0]).max() < 1e-3  # gravity has no hold on it
    pushed = _run("cabinet", motion=art.Motion(joint_speeds=[2.0]))[2]
    assert pushed.joints[:, 0].max() > pushed.joints[0, 0] + 0.2


def test_the_same_seed_makes_the_same_motion():
    a, b = _run("lamp", 4)[2], _run("lamp", 4)[2]
    assert np.array_equal(a.frames, b.frames) and np.array_equal(a.joints, b.joints)


def test_unknown_family_and_a_second_base_are_refused():
    with pytest.raises(UsageError, match="unknown articulated family"):
        art.make_articulated("piano", np.random.default_rng(0))
    obj = art.make_articulated("chest", np.random.default_rng(0))
    obj.parts[1].parent = -1
    with pytest.raises(UsageError, match="exactly one base"):
        art.build_xml(obj, art.Motion())


def test_dataset_generate_makes_articulated_sequences_on_request(tmp_path):
    # the default corpus is unchanged: no articulated jobs unless asked for
    assert {j.category for j in plan(GenerateConfig(out=tmp_path, count=30))} == \
        {"soft", "cloth", "beam"}
    cfg = GenerateConfig(out=tmp_path / "d", count=24, seed=3, categories=("articulated",),
                         seconds=1.0)
    header = generate(cfg)
    assert sum(header.counts[s].get("articulated", 0) for s in header.counts) == 24
    seen = {"train": set(), "val": set(), "test": set()}
    for split in seen:
        for f in sequence_files(cfg.out, split):
            seq = load_sequence(f)
            meta = seq.meta
            seen[split].add(meta["family"])
            assert meta["category"] == "articulated" and meta["kind"] == "articulated"
            assert len(meta["vertex_part"]) == len(seq.rest_vertices)
            assert len(meta["joint_positions"]) == len(seq.frames) == 31
            assert [j["part"] for j in meta["joints"]] == meta["parts"][1:]
            assert all(j["kind"] in ("hinge", "slide") for j in meta["joints"])
    # the test split holds the families kept out of training, and only those
    assert seen["test"] and seen["test"] <= set(art.TEST_FAMILIES)
    assert not (seen["train"] | seen["val"]) & set(art.TEST_FAMILIES)
