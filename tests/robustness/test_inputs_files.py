"""Malformed input files (glTF that breaks the schema, bad MTL numbers, garbage STL/PLY,
impossible coordinates, surfaces without area, broken frame folders): each is one error line
naming the problem, exit 1, and nothing written."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from tests.conftest import assert_one_error_line
from tests.robustness.test_inputs import BLOB, OBJ_BODY, TETRA_V, glb_bytes, gltf_doc

runner = CliRunner()


def _set(path: str, value: object) -> Callable[[dict], None]:
    """A mutation setting ``js[a][b]...`` (keys split on '/'; digits index lists)."""

    def apply(js: dict) -> None:
        *head, last = [int(k) if k.isdigit() else k for k in path.split("/")]
        obj = js
        for k in head:
            obj = obj[k]
        obj[last] = value

    return apply


def _drop(key: str) -> Callable[[dict], None]:
    return lambda js: js.pop(key)


def _sparse(indices_type: int = 5123, count: int = 1, offset: int = 48
            ) -> Callable[[dict], None]:
    """Make accessor 0 sparse: ``count`` indices read at byte ``offset`` of the blob (48: the
    triangle indices, all in range; 14: the upper half of the float 1.0, 16256)."""

    def apply(js: dict) -> None:
        js["bufferViews"].append({"buffer": 0, "byteOffset": offset, "byteLength": 8})
        js["accessors"][0]["sparse"] = {
            "count": count, "indices": {"bufferView": 2, "componentType": indices_type},
            "values": {"bufferView": 0}}

    return apply


def _animation(**over: object) -> Callable[[dict], None]:
    def apply(js: dict) -> None:
        sampler = {"input": 1, "output": 0, "interpolation": "LINEAR"}
        channel = {"sampler": 0, "target": {"node": 0, "path": "translation"}}
        for k, v in over.items():
            (channel if k in ("sampler", "target") else sampler)[k] = v
        js["animations"] = [{"samplers": [sampler], "channels": [channel]}]

    return apply


def _keyed(times: list[float], vtype: str = "VEC3", nvalues: int | None = None,
           path: str = "translation", input_type: int = 5126) -> Callable[[dict], None]:
    """An animation of node 0's ``path`` with keyframe ``times`` and ``nvalues`` zero values
    of ``vtype`` (default: one per time), their bytes appended to the buffer."""

    def apply(js: dict) -> None:
        size = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[vtype]
        n = len(times) if nvalues is None else nvalues
        t = np.asarray(times, np.float32).tobytes()
        data = BLOB + t + np.zeros(n * size, np.float32).tobytes()
        js["buffers"][0] = {"byteLength": len(data), "uri": "data:application/octet-stream;"
                            "base64," + base64.b64encode(data).decode()}
        js["bufferViews"] += [{"buffer": 0, "byteOffset": 72, "byteLength": len(t)},
                              {"buffer": 0, "byteOffset": 72 + len(t), "byteLength": 4 * n * size}]
        js["accessors"] += [{"bufferView": 2, "componentType": input_type, "count": len(times),
                             "type": "SCALAR"},
                            {"bufferView": 3, "componentType": 5126, "count": n, "type": vtype}]
        js["animations"] = [{"samplers": [{"input": 2, "output": 3}], "channels": [
            {"sampler": 0, "target": {"node": 0, "path": path}}]}]

    return apply


def _position(value: float) -> Callable[[dict], None]:
    """Vertex 3's z set to ``value`` in the buffer (a NaN or infinity JSON cannot hold)."""

    def apply(js: dict) -> None:
        v = TETRA_V.copy()
        v[3, 2] = value
        data = v.tobytes() + BLOB[48:]
        js["buffers"][0]["uri"] = ("data:application/octet-stream;base64,"
                                   + base64.b64encode(data).decode())
        js["accessors"][0].pop("max")  # the validator's bounds: irrelevant here
        js["accessors"][0].pop("min")

    return apply


def _textured(js: dict) -> None:
    js["meshes"][0]["primitives"][0]["material"] = 0
    js["materials"] = [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]
    js["textures"] = [{"source": 0}]


