"""Shape families: geometry contract (resting, centred, sized), mesh validity, determinism."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import trimesh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from neurok_cli.errors import UsageError
from neurok_cli.sim.shapes import (
    CATEGORY_FAMILIES,
    FAMILIES,
    WIDE_FAMILIES,
    Shape,
    make_shape,
    mesh_stats,
    shape_from_mesh,
)

SEEDS = (0, 1, 2, 7, 11)
MAX_VERTICES = {"solid": 3000, "sheet": 1600, "beam": 2000}
MIN_VERTICES = {"solid": 200, "sheet": 100, "beam": 100}


def _areas(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    t = v[f]
    return 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)


def _components(n: int, f: np.ndarray) -> np.ndarray:
    """Component label (N,) of each vertex, joined through faces."""
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]]])
    graph = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _cases(families) -> list:
    return [pytest.param(f, s, id=f"{f}-{s}") for f in families for s in SEEDS]


# corpus-v1's families and those --families wide adds, by category
BY_CATEGORY = {c: CATEGORY_FAMILIES[c] + WIDE_FAMILIES[c] for c in CATEGORY_FAMILIES}
CLOSED = BY_CATEGORY["soft"] + BY_CATEGORY["beam"]


@functools.cache
def _shape(family: str, seed: int) -> Shape:
    """Built once per (family, seed) for all the tests; the tests only read it."""
    return make_shape(family, np.random.default_rng(seed))


@pytest.mark.parametrize("family, seed", _cases(FAMILIES))
def test_resting_centred_and_sized(family, seed):
    shape = _shape(family, seed)
    v = shape.vertices
    assert v.dtype == np.float64 and v.ndim == 2 and v.shape[1] == 3
    assert np.isfinite(v).all()
    assert abs(v[:, 1].min()) < 1e-9
    lo, hi = v.min(axis=0), v.max(axis=0)
    assert abs(lo[0] + hi[0]) < 1e-9 and abs(lo[2] + hi[2]) < 1e-9
    assert 0.2 <= np.ptp(v, axis=0).max() <= 1.5


@pytest.mark.parametrize("family, seed", _cases(FAMILIES))
def test_mesh_is_clean(family, seed):
    shape = _shape(family, seed)
    v, f = shape.vertices, shape.faces
    assert f.dtype == np.int64 and f.ndim == 2 and f.shape[1] == 3
    assert f.min() >= 0 and f.max() < len(v)
    assert np.array_equal(np.unique(f), np.arange(len(v))), "unused vertices"
    assert len(np.unique(v.round(9), axis=0)) == len(v), "duplicate vertices"
    assert (np.sort(f, axis=1)[:, :-1] != np.sort(f, axis=1)[:, 1:]).all(), "repeated index"
    assert _areas(v, f).min() > 1e-7, "degenerate triangle"
    lo, hi = MIN_VERTICES[shape.kind], MAX_VERTICES[shape.kind]
    assert lo <= len(v) <= hi


@pytest.mark.parametrize("family, seed", _cases(CLOSED))
def test_closed_shapes_watertight_and_outward(family, seed):
    shape = _shape(family, seed)
    stats = mesh_stats(shape)
    assert stats["watertight"] and stats["volume"] > 0
    labels = _components(len(shape.vertices), shape.faces)
    face_label = labels[shape.faces[:, 0]]
    for c in np.unique(labels):  # composites: each part is closed and outward on its own
        part = trimesh.Trimesh(shape.vertices, shape.faces[face_label == c], process=False)
        part.remove_unreferenced_vertices()
        assert part.is_watertight and part.is_winding_consistent
        assert part.volume > 0


@pytest.mark.parametrize("family, seed", _cases(CLOSED))
def test_composites_have_parts(family, seed):
    shape = _shape(family, seed)
    parts = {"chair": 6, "table": 5, "mushroom": 2}.get(shape.family, 1)
    if shape.family == "stack":
        parts = len(shape.params["radii"])
    assert mesh_stats(shape)["components"] == parts


@pytest.mark.parametrize("family, seed", _cases(BY_CATEGORY["cloth"]))
def test_sheets_are_manifold_and_face_one_way(family, seed):
    shape = _shape(family, seed)
    f = shape.faces
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    assert len(np.unique(directed, axis=0)) == len(directed), "inconsistent winding"
    assert _components(len(shape.vertices), f).max() == 0, "one piece"
    t = shape.vertices[f]
    normals = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    if shape.family == "curl":  # rolled about x: every normal points at the roll's axis,
        # the line y = radius, z = 0 (the arc's lowest line rests on y = 0)
        radius = shape.params["depth"] / shape.params["angle"]
        towards = np.array([0.0, radius, 0.0]) - t.mean(axis=1) * [0, 1, 1]
        assert (np.einsum("ij,ij->i", normals, towards) > 0).all()
        assert np.ptp(shape.vertices[:, 1]) > 0.1 * radius  # not flat
        return
    axis = 2 if shape.family == "flag" else 1  # flags hang in x-y, the others lie in x-z
    assert (normals[:, axis] > 0).all()
    assert np.ptp(shape.vertices[:, axis]) == 0


@pytest.mark.parametrize("family, seed", _cases(BY_CATEGORY["beam"]))
def test_beams_are_long_along_x(family, seed):
    shape = _shape(family, seed)
    ext = np.ptp(shape.vertices, axis=0)
    slender = 3 if family == "arc" else 6  # an arc's bend adds up to a tenth of its length
    assert ext[0] >= slender * max(ext[1], ext[2]) * 0.99
    rings = np.unique(shape.vertices[:, 0].round(9))
    assert len(rings) >= 8


@pytest.mark.parametrize("family, seed", _cases(FAMILIES))
def test_params_are_json(family, seed):
    shape = _shape(family, seed)
    json.dumps(shape.params)
    json.dumps(mesh_stats(shape))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_deterministic_and_random(family):
    a = make_shape(family, np.random.default_rng(3))
    b = make_shape(family, np.random.default_rng(3))
    c = make_shape(family, np.random.default_rng(4))
    assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)
    assert a.params == b.params and a.family == family
    same = a.vertices.shape == c.vertices.shape and np.allclose(a.vertices, c.vertices)
    assert not same


def test_categories_cover_families_once():
    names = [n for fams in BY_CATEGORY.values() for n in fams]
    assert sorted(names) == sorted(FAMILIES) and len(names) == len(set(names))
    assert set(CATEGORY_FAMILIES) == set(WIDE_FAMILIES) == {"soft", "cloth", "beam"}
    kinds = {"soft": "solid", "cloth": "sheet", "beam": "beam"}
    for category, fams in BY_CATEGORY.items():
        for name in fams:
            assert make_shape(name, np.random.default_rng(0)).kind == kinds[category]


def test_unknown_family_lists_choices():
    with pytest.raises(UsageError) as err:
        make_shape("dodecahedron", np.random.default_rng(0))
    assert "dodecahedron" in str(err.value)
    assert all(name in str(err.value) for name in FAMILIES)
    with pytest.raises(UsageError, match="default_rng"):
        make_shape("sphere", 0)


def test_shape_from_mesh_normalises():
    box = trimesh.creation.box(extents=(2.0, 1.0, 0.5))
    box.apply_translation((3.0, -2.0, 1.0))
    s = shape_from_mesh(box.vertices, box.faces, size=0.8)
    v = s.vertices
    assert s.family == "user" and s.kind == "solid"
    assert abs(v[:, 1].min()) < 1e-12
    assert np.allclose(v.min(axis=0)[[0, 2]], -v.max(axis=0)[[0, 2]])
    assert np.allclose(np.ptp(v, axis=0), [0.8, 0.4, 0.2])
    assert np.array_equal(s.faces, box.faces)
    unscaled = shape_from_mesh(box.vertices, box.faces, family="crate", kind="beam")
    assert np.allclose(np.ptp(unscaled.vertices, axis=0), [2.0, 1.0, 0.5])
    assert unscaled.family == "crate" and unscaled.params == {}


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "gel"}, "solid, sheet, beam"),
    ({"size": 0.0}, "size"),
    ({"size": -1.0}, "size"),
])
def test_shape_from_mesh_rejects_bad_options(kwargs, match):
    box = trimesh.creation.box()
    with pytest.raises(UsageError, match=match):
        shape_from_mesh(box.vertices, box.faces, **kwargs)


def test_shape_from_mesh_rejects_bad_arrays():
    box = trimesh.creation.box()
    with pytest.raises(UsageError, match="vertices"):
        shape_from_mesh(box.vertices[:, :2], box.faces)
    with pytest.raises(UsageError, match="faces"):
        shape_from_mesh(box.vertices, box.faces.astype(float))
    with pytest.raises(UsageError, match="indices"):
        shape_from_mesh(box.vertices, box.faces + 100)
