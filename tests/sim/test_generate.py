"""Dataset generation: deterministic, resumable, sharded, with unseen test families."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neurok_cli.data.format import load_sequence, read_header, sequence_files
from neurok_cli.sim.generate import TEST_FAMILIES, GenerateConfig, generate, plan, replay, scene_of
from neurok_cli.sim.scene import CELL_DOFS


def _cfg(out: Path, **kw) -> GenerateConfig:
    base = dict(out=out, count=6, seed=5, seconds=0.3, fps=20.0)
    base.update(kw)
    return GenerateConfig(**base)


def test_plan_splits_shape_families():
    jobs = plan(_cfg(Path("unused"), count=400))
    for j in jobs:
        assert (j.family in TEST_FAMILIES[j.category]) == (j.split == "test")
    splits = {j.split for j in jobs}
    assert splits == {"train", "val", "test"}
    assert {j.category for j in jobs} == {"soft", "cloth", "beam"}


def test_wide_families_change_train_draws_only():
    """--families wide adds training shapes; the test split's jobs stay as they were, so a
    model trained on either corpus is measured on the same sequences."""
    from neurok_cli.sim.shapes import WIDE_FAMILIES

    base = plan(_cfg(Path("unused"), count=600))
    wide = plan(_cfg(Path("unused"), count=600, families="wide"))
    assert [j.split for j in base] == [j.split for j in wide]
    assert [j for j in base if j.split == "test"] == [j for j in wide if j.split == "test"]
    extra = {f for fams in WIDE_FAMILIES.values() for f in fams}
    drawn = {j.family for j in wide if j.split != "test"}
    assert extra <= drawn and not extra & {j.family for j in base}
    for j in wide:
        assert j.family in WIDE_FAMILIES[j.category] or j.family not in extra


def test_same_seed_same_arrays_and_resume(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    generate(_cfg(a))
    generate(_cfg(b, workers=2))
    files_a, files_b = sequence_files(a), sequence_files(b)
    assert [f.name for f in files_a] == [f.name for f in files_b] and len(files_a) == 6
    for fa, fb in zip(files_a, files_b):
        sa, sb = load_sequence(fa), load_sequence(fb)
        assert np.array_equal(sa.frames, sb.frames) and np.array_equal(sa.faces, sb.faces)
        assert sa.meta == sb.meta | {"sim_wall_s": sa.meta["sim_wall_s"]}
    # resume: a removed file is made again, identical; the others are not touched
    victim = files_a[2]
    before = victim.read_bytes()
    mtimes = {f: f.stat().st_mtime_ns for f in files_a if f != victim}
    victim.unlink()
    generate(_cfg(a))
    assert np.array_equal(load_sequence(victim).frames, np.load(files_b[2])["frames"])
    assert len(before) > 0
    assert all(f.stat().st_mtime_ns == t for f, t in mtimes.items())
    header = read_header(a)
    assert sum(sum(c.values()) for c in header.counts.values()) == 6
    assert header.engine["name"] == "mujoco"


def test_a_stored_sequence_replays_from_its_meta(tmp_path):
    # every category: the meta alone makes the engine give the stored frames again (up to
    # the start's float32 rounding, which a stiff, barely damped beam carries furthest:
    # ~1e-3 of its size); a 4x stiffer material gives frames farther off than that
    generate(_cfg(tmp_path, count=6, seconds=0.5))
    seen, compared = set(), set()
    for f in sequence_files(tmp_path):
        seq = load_sequence(f)
        seen.add(seq.meta["category"])
        size = float(np.ptp(seq.frames[0], axis=0).max())
        again = replay(seq, 0.5).frames
        assert again.shape == seq.frames.shape
        assert np.abs(again - seq.frames).max() < 2e-3 * size
        material, _ = scene_of(seq.meta)
        material.young *= 4.0
        moved = np.abs(seq.frames - seq.frames[0]).max()
        stiffer = replay(seq, 0.5, material=material).frames
        if moved > 2e-2 * size:  # a body that moved at all moves otherwise
            assert np.abs(stiffer - seq.frames).max() > 1e-2 * size
            compared.add(seq.meta["category"])
        if seq.meta["dof"] in CELL_DOFS:  # finer interpolation cells
            finer = tuple(2 * c for c in seq.meta["cells"])
            refined = replay(seq, 0.5, cells=finer).frames
            assert refined.shape == seq.frames.shape and np.isfinite(refined).all()
            if moved > 2e-2 * size:
                assert np.abs(refined - seq.frames).max() > 2e-3 * size
    assert seen == compared == {"soft", "cloth", "beam"}


def test_shards_partition_the_jobs(tmp_path):
    out = tmp_path / "s"
    generate(_cfg(out, count=4, shard=(0, 2)))
    assert {f.name[:6] for f in sequence_files(out)} == {"000000", "000002"}
    generate(_cfg(out, count=4, shard=(1, 2)))
    assert len(sequence_files(out)) == 4
    assert sum(sum(c.values()) for c in read_header(out).counts.values()) == 4


def test_splits_make_only_their_jobs_and_the_rest_can_follow(tmp_path):
    """--splits test makes the test sequences alone (to evaluate without the training
    set); a later run into the same folder adds the others, as the plan has them."""
    out = tmp_path / "t"
    jobs = plan(_cfg(out, count=12))
    generate(_cfg(out, count=12, splits=("test",)))
    made = {f.stem for f in sequence_files(out)}
    assert made and made == {j.name for j in jobs if j.split == "test"}
    generate(_cfg(out, count=12))
    assert {f.stem for f in sequence_files(out)} == {j.name for j in jobs}
    with pytest.raises(Exception, match="splits"):
        generate(_cfg(out, count=12, splits=("holdout",)))


def test_rejected_runs_are_counted_and_not_retried(tmp_path, monkeypatch):
    from neurok_cli.sim import engine

    calls = []

    def unstable(spec, **kw):
        calls.append(1)
        return engine.SimResult(frames=np.zeros((2, len(spec.vertices), 3)),
                                times=np.arange(2.0), kinetic=np.zeros(2),
                                potential=np.zeros(2), work=np.zeros(2), rejected="nan")

    monkeypatch.setattr("neurok_cli.sim.generate.run", unstable)
    out = tmp_path / "r"
    header = generate(_cfg(out, count=3))
    assert header.rejected == {"nan": 3}
    assert sequence_files(out) == []
    generate(_cfg(out, count=3))
    assert len(calls) == 3  # resumed runs skip recorded rejections


def test_bad_options(tmp_path):
    from neurok_cli.errors import UsageError

    with pytest.raises(UsageError, match="category"):
        plan(_cfg(tmp_path, categories=("liquid",)))
    with pytest.raises(UsageError, match="families"):
        plan(_cfg(tmp_path, families="all"))
    with pytest.raises(UsageError, match="shard"):
        generate(_cfg(tmp_path, shard=(2, 2)))
