"""The glTF document on pygltflib: what a file holds comes back out unchanged.

The shared assets are read and written back (JSON equal once the defaults pygltflib spells out
are normalised, data equal byte for byte); a file made here with unknown extensions and nested
extras (empty arrays and objects, nulls, empty strings) passes through ``neurok animate``.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pygltflib
import pytest
import trimesh
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.errors import InputError
from neurok_cli.io.gltf.doc import GltfDocument, load_document
from tests.conftest import assert_valid_gltf, asset_path

runner = CliRunner()

# what pygltflib writes for a property the file left out: the schema's defaults
DEFAULTS = {"byteOffset": [0], "normalized": [False], "mode": [4], "alphaMode": ["OPAQUE"],
            "doubleSided": [False], "emissiveFactor": [[0, 0, 0]],
            "baseColorFactor": [[1, 1, 1, 1]], "metallicFactor": [1], "roughnessFactor": [1],
            "texCoord": [0], "wrapS": [10497], "wrapT": [10497], "interpolation": ["LINEAR"],
            "children": [[]], "nodes": [[]], "weights": [[]], "targets": [[]]}
LAYOUT = ("buffer", "byteOffset", "byteLength", "byteStride")  # where bytes lie, not what


def raw_json(path: Path) -> dict:
    """The JSON of a .gltf or .glb file, as written."""
    data = path.read_bytes()
    if data[:4] != b"glTF":
        return json.loads(data)
    length, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A
    return json.loads(data[20: 20 + length])


def normalised(obj: object, key: str = "") -> object:
    """``obj`` without properties at their default value; extras and extensions untouched."""
    if key in ("extras", "extensions"):
        return obj
    if isinstance(obj, list):
        return [normalised(x) for x in obj]
    if isinstance(obj, dict):
        return {k: normalised(v, k) for k, v in obj.items() if v not in DEFAULTS.get(k, [])}
    return obj


def comparable(js: dict) -> dict:
    """The document's content: buffers, where bufferViews lie in them, and the generator
    are the writer's to choose."""
    js = normalised(js)
    js.pop("buffers", None)
    js["asset"].pop("generator", None)
    js["bufferViews"] = [{k: v for k, v in view.items() if k not in LAYOUT}
                         for view in js.get("bufferViews", [])]
    return js


def view_bytes(doc: GltfDocument, i: int) -> bytes:
    view = doc.gltf.bufferViews[i]
    return bytes(doc.blob[view.byteOffset: view.byteOffset + view.byteLength])


@pytest.mark.parametrize("name", ["truck", "simplemorph"])
@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_shared_assets_come_back_unchanged(name, suffix, tmp_path):
    src = asset_path(name)
    doc = load_document(src)
    out = tmp_path / f"copy{suffix}"
    doc.save_gltf(out) if suffix == ".gltf" else doc.save_glb(out)
    assert comparable(raw_json(out)) == comparable(raw_json(src))
    back = load_document(out)
    assert len(back.gltf.bufferViews) == len(doc.gltf.bufferViews)
    for i in range(len(doc.gltf.bufferViews)):  # every byte, images included
        assert view_bytes(back, i) == view_bytes(doc, i), i
    for i in range(len(doc.gltf.accessors)):
        assert np.array_equal(back.accessor(i), doc.accessor(i)), i
    assert_valid_gltf(out)


def _ball() -> tuple[np.ndarray, np.ndarray]:
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    return mesh.vertices.astype(np.float32), mesh.faces.astype(np.uint16)


def _unknown_things() -> dict:
    """A ball whose every level carries unknown extensions and awkward extras; its morph
    target is a sparse accessor without a bufferView (which must never get a byteOffset)."""
    v, f = _ball()
    bulge = np.array([[0.0, 0.05, 0.0]], np.float32)
    top = np.array([int(np.argmax(v[:, 1]))], np.uint32)
    blob = v.tobytes() + f.tobytes() + b"\0" * (-f.nbytes % 4)
    at = [0, v.nbytes, v.nbytes + f.nbytes + (-f.nbytes % 4)]
    blob += top.tobytes() + bulge.tobytes()
    uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
    odd = {"tags": [], "note": None, "empty": {}, "text": "", "deep": [{}, [], None, {"x": []}]}
    return {
        "asset": {"version": "2.0", "copyright": "test", "extras": {"ids": [], "by": None}},
        "extensionsUsed": ["VENDOR_root_info", "VENDOR_node_tag", "VENDOR_material_look"],
        "extensions": {"VENDOR_root_info": {"levels": [], "none": None, "nested": {"e": {}}}},
        "extras": odd,
        "scene": 0, "scenes": [{"name": "main", "nodes": [0], "extras": {"layers": []}}],
        "nodes": [{"name": "ball", "mesh": 0, "weights": [0.25], "extras": odd,
                   "extensions": {"VENDOR_node_tag": {"tag": "", "ids": []}}}],
        "meshes": [{"name": "ball", "weights": [0.0],
                    "extras": {"targetNames": ["bulge"], "keep": [], "none": None},
                    "primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "material": 0,
                                    "targets": [{"POSITION": 2}], "extras": {"p": [[]]}}]}],
        "materials": [{"name": "red", "pbrMetallicRoughness": {
            "baseColorFactor": [0.8, 0.2, 0.2, 1.0], "metallicFactor": 0.0},
            "extensions": {"VENDOR_material_look": {"params": [], "off": None}},
            "extras": {"notes": [], "n": {}}}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": len(v), "type": "VEC3",
             "min": v.min(axis=0).tolist(), "max": v.max(axis=0).tolist()},
            {"bufferView": 1, "componentType": 5123, "count": f.size, "type": "SCALAR"},
            {"componentType": 5126, "count": len(v), "type": "VEC3", "min": [0.0, 0.0, 0.0],
             "max": [0.0, 0.05, 0.0], "sparse": {
                 "count": 1, "indices": {"bufferView": 2, "componentType": 5125},
                 "values": {"bufferView": 2, "byteOffset": 4}}}],
        "bufferViews": [{"buffer": 0, "byteOffset": at[0], "byteLength": v.nbytes,
                         "target": 34962},
                        {"buffer": 0, "byteOffset": at[1], "byteLength": f.nbytes,
                         "target": 34963},
                        {"buffer": 0, "byteOffset": at[2], "byteLength": 16}],
        "buffers": [{"byteLength": len(blob), "uri": uri}],
    }