GLTF_CASES: dict[str, tuple[Callable[[dict], None], str]] = {
    "no accessors": (_drop("accessors"), "file has 0 accessors"),
    "accessors is an object": (_set("accessors", {"0": {}}), "'accessors' must be an array"),
    "componentType 9999": (_set("accessors/0/componentType", 9999), "componentType"),
    "componentType as text": (_set("accessors/0/componentType", "5126"), "componentType"),
    "componentType true": (_set("accessors/0/componentType", True), "componentType"),
    "type VEC7": (_set("accessors/0/type", "VEC7"), "'VEC7'"),
    "type missing": (lambda js: js["accessors"][0].pop("type"), "type must be one of"),
    "bufferView out of range": (_set("accessors/0/bufferView", 9), "bufferView 9"),
    "bufferView negative": (_set("accessors/0/bufferView", -1), "bufferView -1"),
    "missing scene node": (_set("scenes/0/nodes", [5]), "node 5"),
    "scene out of range": (_set("scene", 3), "scene 3"),
    "matrix of 3": (_set("nodes/0/matrix", [1, 0, 0]), "matrix must be an array of 16"),
    "matrix with text": (_set("nodes/0/matrix", ["1"] * 16), "matrix must be an array of 16"),
    "translation of 2": (_set("nodes/0/translation", [1, 2]), "translation"),
    "rotation NaN": (_set("nodes/0/rotation", [float("nan"), 0, 0, 1]),
                     "NaN is not a JSON number"),
    "scale infinite": (_set("nodes/0/scale", [float("inf"), 1, 1]),
                       "Infinity is not a JSON number"),
    "POSITION infinite": (_position(float("inf")), "contain NaN or infinity"),
    "POSITION NaN": (_position(float("nan")), "contain NaN or infinity"),
    "scales that overflow": (lambda js: js.update(nodes=[
        {"children": [1], "scale": [1e200, 1, 1]}, {"mesh": 0, "scale": [1e200, 1, 1]}]),
        "contain NaN or infinity"),
    "NaN in a field nobody reads": (_set("nodes/0/extras", {"x": float("nan")}), "NaN"),
    "rotation of text": (_set("nodes/0/rotation", ["0", "0", "0", "1"]), "rotation"),
    "translation is null": (_set("nodes/0/translation", None), "translation"),
    "asset 5": (_set("asset", 5), "'asset' is 5"),
    "asset missing": (_drop("asset"), "no 'asset'"),
    "version 1.0": (_set("asset/version", "1.0"), "version '1.0'"),
    "count -5": (_set("accessors/1/count", -5), "count must be a whole number"),
    "count 0": (_set("accessors/0/count", 0), "count must be a whole number"),
    "count 1.5": (_set("accessors/0/count", 1.5), "count must be a whole number"),
    "count past its buffer": (_set("accessors/0/count", 400), "past the end of bufferView"),
    "byteOffset past its view": (_set("accessors/1/byteOffset", 20), "past the end of bufferView"),
    "2**31 zeros without a bufferView": (lambda js: js["accessors"][0].update(
        bufferView=None, count=2**31) or js["accessors"][0].pop("bufferView"), "too large"),
    "negative byteOffset": (_set("accessors/0/byteOffset", -4), "byteOffset"),
    "view past its buffer": (_set("bufferViews/1/byteLength", 4000), "past the end of buffer"),
    "view of a missing buffer": (_set("bufferViews/0/buffer", 3), "buffer 3"),
    "stride of 2": (_set("bufferViews/0/byteStride", 2), "byteStride"),
    "stride narrower than the data": (_set("bufferViews/0/byteStride", 8), "wider than"),
    "buffer length -1": (_set("buffers/0/byteLength", -1), "byteLength"),
    "buffer longer than its data": (_set("buffers/0/byteLength", 7200), "is truncated"),
    "buffers is a number": (_set("buffers", 7), "'buffers' must be an array"),
    "node mesh out of range": (_set("nodes/0/mesh", 4), "mesh 4"),
    "no primitives": (_set("meshes/0/primitives", []), "non-empty array"),
    "attributes not an object": (_set("meshes/0/primitives/0/attributes", [0]), "attributes"),
    "signed indices": (_set("accessors/1/componentType", 5122), "unsigned integers"),
    "POSITION not VEC3": (_set("accessors/0/type", "VEC2"), "POSITION must be a VEC3"),
    "mode 9": (_set("meshes/0/primitives/0/mode", 9), "mode must be 0 to 6"),
    "material out of range": (_set("meshes/0/primitives/0/material", 2), "material 2"),
    "child out of range": (_set("nodes/0/children", [7]), "node 7"),
    "node is its own child": (_set("nodes/0/children", [0]), "appears twice"),
    "nodes hold a number": (_set("nodes", [3]), "'nodes' must be an array of objects"),
    "attribute counts differ": (lambda js: js["meshes"][0]["primitives"][0]["attributes"]
                                .update(NORMAL=1), "different counts"),
    "sparse count over count": (_sparse(count=9), "sparse count"),
    "sparse float indices": (_sparse(indices_type=5126), "sparse indices componentType"),
    "sparse index out of range": (_sparse(offset=14), "sparse indices go past"),
    "channel sampler out of range": (_animation(sampler=4), "sampler 4"),
    "sampler input out of range": (_animation(input=12), "accessor 12"),
    "interpolation CUBIC": (_animation(interpolation="CUBIC"), "interpolation"),
    "keyframe times NaN": (_keyed([0, float("nan"), 1]), "keyframe times must be finite"),
    "keyframe times decreasing": (_keyed([0, 2, 1]), "keyframe times must be finite"),
    "keyframe times not float": (_keyed([0, 1], input_type=5125), "SCALAR float accessor"),
    "translation keyed by VEC2": (_keyed([0, 1], "VEC2"), "must be VEC3 to animate translation"),
    "rotation keyed by VEC3": (_keyed([0, 1], path="rotation"), "must be VEC4 to animate"),
    "fewer values than keys": (_keyed([0, 1, 2], nvalues=2), "has 2 values for 3 keyframes"),
    "weights without morph targets": (_keyed([0, 1], "SCALAR", path="weights"),
                                      "has no morph targets"),
    "texture source out of range": (lambda js: (_textured(js), js.update(images=[]))[0],
                                    "image 0"),
    "baseColorFactor of 3": (lambda js: js.update(materials=[{"pbrMetallicRoughness": {
        "baseColorFactor": [1, 1, 1]}}]), "baseColorFactor"),
    "Draco required": (_set("extensionsRequired", ["KHR_draco_mesh_compression"]), "Draco"),
    # past gltf_check, pygltflib's decoder meets these (it raised AttributeError)
    "a camera that is a number": (_set("cameras", [5]), "a property has a value of the wrong "
                                                        "type"),
    "normalTexture that is a number": (_set("materials", [{"normalTexture": 3}]), "wrong type"),
    "extensions that are text": (_set("extensions", "unlit"), "wrong type"),
    "corrupt image data URI": (lambda js: (_textured(js), js.update(
        images=[{"uri": "data:image/png;base64,abc"}]))[0], "corrupt data URI"),
}


