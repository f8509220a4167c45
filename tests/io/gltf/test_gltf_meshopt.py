"""EXT_meshopt_compression (io/gltf/meshopt.py): written smaller, read back as it was meant."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurok_cli.errors import InputError
from neurok_cli.io.gltf import load_document, read_animated, write_animated
from neurok_cli.io.gltf.codec import parse
from neurok_cli.io.gltf.meshopt import EXTENSION, compress
from neurok_cli.io.mesh import load_mesh
from tests.conftest import ROOT, assert_valid_gltf, wobble


def _clip(tmp_path, encoding: str, meshopt: bool):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    out = tmp_path / f"blob_{encoding}_{int(meshopt)}.glb"
    write_animated(asset, [wobble(asset.vertices, frames=16)], out, fps=30, encoding=encoding,
                   bones=8, meshopt=meshopt)
    return asset, out


@pytest.mark.parametrize("encoding", ["compact", "exact", "bones"])
def test_a_compressed_clip_plays_as_the_plain_one_within_a_hundred_thousandth(tmp_path,
                                                                              encoding):
    asset, plain = _clip(tmp_path, encoding, False)
    _, packed = _clip(tmp_path, encoding, True)
    assert packed.stat().st_size < 0.9 * plain.stat().st_size
    assert_valid_gltf(packed)
    js, _ = parse(packed, packed.read_bytes())
    assert EXTENSION in js["extensionsRequired"] and EXTENSION in js["extensionsUsed"]
    fallback = js["buffers"][1]
    assert "uri" not in fallback and fallback["extensions"][EXTENSION] == {"fallback": True}
    modes = {v["extensions"][EXTENSION]["mode"] for v in js["bufferViews"]
             if EXTENSION in v.get("extensions", {})}
    assert modes == {"ATTRIBUTES", "TRIANGLES"}
    a, b = read_animated(plain).frames, read_animated(packed).frames
    diag = float(np.linalg.norm(np.ptp(asset.vertices, axis=0)))
    assert np.abs(b - a).max() / diag < 1e-4
    doc = load_document(packed)
    assert doc.compressed > 0 and EXTENSION not in (doc.gltf.extensionsUsed or [])
    plain_doc = load_document(plain)
    prim, plain_prim = doc.gltf.meshes[0].primitives[0], plain_doc.gltf.meshes[0].primitives[0]
    # the index codec may start a triangle at another corner, keeping its winding
    assert np.array_equal(_turned(doc.accessor(prim.indices)),
                          _turned(plain_doc.accessor(plain_prim.indices)))


def _turned(indices: np.ndarray) -> np.ndarray:
    """Each triangle started at its smallest index, winding kept."""
    tri = indices.reshape(-1, 3).astype(np.int64)
    first = tri.argmin(axis=1)
    return tri[np.arange(len(tri))[:, None], (first[:, None] + np.arange(3)) % 3]


def test_lossless_views_come_back_bit_for_bit_and_images_stay_as_they_were(tmp_path):
    """Texture coordinates, indices and images: unquantized, only float positions and
    normals are filtered, so everything else is exact."""
    src = load_document(ROOT / "examples" / "flag.glb")
    out = tmp_path / "flag.glb"
    compress(src, quantize=False).save_glb(out)
    assert_valid_gltf(out)
    back = load_document(out)
    assert back.compressed > 0
    indices = {p.indices for m in src.gltf.meshes for p in m.primitives}
    for i, acc in enumerate(src.gltf.accessors):
        a, b = src.accessor(i), back.accessor(i)
        assert a.dtype == b.dtype and a.shape == b.shape
        if i in indices:
            assert np.array_equal(_turned(a), _turned(b)), i
        elif acc.componentType == 5126 and acc.type == "VEC3":
            scale = max(float(np.abs(a).max()), 1e-12)
            assert np.abs(b - a).max() <= scale * 2.0 ** -11, i  # normals keep 12 bits
        else:
            assert np.array_equal(a, b), i
    assert [back.image_bytes(i) for i in range(len(back.gltf.images))] == \
           [src.image_bytes(i) for i in range(len(src.gltf.images))]
    assert src.gltf.images, "the flag has a texture to keep"


def test_a_corrupt_compressed_view_is_one_clear_error(tmp_path):
    _, packed = _clip(tmp_path, "compact", True)
    js, binary = parse(packed, packed.read_bytes())
    view = next(v for v in js["bufferViews"] if EXTENSION in v.get("extensions", {}))
    ext = view["extensions"][EXTENSION]
    start = ext["byteOffset"]
    data = bytearray(packed.read_bytes())
    at = data.index(binary[start: start + 64])  # where the view's codec bytes sit in the file
    data[at: at + ext["byteLength"]] = b"\xff" * ext["byteLength"]
    bad = tmp_path / "bad.glb"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="does not decode"):
        load_document(bad)


def test_a_plain_view_on_the_data_less_fallback_is_refused(tmp_path):
    _, plain = _clip(tmp_path, "compact", False)
    text = tmp_path / "packed.gltf"
    compress(load_document(plain)).save_gltf(text)
    load_document(text)  # as written, it reads
    js = json.loads(text.read_text())
    view = next(v for v in js["bufferViews"] if EXTENSION in v.get("extensions", {}))
    del view["extensions"][EXTENSION]
    text.write_text(json.dumps(js))
    with pytest.raises(InputError, match="fallback without data"):
        load_document(text)


def test_quantized_meshes_stay_where_they_were_and_placed_ones_stay_float(tmp_path):
    """A leaf mesh node without a transform takes the 16-bit grid; a node with a transform
    of its own keeps float positions."""
    src = load_document(ROOT / "examples" / "flag.glb")
    moved = next(n for n in src.gltf.nodes if n.mesh is not None)
    moved.translation = [0.0, 0.5, 0.0]
    out = tmp_path / "flag.glb"
    compress(src).save_glb(out)
    assert_valid_gltf(out)
    back = load_document(out)
    assert "KHR_mesh_quantization" in back.gltf.extensionsRequired
    kinds = {}
    for n_src, n_back in zip(src.gltf.nodes, back.gltf.nodes):
        if n_src.mesh is not None:
            acc = back.gltf.accessors[back.gltf.meshes[n_back.mesh].primitives[0]
                                      .attributes.POSITION]
            kinds[n_src is moved] = acc.componentType
    assert kinds == {True: 5126, False: 5122}
    before, after = load_mesh(ROOT / "examples" / "flag.glb"), load_mesh(out)
    diag = float(np.linalg.norm(np.ptp(before.vertices, axis=0)))
    shift = np.zeros_like(before.vertices)
    part = [p.node for p in after.parts].index(src.gltf.nodes.index(moved))
    lo, hi = after.offsets[part], after.offsets[part + 1]
    shift[lo:hi, 1] = 0.5
    assert np.abs(after.vertices - shift - before.vertices).max() / diag < 5e-5


def test_a_mesh_sharing_its_positions_with_a_placed_mesh_stays_float(tmp_path):
    """Quantizing a shared accessor would put the other mesh's vertices off its grid."""
    import copy

    _, plain = _clip(tmp_path, "compact", False)
    doc = load_document(plain)
    g = doc.gltf
    mesh = copy.deepcopy(g.meshes[0])
    for p in mesh.primitives:
        p.targets = None
    g.meshes.append(mesh)
    g.nodes.append(type(g.nodes[0])(mesh=len(g.meshes) - 1, translation=[0.0, 2.0, 0.0]))
    g.scenes[0].nodes.append(len(g.nodes) - 1)
    out, two = tmp_path / "shared.glb", tmp_path / "two.glb"
    compress(doc).save_glb(out)
    doc.save_glb(two)
    back = load_document(out)
    shared = back.gltf.meshes[0].primitives[0].attributes.POSITION
    assert back.gltf.accessors[shared].componentType == 5126
    before, after = load_mesh(two), load_mesh(out)
    diag = float(np.linalg.norm(np.ptp(before.vertices, axis=0)))
    assert np.abs(after.vertices - before.vertices).max() / diag < 5e-5


def test_a_compressed_view_whose_rows_do_not_fill_its_view_is_refused(tmp_path):
    """A corrupt count would have the decoder allocate any size."""
    _, plain = _clip(tmp_path, "compact", False)
    text = tmp_path / "packed.gltf"
    compress(load_document(plain)).save_gltf(text)
    js = json.loads(text.read_text())
    view = next(v for v in js["bufferViews"] if EXTENSION in v.get("extensions", {}))
    view["extensions"][EXTENSION]["count"] = 10**9
    text.write_text(json.dumps(js))
    with pytest.raises(InputError, match="rows of"):
        load_document(text)