def test_unknown_extensions_and_extras_pass_through_animate(tmp_path):
    src, out = tmp_path / "ball.gltf", tmp_path / "ball.glb"
    js = _unknown_things()
    src.write_text(json.dumps(js))
    assert_valid_gltf(src)
    result = runner.invoke(app, ["animate", str(src), "-o", str(out), "--seconds", "0.5"])
    assert result.exit_code == 0, result.output
    got = raw_json(out)
    assert got["extensions"] == js["extensions"] and got["extras"] == js["extras"]
    assert got["extensionsUsed"] == js["extensionsUsed"]
    assert got["asset"]["extras"] == js["asset"]["extras"]
    assert got["asset"]["copyright"] == "test"
    assert got["scenes"][0] == js["scenes"][0]
    node, mesh = got["nodes"][0], got["meshes"][0]
    assert node["extras"] == js["nodes"][0]["extras"]
    assert node["extensions"] == js["nodes"][0]["extensions"]
    assert node["weights"][0] == 0.25 and len(node["weights"]) == len(mesh["weights"]) > 1
    assert mesh["extras"]["keep"] == [] and mesh["extras"]["none"] is None
    assert mesh["extras"]["targetNames"][0] == "bulge"
    assert mesh["primitives"][0]["extras"] == js["meshes"][0]["primitives"][0]["extras"]
    for key in ("extras", "extensions", "pbrMetallicRoughness"):
        assert normalised(got["materials"][0][key], key) == js["materials"][0][key]
    assert got["accessors"][2]["sparse"]["count"] == 1
    assert "byteOffset" not in got["accessors"][2] and "bufferView" not in got["accessors"][2]
    before, after = load_document(src), load_document(out)
    assert np.array_equal(after.accessor(2), before.accessor(2))
    assert_valid_gltf(out)


def test_extras_of_any_json_type_and_names_pygltflib_lacks_survive(tmp_path):
    """glTF allows extras of any type (pygltflib's decoder cannot read them), a node's
    weights and a sampler's name (pygltflib's classes have no such fields)."""
    js = _unknown_things()
    js["scenes"][0]["extras"] = "a note"
    js["nodes"][0]["extras"] = [1, [], None]
    js["meshes"][0]["primitives"][0]["extras"] = 7
    js["samplers"] = [{"name": "nearest", "magFilter": 9728, "extras": False}]
    src, out = tmp_path / "odd.gltf", tmp_path / "odd.glb"
    src.write_text(json.dumps(js))
    doc = load_document(src)
    assert doc.gltf.nodes[0].weights == [0.25] and doc.gltf.samplers[0].name == "nearest"
    assert isinstance(doc.gltf.meshes[0].primitives[0].targets[0], pygltflib.Attributes)
    doc.save_glb(out)
    assert comparable(raw_json(out)) == comparable(js)


def test_wrongly_typed_objects_are_refused_by_name(tmp_path):
    """What gltf_check does not look at still fails as an InputError, not AttributeError."""
    js = _unknown_things()
    js["cameras"] = [5]
    src = tmp_path / "bad.gltf"
    src.write_text(json.dumps(js))
    with pytest.raises(InputError, match="bad.gltf: .*wrong type"):
        load_document(src)


def test_a_property_outside_the_schema_with_odd_extras_is_dropped_not_a_crash(tmp_path):
    """Extras set aside for the decoder are put back where pygltflib kept the object; a
    property it has no place for (here a node's "foo") is dropped with its extras."""
    js = _unknown_things()
    js["nodes"][0]["foo"] = {"extras": 1, "bar": [{"extras": "x"}]}
    js["nodes"][0]["extras"] = "kept"
    src = tmp_path / "foo.gltf"
    src.write_text(json.dumps(js))
    doc = load_document(src)
    assert doc.gltf.nodes[0].extras == "kept" and not hasattr(doc.gltf.nodes[0], "foo")