def _gltf_file(mutate: Callable[[dict], None]) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        js = gltf_doc()
        mutate(js)
        (folder / "m.gltf").write_text(json.dumps(js))
        return folder / "m.gltf"

    return build


def _text(name: str, text: str | bytes, extra: dict[str, str] | None = None
          ) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        for n, t in (extra or {}).items():
            (folder / n).write_text(t)
        p = folder / name
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return p

    return build


def _glb(mutate: Callable[[bytearray], None]) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        js = gltf_doc()
        del js["buffers"][0]["uri"]
        data = bytearray(glb_bytes(js, BLOB))
        mutate(data)
        (folder / "m.glb").write_bytes(bytes(data))
        return folder / "m.glb"

    return build


def _ply(values: np.ndarray, faces: list[list[int]]) -> bytes:
    head = (f"ply\nformat binary_little_endian 1.0\nelement vertex {len(values)}\n"
            "property double x\nproperty double y\nproperty double z\n"
            f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
    rec = np.zeros(len(faces), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    rec["n"], rec["i"] = 3, faces
    return head.encode() + np.asarray(values, "<f8").tobytes() + rec.tobytes()


def _frames(*bodies: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        seq = folder / "seq"
        seq.mkdir()
        for i, body in enumerate(bodies):
            (seq / f"f_{i:04d}.obj").write_text(body)
        return seq

    return build


TETRA_OBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
MTL_OBJ = f"mtllib m.mtl\n{OBJ_BODY}"
FILE_CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "MTL Kd 0.5 abc": (_text("m.obj", MTL_OBJ, {"m.mtl": "newmtl a\nKd 0.5 abc 1\n"}),
                       "m.mtl:2: bad number in 'Kd 0.5 abc 1'"),
    "MTL d xyz": (_text("m.obj", MTL_OBJ, {"m.mtl": "newmtl a\nd xyz\n"}), "m.mtl:2: bad number"),
    "MTL Kd nan": (_text("m.obj", MTL_OBJ, {"m.mtl": "newmtl a\nKd nan 0 0\n"}),
                   "not a finite number"),
    "OBJ coordinate 1e300": (_text("m.obj", TETRA_OBJ.replace("v 1 0 0", "v 1e300 0 0")),
                             "a vertex coordinate is 1e+300"),
    "OBJ coordinate -1e20": (_text("m.obj", TETRA_OBJ.replace("v 0 1 0", "v 0 -1e20 0")),
                             "a vertex coordinate is 1e+20"),
    "OBJ coordinate inf": (_text("m.obj", TETRA_OBJ.replace("v 0 0 1", "v 0 0 inf")),
                           "NaN or infinity"),
    "OBJ coordinate nan": (_text("m.obj", TETRA_OBJ.replace("v 0 0 1", "v nan 0 1")),
                           "NaN or infinity"),
    "PLY coordinate 1e300": (_text("m.ply", _ply(np.array([[0, 0, 0], [1e300, 0, 0],
                                                           [0, 1, 0]]), [[0, 1, 2]])),
                             "a vertex coordinate is 1e+300"),
    "collinear OBJ": (_text("m.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 3 0 0\nf 1 2 3\nf 2 3 4\n"),
                      "the faces have no area"),
    "collinear PLY": (_text("m.ply", _ply(np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2],
                                                    [5, 5, 5]]), [[0, 1, 2], [1, 2, 3]])),
                      "the faces have no area"),
    "faces that welding collapses": (_text("m.obj", "v 0 0 0\nv 1 0 0\nv 1 0 0\nv 0 1 0\n"
                                                    "v 0 1 0\nf 2 3 4\nf 1 4 5\n"),
                                     "the faces have no area"),
    "one point": (_text("m.obj", "v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n"), "one point"),
    "40-byte garbage STL": (_text("m.stl", bytes(range(7, 47))), "not a valid STL"),
    "40 zero bytes STL": (_text("m.stl", b"\0" * 40), "not a valid STL"),
    "STL that is text": (_text("m.stl", "hello, this is not a mesh\n"), "not a valid STL"),
    "ASCII STL with binary bytes": (_text("m.stl", b"solid x\n facet \xff\xfe\x00\n"),
                                    "not a valid STL"),
    "STL claiming a billion triangles": (_text("m.stl", b"\0" * 80 + struct.pack(
        "<I", 10**9) + b"\0" * 120), "truncated binary STL"),
    "garbage PLY": (_text("m.ply", bytes(range(40, 80))), "cannot read PLY"),
    "frame folder with a bad later frame": (_frames(TETRA_OBJ, TETRA_OBJ,
                                                    TETRA_OBJ.replace("v 0 0 1", "v 0 0 x")),
                                            "f_0002.obj:4: bad number"),
    "frame folder with another topology": (_frames(TETRA_OBJ, "v 0 0 0\nv 1 0 0\nv 0 1 0\n"
                                                               "f 1 2 3\n"), "share one topology"),
    "truncated GLB": (_glb(lambda b: b.__delitem__(slice(60, None))), "truncated GLB"),
    "GLB version 1": (_glb(lambda b: b.__setitem__(slice(4, 8), struct.pack("<I", 1))),
                      "container version 1"),
    "GLB with a garbage JSON chunk": (_glb(lambda b: b.__setitem__(slice(20, 24), b"\xff!{[")),
                                      "corrupt GLB JSON chunk"),
    "glTF that is a JSON list": (_text("m.gltf", "[1, 2, 3]"), "not a glTF 2.0 file"),
    "glTF that is not JSON": (_text("m.gltf", "{asset: 2.0"), "not valid glTF JSON"),
    "glTF nested 100,000 deep": (_text("m.gltf", "[" * 100_000 + "]" * 100_000),
                                 "not valid glTF JSON"),
    "glTF number 1e400": (_text("m.gltf", '{"asset": {"version": "2.0"}, "x": 1e400}'),
                          "out of range"),
    "glTF in UTF-16": (_text("m.gltf", json.dumps(gltf_doc()).encode("utf-16")),
                       "not valid glTF JSON"),
}
ALL = {**{f"glTF {k}": (_gltf_file(m), n) for k, (m, n) in GLTF_CASES.items()}, **FILE_CASES}
FRAME_FOLDERS = ("frame folder with a bad later frame", "frame folder with another topology")


