"""Loading real assets, welding, the canonical frame, and clear errors for bad files."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from neurok_cli.errors import InputError, UsageError
from neurok_cli.io.mesh import DEFAULT_SIZE, canonical_frame, load_mesh, size_source, weld
from tests.conftest import asset_path

# raw vertices / faces / welded vertices, from the shared assets' README (trimesh counts)
EXPECTED = {
    "penguin": (3362, 6720, 3362),
    "spot": (3225, 5856, 2930),
    "chair": (11250, 12756, 3158),
    "teapot": (2682, 894, 480),
    "capsule": (5252, 10200, None),
    "mountain": (25600, 50562, 25600),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_assets_load_with_expected_counts(name):
    asset = load_mesh(asset_path(name))
    nv, nf, nw = EXPECTED[name]
    assert len(asset.vertices) == nv
    assert len(asset.faces) == nf
    w = asset.welded()
    if nw is not None:
        assert len(w.vertices) == nw
    # the weld map takes welded positions back to every file vertex exactly
    np.testing.assert_array_equal(w.vertices[w.index], asset.vertices)


def test_uv_seams_are_welded_but_uvs_kept():
    asset = load_mesh(asset_path("spot"))
    part = asset.parts[0]
    assert part.uvs is not None and part.uvs.shape == (3225, 2)
    w = asset.welded()
    assert len(w.vertices) < len(asset.vertices)  # seams split vertices in the file
    # welded faces form one surface: every welded vertex is used
    assert np.unique(w.faces).size == len(w.vertices)


def test_double_sided_and_degenerate_faces_are_cleaned():
    chair = load_mesh(asset_path("chair")).welded()
    key = np.sort(chair.faces, axis=1)
    assert len(np.unique(key, axis=0)) == len(key)
    capsule = load_mesh(asset_path("capsule")).welded()  # 200 zero-area pole triangles
    f = capsule.faces
    assert ((f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])).all()
    assert len(f) == 10200 - 200


def test_obj_texture_and_missing_mtl():
    capsule = load_mesh(asset_path("capsule"))
    mat = capsule.parts[0].material
    assert mat.texture is not None and mat.texture_mime == "image/jpeg"
    chair = load_mesh(asset_path("chair"))
    assert len(chair.parts) == 3
    assert any("model.mtl" in w for w in chair.warnings)


def test_gltf_scene_instancing_and_transforms():
    truck = load_mesh(asset_path("truck"))
    wheels = [p for p in truck.parts if p.name == "Wheels"]
    assert len(wheels) == 2  # one mesh, two nodes
    assert wheels[0].node != wheels[1].node and wheels[0].mesh == wheels[1].mesh
    # the two instances sit at different places (node transforms applied)
    assert np.linalg.norm(wheels[0].vertices.mean(0) - wheels[1].vertices.mean(0)) > 1.0
    assert truck.metres_per_unit == 1.0


def test_gltf_rest_shape_includes_default_morph_weights():
    asset = load_mesh(asset_path("simplemorph"))
    # SimpleMorph's mesh weights are (0.5, 0.5): its third vertex shows at y = 1.5
    np.testing.assert_allclose(asset.vertices[:, 1], [0.0, 0.0, 1.5])


def test_weld_tolerance_merges_only_coincident_points():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1e-12, 0, 0], [0.5, 0.5, 0]], float)
    f = np.array([[0, 1, 2], [3, 1, 4]])
    w = weld(v, f)
    assert len(w.vertices) == 4
    assert w.index[3] == w.index[0]


@pytest.mark.parametrize("up", ["y", "z"])
def test_canonical_frame_round_trip(up):
    asset = load_mesh(asset_path("teapot"), up=up)
    frame = canonical_frame(asset, size=0.3)
    c = frame.to_canonical(asset.vertices)
    assert np.ptp(c, axis=0).max() == pytest.approx(1.0)
    np.testing.assert_allclose((c.max(0) + c.min(0)) / 2, 0.0, atol=1e-12)
    np.testing.assert_allclose(frame.from_canonical(c), asset.vertices, atol=1e-9)
    assert frame.size_m == 0.3
    if up == "z":  # the file's +Z becomes the model's +Y
        np.testing.assert_allclose(frame.vector_to_canonical([0, 0, 1.0]), [0, 1, 0])


def test_stl_is_z_up_unless_told():
    """STL's convention is +Z up: the teapot (file z from 0.87 to 30.35, its spout and handle
    along x) stands on its base in the model's frame; --up y lays it on its side as asked."""
    asset = load_mesh(asset_path("teapot"))
    assert asset.up == "z"
    c = canonical_frame(asset, size=0.3).to_canonical(asset.vertices)
    np.testing.assert_allclose(np.ptp(c[:, 1]) * np.ptp(asset.vertices[:, 0]),
                               np.ptp(asset.vertices[:, 2]), rtol=1e-9)  # height = file z
    assert load_mesh(asset_path("teapot"), up="y").up == "y"
    assert load_mesh(asset_path("penguin")).up == "y"  # OBJ stays +Y up


