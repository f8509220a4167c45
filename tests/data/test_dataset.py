"""Training pairs: determinism, rigid-motion removal, canonical scaling, category balance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurok_cli.data.dataset import PairDataset, SamplingConfig
from neurok_cli.data.format import Header, save_sequence, split_dir, write_header
from neurok_cli.errors import InputError, UsageError
from tests.train.synth import make_dataset, make_sequence

CFG = SamplingConfig(n_points=64, n_query=16, seed=3)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("ds"), train=2, val=1, frames=6)


def test_batch_shapes_and_metadata(dataset):
    ds = PairDataset(dataset, "train", CFG)
    assert len(ds) == 6 and ds.categories == ["beam", "cloth", "soft"]
    batch = ds.sample_batch(5, step=0)
    for key in ("points", "normals", "delta_points"):
        assert batch[key].shape == (5, 64, 3) and batch[key].dtype == torch.float32
    assert batch["query"].shape == (5, 16, 3) and batch["delta_query"].shape == (5, 16, 3)
    assert batch["seq"].shape == (5,) and batch["scale"].shape == (5,)
    assert torch.allclose(batch["normals"].norm(dim=-1), torch.ones(5, 64), atol=1e-5)
    assert ds.summary()["categories"] == {"beam": 2, "cloth": 2, "soft": 2}


def test_sampling_is_deterministic_and_rank_sharded(dataset):
    a = PairDataset(dataset, "train", CFG).sample_batch(4, step=7)
    b = PairDataset(dataset, "train", CFG, cache=False).sample_batch(4, step=7)
    c = PairDataset(dataset, "train", CFG).sample_batch(4, step=8)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["points"], c["points"])
    # two ranks draw the even and odd items of the same global batch
    ds = PairDataset(dataset, "train", CFG)
    r0 = ds.sample_batch(4, step=7, rank=0, world_size=2)
    r1 = ds.sample_batch(4, step=7, rank=1, world_size=2)
    assert torch.equal(r0["points"], a["points"][0::2])
    assert torch.equal(r1["delta_query"], a["delta_query"][1::2])
    with pytest.raises(UsageError, match="multiple"):
        ds.sample_batch(3, step=0, world_size=2)


def test_rigid_motion_is_removed(tmp_path):
    make_dataset(tmp_path, train=1, val=0, deformed=False)
    ds = PairDataset(tmp_path, "train", SamplingConfig(n_points=128, n_query=32,
                                                       rest_frame_any=0.5))
    batch = ds.sample_batch(16, step=0)
    assert (batch["frame_a"] != batch["frame_b"]).all()
    assert batch["delta_points"].abs().max() < 1e-5
    assert batch["delta_query"].abs().max() < 1e-5


def test_deformation_is_kept(dataset):
    ds = PairDataset(dataset, "train", SamplingConfig(n_points=32, n_query=8, rotate_up=False,
                                                      scale_range=(1, 1), rest_frame_any=0.0))
    batch = ds.sample_batch(12, step=1)
    assert torch.all(batch["frame_a"] == 0) and torch.all(batch["frame_b"] > 0)
    # every pair deforms: each sequence bends/squashes/twists by >= 5 % of its size by frame 1
    assert (batch["delta_query"].norm(dim=-1).amax(dim=1) > 0.005).all()
    assert batch["delta_query"].norm(dim=-1).max() > 0.05


def test_surface_targets_use_the_same_barycentric_points(tmp_path):
    # the "soft" squash is a linear map, and Kabsch keeps it so for a centred symmetric ball:
    # displacements at barycentric samples must then be exactly affine in the sample positions
    make_dataset(tmp_path, train=1, val=0, categories=("soft",))
    ds = PairDataset(tmp_path, "train", SamplingConfig(n_points=200, n_query=20, seed=1))
    for k in range(3):
        it = ds.item(0, np.random.default_rng(k))
        for pos, delta in ((it["points"], it["delta_points"]), (it["query"], it["delta_query"])):
            x = np.c_[pos, np.ones(len(pos))].astype(np.float64)
            coef, *_ = np.linalg.lstsq(x, delta, rcond=None)
            assert np.abs(x @ coef - delta).max() < 1e-5
            assert np.abs(delta).max() > 0.01


def test_canonical_scale_and_augmentation(dataset):
    plain = SamplingConfig(n_points=256, n_query=8, rotate_up=False, scale_range=(1, 1),
                           rest_frame_any=0.0)
    ds = PairDataset(dataset, "train", plain)
    seq = ds.sequence(0)
    rng = np.random.default_rng(0)
    item = ds.item(0, rng)
    # frame 0 (metres) times ``scale`` has largest extent 1, and samples stay in [-0.5, 0.5]
    extent = np.ptp(seq.frames[0], axis=0).max()
    assert item["scale"] == pytest.approx(1.0 / extent, rel=1e-5)
    assert np.abs(item["points"]).max() <= 0.5 + 1e-5
    assert np.ptp(item["points"], axis=0).max() == pytest.approx(1.0, abs=0.1)
    # augmentation: scale factor within the range, rotation about +Y keeps heights
    aug = SamplingConfig(n_points=256, n_query=8, rotate_up=True, scale_range=(2, 2),
                         rest_frame_any=0.0)
    a = ds.item(0, np.random.default_rng(5), cfg=plain)
    b = ds.item(0, np.random.default_rng(5), cfg=aug)
    assert b["scale"] == pytest.approx(2 * a["scale"])
    assert np.allclose(b["points"][:, 1], 2 * a["points"][:, 1], atol=1e-5)
    assert np.allclose(np.linalg.norm(b["points"][:, [0, 2]], axis=1),
                       2 * np.linalg.norm(a["points"][:, [0, 2]], axis=1), atol=1e-5)


def test_categories_are_balanced(tmp_path):
    # 5 cloth sequences and 1 soft one: each category still gets half the items
    for i in range(5):
        save_sequence(make_sequence("cloth", 4), split_dir(tmp_path, "train") / f"c{i}.npz")
    save_sequence(make_sequence("soft", 4), split_dir(tmp_path, "train") / "s.npz")
    write_header(tmp_path, Header())
    ds = PairDataset(tmp_path, "train", SamplingConfig(n_points=4, n_query=4))
    cats = torch.cat([ds.sample_batch(50, step=s)["category"] for s in range(4)])
    assert (cats == ds.categories.index("soft")).float().mean() == pytest.approx(0.5, abs=0.1)


def test_fixed_pairs_repeat(dataset):
    ds = PairDataset(dataset, "val", CFG)
    a, b = ds.fixed_pairs(3), ds.fixed_pairs(3)
    assert all(np.array_equal(x[k], y[k]) for x, y in zip(a, b) for k in x)
    assert torch.equal(ds[1]["points"], ds[1]["points"])


def test_bad_input(tmp_path, dataset):
    with pytest.raises(InputError, match="no such dataset"):
        PairDataset(tmp_path / "nope", "train", CFG)
    with pytest.raises(InputError, match="no sequences"):
        PairDataset(dataset, "test", CFG)
    with pytest.raises(UsageError, match="split"):
        PairDataset(dataset, "bogus", CFG)
    with pytest.raises(UsageError, match="scale_range"):
        SamplingConfig(scale_range=(2.0, 1.0))


def test_basis_rows_span_the_objects_own_handles(dataset):
    """With ``basis``, an item carries its query vertices' rows of the object's own basis
    (padded): any affine displacement of them lies in that span, and the projection of
    the decoded field onto it (the model's loss) keeps such a field exactly."""
    from neurok_cli.data.dataset import BASIS_COLUMNS
    from neurok_cli.model.neurok import into_basis
    from neurok_cli.train.loop import _own_weights

    with pytest.raises(UsageError, match="weights"):
        PairDataset(dataset, "train", SamplingConfig(basis=True))
    cfg = SamplingConfig(n_points=64, n_query=48, seed=3, basis=True)
    batch = PairDataset(dataset, "train", cfg, weights=_own_weights).sample_batch(3, step=0)
    rows = batch["basis"].double()
    assert rows.shape == (3, 48, BASIS_COLUMNS)
    a = torch.tensor([[0.1, -0.2, 0.05], [0.3, 0.0, 0.1], [-0.1, 0.2, -0.05]], dtype=rows.dtype)
    affine = batch["query"].double() @ a.T + torch.tensor([0.5, -1.0, 2.0], dtype=rows.dtype)
    assert torch.allclose(into_basis(rows, affine), affine, atol=1e-6)
    noise = torch.randn(3, 48, 3, dtype=rows.dtype, generator=torch.Generator().manual_seed(0))
    projected = into_basis(rows, noise)
    assert (projected - noise).norm() > 0.1 * noise.norm()  # not everything is in it ...
    again = into_basis(rows, projected)  # ... and what is in it stays (up to the ridge)
    assert (again - projected).norm() < 1e-3 * projected.norm()