@pytest.mark.filterwarnings("error")  # a warning printed above the error line is a failure
@pytest.mark.parametrize("name", list(ALL))
def test_a_malformed_file_is_one_line_and_writes_nothing(name, tmp_path):
    build, needle = ALL[name]
    folder, out = tmp_path / "asset", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    src = build(folder)
    command = "info" if name in FRAME_FOLDERS else "animate"  # animate reads frame 0 only
    args = [command, str(src)] + (["-o", str(out / "a.glb")] if command == "animate" else [])
    result = runner.invoke(app, args)
    assert_one_error_line(result, needle)
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in folder.rglob("*") if p.name.startswith(".")) == []


@pytest.mark.parametrize("command", ["info", "animate"])
def test_infinite_coordinates_print_only_the_error_line(command, tmp_path):
    """In a process of its own, where NumPy's warnings reach stderr: only the error line
    (an infinite coordinate once printed a RuntimeWarning, two lines, above it)."""
    src = _gltf_file(_position(float("inf")))(tmp_path)
    args = [command, str(src)] + (["-o", str(tmp_path / "a.glb")] if command == "animate"
                                  else [])
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("neurok: error: ") and proc.stderr.count("\n") == 1, \
        proc.stderr
    assert "NaN or infinity" in proc.stderr


