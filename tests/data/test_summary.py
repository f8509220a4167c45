"""Dataset summaries: counts, sizes, rates, materials, families, header, invalid files."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from neurok_cli.data.format import Header, Sequence, save_sequence, split_dir, write_header
from neurok_cli.data.summary import summarize, summary_tables
from neurok_cli.errors import InputError


def _seq(n: int, t: int, fps: float, **meta) -> Sequence:
    rest = np.random.default_rng(n * 100 + t).standard_normal((n, 3)).astype(np.float32)
    faces = np.array([[0, 1, 2], [1, 2, 3]], np.int32)
    frames = np.repeat(rest[None], t, axis=0)
    return Sequence(rest_vertices=rest, faces=faces, frames=frames, fps=fps, meta=meta)


def _material(young, poisson=0.3, density=1000.0, damping=0.01):
    return {"young": young, "poisson": poisson, "density": density, "damping": damping}


@pytest.fixture
def dataset(tmp_path):
    """Four cloth and soft sequences over three splits, with a generation header."""
    root = tmp_path / "ds"
    root.mkdir()
    specs = [
        ("train", "c0", _seq(4, 10, 30, category="cloth", family="flag",
                              material=_material(1e5))),
        ("train", "s0", _seq(6, 20, 30, category="soft", shape={"family": "blob"},
                              material=_material(5e4, 0.45, 1200.0, 0.1))),
        ("val", "c1", _seq(8, 30, 60, category="cloth", family="flag",
                            material=_material(2e5, 0.2))),
        ("test", "s1", _seq(5, 11, 30, category="soft", family="torus")),
    ]
    for split, name, seq in specs:
        save_sequence(seq, split_dir(root, split) / f"{name}.npz")
    write_header(root, Header(generator={"command": "dataset generate", "seed": 3},
                              engine={"name": "mujoco", "version": "4.0.0"},
                              counts={"train": {"cloth": 1, "soft": 1}, "val": {"cloth": 1},
                                      "test": {"soft": 1}},
                              rejected={"exploded": 2, "left the box": 1}))
    return root


@pytest.mark.parametrize("validate", [True, False])
def test_counts_sizes_materials_families(dataset, validate):
    s = summarize(dataset, validate=validate)
    assert s["sequences"] == 4 and s["invalid"] == [] and s["counts_match_header"]
    assert s["counts"] == {"train": {"cloth": 1, "soft": 1}, "val": {"cloth": 1},
                           "test": {"soft": 1}}
    assert s["frames"] == {"min": 10, "mean": pytest.approx(17.75), "max": 30}
    assert s["vertices"] == {"min": 4, "mean": pytest.approx(5.75), "max": 8}
    assert s["fps"] == {"30": 3, "60": 1}
    assert s["seconds"]["max"] == pytest.approx(19 / 30)  # first to last frame
    assert s["total_seconds"] == pytest.approx(9 / 30 + 19 / 30 + 29 / 60 + 10 / 30)
    assert s["material"]["young"] == {"min": 5e4, "max": 2e5}
    assert s["material"]["poisson"] == {"min": 0.2, "max": 0.45}
    assert s["material"]["damping"] == {"min": 0.01, "max": 0.1}
    assert s["families"] == {"train": {"blob": 1, "flag": 1}, "val": {"flag": 1},
                             "test": {"torus": 1}}
    assert s["test_families_seen"] == []
    assert s["header"]["engine"] == {"name": "mujoco", "version": "4.0.0"}
    assert s["header"]["rejected"] == {"exploded": 2, "left the box": 1}
    json.dumps(s)  # JSON-ready


def test_tables(dataset):
    tables = {t.title: t for t in summary_tables(summarize(dataset))}
    assert list(tables) == ["Sequences", "Sizes", "Materials", "Shape families",
                            "Rejected while generating"]
    seqs = tables["Sequences"]
    assert seqs.columns == ["category", "train", "val", "test", "total"]
    assert seqs.rows == [["cloth", "1", "1", "0", "2"], ["soft", "1", "0", "1", "2"],
                         ["total", "2", "1", "1", "4"]]
    assert ["exploded", "2"] in tables["Rejected while generating"].rows


def test_invalid_files_are_listed(dataset):
    cut = dataset / "train" / "c0.npz"
    cut.write_bytes(cut.read_bytes()[:200])
    buf = io.BytesIO()  # well-formed npz, NaN frames: only a full load finds it
    seq = _seq(4, 3, 30, category="cloth")
    np.savez(buf, rest_vertices=seq.rest_vertices, faces=seq.faces,
             frames=seq.frames * np.nan, fps=np.float32(30), meta=np.array("{}"))
    (dataset / "val" / "nan.npz").write_bytes(buf.getvalue())
    full = summarize(dataset)
    assert [i["file"] for i in full["invalid"]] == ["train/c0.npz", "val/nan.npz"]
    assert "cannot read" in full["invalid"][0]["error"]
    assert "NaN" in full["invalid"][1]["error"]
    assert full["sequences"] == 3 and not full["counts_match_header"]
    quick = summarize(dataset, validate=False)
    assert [i["file"] for i in quick["invalid"]] == ["train/c0.npz"]
    tables = {t.title: t for t in summary_tables(full)}
    assert tables["Invalid files"].rows[0][0] == "train/c0.npz"


def test_leaked_test_family_and_missing_header(dataset, tmp_path):
    save_sequence(_seq(4, 5, 30, category="cloth", family="torus"),
                  dataset / "train" / "leak.npz")
    assert summarize(dataset, validate=False)["test_families_seen"] == ["torus"]
    with pytest.raises(InputError, match="not a 4D dataset"):
        summarize(tmp_path)


def test_empty_dataset(tmp_path):
    write_header(tmp_path, Header())
    s = summarize(tmp_path)
    assert s["sequences"] == 0 and s["frames"] is None and s["counts_match_header"]
    assert [t.title for t in summary_tables(s)] == ["Sequences"]
