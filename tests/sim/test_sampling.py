"""Random conditions of dataset sequences (sheets held inside) and resuming a generation."""

from __future__ import annotations

import numpy as np
import pytest

from neurok_cli.data.format import Header, write_header
from neurok_cli.errors import UsageError
from neurok_cli.scenario.conditions import select_region
from neurok_cli.sim.generate import GenerateConfig, generate, plan, summarize
from neurok_cli.sim.sampling import sample_conditions


@pytest.mark.parametrize("share", [0.0, 0.5])
def test_sheets_are_held_by_their_edges_corners_or_a_patch_inside(share):
    u, w = np.meshgrid(np.linspace(0, 1, 41), np.linspace(0, 1, 41))
    sheet = np.stack([u.ravel(), np.zeros(u.size), w.ravel()], axis=1)  # flat, in x-z
    edge = (sheet[:, 0] < 0.1) | (sheet[:, 0] > 0.9) | (sheet[:, 2] < 0.1) | (sheet[:, 2] > 0.9)
    pinned, inside = 0, 0
    for i in range(400):
        c = sample_conditions("cloth", np.random.default_rng([5, i]), 1.0, "sheet", share)
        if not c.pins:
            assert c.ground  # a free sheet falls onto the ground
            continue
        pinned += 1
        held = np.zeros(len(sheet), bool)
        for region in c.pins:
            held |= select_region(region, sheet)
        assert held.any()
        if not held[edge].any():  # a patch inside: round a point of the middle half
            inside += 1
            centre = sheet[held].mean(axis=0)
            assert 0.2 < centre[0] < 0.8 and 0.2 < centre[2] < 0.8
            assert 0.02 < np.ptp(sheet[held][:, 0]) < 0.2
    assert 0.5 < pinned / 400 < 0.7
    assert abs(inside / pinned - share) < 0.1


def test_the_header_records_the_share_when_it_is_used(tmp_path):
    used = GenerateConfig(out=tmp_path, count=3, interior_pins=0.5)
    assert summarize(used, plan(used)).generator["interior_pins"] == 0.5
    plain = GenerateConfig(out=tmp_path, count=3)  # a header as it was before the option
    assert "interior_pins" not in summarize(plain, plan(plain)).generator
    with pytest.raises(UsageError, match=r"interior pins must be in \[0, 1\], got 1.5"):
        generate(GenerateConfig(out=tmp_path, count=3, interior_pins=1.5))


def test_a_folder_is_resumed_only_with_the_options_that_made_it(tmp_path):
    first = GenerateConfig(out=tmp_path, count=3, seed=7, interior_pins=0.5)
    write_header(tmp_path, summarize(first, plan(first)))
    for changed, message in ((dict(seed=8), "--seed 7, not 8"),
                             (dict(interior_pins=0.0), "--interior-pins 0.5, not 0.0"),
                             (dict(categories=("cloth",)),
                              "--categories soft,cloth,beam, not cloth")):
        cfg = GenerateConfig(**{**vars(first), **changed})
        with pytest.raises(UsageError, match=f"was made with {message}; resume it"):
            generate(cfg)
    # the same options resume it, and --count may grow (this shard has no job: none runs)
    header = generate(GenerateConfig(**{**vars(first), "count": 5, "shard": (5, 6)}))
    assert header.generator["count"] == 5 and header.generator["interior_pins"] == 0.5
    imported = tmp_path / "imported"
    imported.mkdir()
    write_header(imported, Header(generator={"command": "dataset import"}))
    with pytest.raises(UsageError, match="made by dataset import; generate into a new"):
        generate(GenerateConfig(out=imported, count=3))


def test_stiffness_by_sag_takes_the_same_draws():
    from neurok_cli.sim.sampling import SOLID_SAG, sample_material

    v = np.random.default_rng(0).normal(size=(50, 3))
    length = float(np.ptp(v, axis=0).max())
    for i in range(40):
        a, b = np.random.default_rng([3, i]), np.random.default_rng([3, i])
        plain = sample_material("soft", a, v)
        sag = sample_material("soft", b, v, by_sag=True)
        assert a.random() == b.random()  # the job's later draws are the same either way
        assert (sag.poisson, sag.density, sag.damping) == (plain.poisson, plain.density,
                                                           plain.damping)
        s = sag.density * 9.81 * length / sag.young
        assert SOLID_SAG[0] <= s <= SOLID_SAG[1]


def test_lattice_solids_change_only_the_compact_soft_bodies(tmp_path):
    from neurok_cli.sim.generate import job_inputs

    cage = GenerateConfig(out=tmp_path / "a", count=60, seed=2026)
    lat = GenerateConfig(out=tmp_path / "b", count=60, seed=2026, solids="lattice")
    seen = set()
    for job in plan(cage):
        a, b = job_inputs(job, cage), job_inputs(job, lat)
        assert np.array_equal(a[0].vertices, b[0].vertices) and a[2] == b[2]  # shape, scene
        if job.category != "soft":
            assert b[1:] == a[1:]  # cloth and beams are corpus-v1's
        elif job.family in ("sphere", "ellipsoid", "capsule", "blob"):
            assert b[3] == "lattice" and b[1].young != a[1].young
            seen.add("lattice")
        elif job.family in ("chair", "table", "mushroom"):
            assert b[1:] == a[1:]  # thin legs and stems keep the cage and its material
            seen.add("cage")
    assert seen == {"lattice", "cage"}
    assert summarize(lat, plan(lat)).generator["solids"] == "lattice"
    assert "solids" not in summarize(cage, plan(cage)).generator  # corpus-v1's header as it was
    with pytest.raises(UsageError, match="solids"):
        plan(GenerateConfig(out=tmp_path / "c", count=3, solids="foam"))