@pytest.mark.parametrize("name", ["glTF count -5", "glTF type VEC7", "MTL Kd 0.5 abc",
                                  "40-byte garbage STL", "collinear OBJ"])
@pytest.mark.parametrize("command", ["info", "simulate", "preview"])
def test_other_commands_refuse_the_same_files(name, command, tmp_path):
    build, needle = ALL[name]
    src = build(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    args = [command, str(src)]
    if command != "info":
        args += ["-o", str(out / ("s.glb" if command == "simulate" else "p.png"))]
    result = runner.invoke(app, args)
    assert_one_error_line(result, needle)
    assert list(out.iterdir()) == []


def _points(name: str, rows: np.ndarray | str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        p = folder / name
        if isinstance(rows, str):
            p.write_text(rows)
        else:
            np.save(p, rows, allow_pickle=True)
        return p

    return build


_CLOUD = np.random.default_rng(0).random((40, 3))
POINT_CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "points 1e300": (_points("p.npy", np.vstack([_CLOUD, [[1e300, 0, 0]]])),
                     "a coordinate is 1e+300"),
    "points NaN": (_points("p.xyz", "\n".join(["0 0 0"] * 20 + ["nan 1 2"])), "NaN"),
    "points too few": (_points("p.xyz", "0 0 0\n1 1 1\n"), "at least 16"),
    "points pickled": (_points("p.npy", np.array([{"a": 1}] * 20, dtype=object)),
                       "cannot read"),
    "points text among numbers": (_points("p.csv", "x,y,z\n" + "1,2,3\n" * 20 + "a,b,c\n"),
                                  "not a row of numbers"),
    "points of two columns": (_points("p.npy", _CLOUD[:, :2]), "expected an (N, 3) array"),
}


@pytest.mark.parametrize("name", list(POINT_CASES))
def test_a_malformed_point_cloud_is_one_line_and_writes_nothing(name, tmp_path):
    build, needle = POINT_CASES[name]
    rest = tmp_path / "rest.obj"
    rest.write_text(TETRA_OBJ)
    out = tmp_path / "out"
    out.mkdir()
    result = runner.invoke(app, ["fit", str(build(tmp_path)), "--rest", str(rest), "-o",
                                 str(out / "f.json"), "--steps", "1"])
    assert_one_error_line(result, needle)
    assert list(out.iterdir()) == []