def test_a_unitless_file_gets_an_everyday_size_unless_told(tmp_path):
    """The teapot (63 units across) would be a 63 m teapot and the penguin a 2.9 m one:
    a unitless file is given DEFAULT_SIZE unless --size or --units says otherwise; a glTF
    keeps its metres."""
    teapot = load_mesh(asset_path("teapot"))
    assert canonical_frame(teapot).size_m == DEFAULT_SIZE
    assert "unitless" in size_source(teapot)
    assert canonical_frame(teapot, size=0.3).size_m == 0.3
    assert size_source(teapot, 0.3) == "--size"
    extent = float(np.ptp(teapot.vertices, axis=0).max())
    assert canonical_frame(teapot, units="mm").size_m == pytest.approx(extent * 1e-3)
    assert canonical_frame(teapot, units="in").size_m == pytest.approx(extent * 0.0254)
    assert "mm" in size_source(teapot, None, "mm")
    truck = load_mesh(asset_path("truck"))
    lo, hi = truck.bounds()
    assert canonical_frame(truck).size_m == pytest.approx(float((hi - lo).max())
                                                          * truck.metres_per_unit)
    assert size_source(truck) == "the file's metres"
    with pytest.raises(UsageError, match="units"):
        canonical_frame(teapot, units="furlong")


def test_canonical_frame_rejects_bad_size():
    asset = load_mesh(asset_path("penguin"))
    with pytest.raises(UsageError, match="size"):
        canonical_frame(asset, size=-1.0)


# --- bad input: one clear message naming the file -------------------------------------------

def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


BAD_FILES = {
    "empty": ("empty.obj", b"", "empty"),
    "no faces": ("points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", "no triangle faces"),
    "nan": ("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", "NaN"),
    "inf": ("inf.obj", "v 0 0 0\nv inf 0 0\nv 0 1 0\nf 1 2 3\n", "NaN or infinity"),
    "index out of range": ("oob.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n", "vertex 7"),
    "truncated face": ("trunc.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", "fewer than 3"),
    "garbage number": ("bad.obj", "v 0 0 zero\n", "bad number"),
    "truncated glb": ("t.glb", b"glTF\x02\x00\x00\x00\xff\x00\x00\x00" + b"\0" * 12, "truncated"),
    "not gltf json": ("x.gltf", "{not json", "not valid glTF JSON"),
    "gltf 1.0": ("old.gltf", '{"asset": {"version": "1.0"}}', "version"),
    "gltf no meshes": ("nomesh.gltf", '{"asset": {"version": "2.0"}}', "no triangle faces"),
    "truncated ascii stl": ("t.stl", b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0",
                            "no triangle faces"),
    "truncated binary stl": ("b.stl", b"\0" * 80 + struct.pack("<I", 10) + b"\0" * 120,
                             "truncated binary STL (2 of 10"),
    "truncated ply": ("t.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n",
                      "PLY"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_raise_input_error_naming_the_file(tmp_path, case):
    name, data, needle = BAD_FILES[case]
    path = _write(tmp_path, name, data)
    with pytest.raises(InputError) as e:
        load_mesh(path)
    assert str(path) in str(e.value) and needle in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_folder_and_unsupported(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_mesh(tmp_path / "nope.obj")
    with pytest.raises(InputError, match="is a folder"):
        load_mesh(tmp_path)
    with pytest.raises(InputError, match="unsupported file type '.fbx'"):
        load_mesh(_write(tmp_path, "a.fbx", "x"))
    # a folder holding an asset names the meshes in it (a texture is not one)
    asset = tmp_path / "asset"
    asset.mkdir()
    for name in ("cow.OBJ", "cow.png", "cow.stl"):
        (asset / name).write_text("x")
    with pytest.raises(InputError, match=r"is a folder, not a mesh file; it holds cow.OBJ, "
                                         r"cow.stl$"):
        load_mesh(asset)


def test_glb_accessor_past_buffer_end(tmp_path):
    js = (b'{"asset":{"version":"2.0"},"buffers":[{"byteLength":8}],'
          b'"bufferViews":[{"buffer":0,"byteLength":8}],'
          b'"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}],'
          b'"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],'
          b'"nodes":[{"mesh":0}],"scenes":[{"nodes":[0]}]}')
    js += b" " * (-len(js) % 4)
    body = struct.pack("<II", len(js), 0x4E4F534A) + js + struct.pack("<II", 8, 0x004E4942)
    body += b"\0" * 8
    path = _write(tmp_path, "short.glb", struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)
    with pytest.raises(InputError, match="past the end"):
        load_mesh(path)
