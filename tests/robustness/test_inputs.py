"""Hostile input files: every one is refused with one line and exit 1, writes nothing, and no
file outside the asset's folder is ever opened.

Each case builds its input under ``tmp_path/asset``; a sentinel file lives in
``tmp_path/outside``. Opens are tapped in-process (``io.open``, ``builtins.open``, ``os.open``,
which ``Path.read_bytes``/``read_text``/``open`` go through) and resolved, links followed, so a
symlink to the sentinel counts as opening it.
"""

from __future__ import annotations

import base64
import builtins
import io
import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from tests.conftest import assert_one_error_line

runner = CliRunner()
SECRET = b"SENTINEL-8c1f-do-not-read " * 8  # 208 bytes: enough to pass for any small buffer

# --- building inputs -------------------------------------------------------------------------

TETRA_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], np.uint16)
BLOB = TETRA_V.tobytes() + TETRA_F.tobytes()  # 48 + 24 bytes


def gltf_doc(buffer_uri: str | None = None, image_uri: str | None = None) -> dict:
    """A valid tetrahedron glTF; the buffer is a data URI unless ``buffer_uri`` is given, and
    a textured material points at ``image_uri`` when given."""
    data = "data:application/octet-stream;base64," + base64.b64encode(BLOB).decode()
    js = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
          "nodes": [{"mesh": 0}],
          "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
          "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
                         "min": [0, 0, 0], "max": [1, 1, 1]},
                        {"bufferView": 1, "componentType": 5123, "count": 12, "type": "SCALAR"}],
          "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48},
                          {"buffer": 0, "byteOffset": 48, "byteLength": 24}],
          "buffers": [{"byteLength": 72, "uri": buffer_uri or data}]}
    if image_uri is not None:
        js["meshes"][0]["primitives"][0]["material"] = 0
        js["materials"] = [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]
        js["textures"] = [{"source": 0}]
        js["images"] = [{"uri": image_uri}]
    return js


def glb_bytes(js: dict, bin_: bytes) -> bytes:
    """A GLB container of ``js`` and one BIN chunk."""
    text = json.dumps(js).encode()
    text += b" " * (-len(text) % 4)
    bin_ += b"\0" * (-len(bin_) % 4)
    total = 12 + 8 + len(text) + 8 + len(bin_)
    return (struct.pack("<III", 0x46546C67, 2, total) + struct.pack("<II", len(text), 0x4E4F534A)
            + text + struct.pack("<II", len(bin_), 0x004E4942) + bin_)


OBJ_BODY = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\n" \
           "usemtl a\nf 1/1 3/3 2/2\nf 1/1 2/2 4/4\nf 1/1 4/4 3/3\nf 2/2 3/3 4/4\n"


def _link(link: Path, target: Path) -> None:
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except (OSError, NotImplementedError):
        pytest.skip("symbolic links are not available here")


# --- escaping references (item 1) ------------------------------------------------------------

# style -> (reference to the sentinel ``secret.<ext>`` in ``outside``, setup in the asset folder)
Setup = Callable[[Path, Path, str], None]


def _no_setup(asset: Path, outside: Path, name: str) -> None:
    pass


def _file_link(asset: Path, outside: Path, name: str) -> None:
    _link(asset / f"link_{name}", outside / name)


def _dir_link(asset: Path, outside: Path, name: str) -> None:
    _link(asset / "shared", outside)


def _chained_link(asset: Path, outside: Path, name: str) -> None:  # inside -> inside -> out
    _link(asset / f"hop_{name}", outside / name)
    _link(asset / f"link_{name}", asset / f"hop_{name}")


STYLES: dict[str, tuple[Callable[[Path, str], str], Setup]] = {
    "absolute": (lambda out, n: str(out / n), _no_setup),
    "dotdot": (lambda out, n: f"../outside/{n}", _no_setup),
    "nested dotdot": (lambda out, n: f"sub/../../outside/{n}", _no_setup),
    "backslash dotdot": (lambda out, n: f"..\\outside\\{n}", _no_setup),
    "percent dotdot": (lambda out, n: f"%2e%2e/outside/{n}", _no_setup),
    "percent all": (lambda out, n: f"%2E%2E%2Foutside%2F{n}", _no_setup),
    "file uri": (lambda out, n: (out / n).as_uri(), _no_setup),
    "symlinked file": (lambda out, n: f"link_{n}", _file_link),
    "symlinked folder": (lambda out, n: f"shared/{n}", _dir_link),
    "chained links": (lambda out, n: f"link_{n}", _chained_link),
}
URI_ONLY = ("percent dotdot", "percent all", "file uri")  # OBJ/MTL names are paths, not URIs


def _gltf_buffer(asset: Path, ref: str) -> Path:
    (asset / "m.gltf").write_text(json.dumps(gltf_doc(buffer_uri=ref)))
    return asset / "m.gltf"


def _gltf_image(asset: Path, ref: str) -> Path:
    (asset / "m.gltf").write_text(json.dumps(gltf_doc(image_uri=ref)))
    return asset / "m.gltf"


def _glb_image(asset: Path, ref: str) -> Path:
    js = gltf_doc(image_uri=ref)
    del js["buffers"][0]["uri"]
    (asset / "m.glb").write_bytes(glb_bytes(js, BLOB))
    return asset / "m.glb"


def _obj_mtllib(asset: Path, ref: str) -> Path:
    (asset / "m.obj").write_text(f"mtllib {ref}\n{OBJ_BODY}")
    return asset / "m.obj"


def _mtl_map(asset: Path, ref: str, option: str = "") -> Path:
    (asset / "m.mtl").write_text(f"newmtl a\nKd 1 0 0\nmap_Kd {option}{ref}\n")
    (asset / "m.obj").write_text(f"mtllib m.mtl\n{OBJ_BODY}")
    return asset / "m.obj"


# reference kind -> (how the input refers to the sentinel, the sentinel's suffix)
KINDS: dict[str, tuple[Callable[[Path, str], Path], str]] = {
    "gltf buffer": (_gltf_buffer, ".bin"),
    "gltf image": (_gltf_image, ".png"),
    "glb image": (_glb_image, ".png"),
    "obj mtllib": (_obj_mtllib, ".mtl"),
    "mtl map_Kd": (_mtl_map, ".png"),
    "mtl map_Kd with options": (lambda a, r: _mtl_map(a, r, "-s 1 1 1 -bm 0.5 "), ".png"),
}
REF_CASES = [(k, s) for k in KINDS for s in STYLES
             if not (s in URI_ONLY and k.startswith(("obj", "mtl")))]


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Real paths (links followed) of every file opened by name while the test runs."""
    seen: list[str] = []
    real_io_open, real_os_open = io.open, os.open

    def note(file: object) -> None:
        if isinstance(file, (str, bytes, os.PathLike)):
            seen.append(os.path.realpath(os.fsdecode(file)))

    def io_open(file, *args, **kwargs):
        note(file)
        return real_io_open(file, *args, **kwargs)

    def os_open(path, *args, **kwargs):
        note(path)
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(builtins, "open", io_open)
    monkeypatch.setattr(os, "open", os_open)
    return seen


@pytest.fixture
def place(tmp_path) -> tuple[Path, Path, Path]:
    """(asset folder, outside folder with the sentinels, output folder)."""
    dirs = tuple(tmp_path / n for n in ("asset", "outside", "out"))
    for d in dirs:
        d.mkdir()
    (dirs[0] / "sub").mkdir()
    for suffix in (".bin", ".png", ".mtl"):
        (dirs[1] / f"secret{suffix}").write_bytes(SECRET)
    return dirs  # type: ignore[return-value]


def assert_refused(result, needle: str, out: Path) -> None:
    """Exit 1, one error line naming the problem, nothing written, no sentinel in the output."""
    assert_one_error_line(result, needle)
    assert list(out.iterdir()) == [], "an output was written"
    assert SECRET[:20].decode() not in result.output


def test_the_open_tap_sees_every_way_of_reading(opened, place):
    """The tap must see the reads it is meant to catch, or the tests below prove nothing."""
    asset, outside, _ = place
    secret = outside / "secret.bin"
    _link(asset / "link.bin", secret)
    for read in (Path.read_bytes, Path.read_text, lambda p: open(p, "rb").close(),
                 lambda p: os.close(os.open(p, os.O_RDONLY))):
        opened.clear()
        read(asset / "link.bin")
        assert str(secret.resolve()) in opened


@pytest.mark.parametrize("command", ["info", "animate", "simulate", "preview", "fit --rest"])
@pytest.mark.parametrize("kind,style", [("gltf buffer", "dotdot"), ("gltf image", "absolute"),
                                        ("mtl map_Kd", "symlinked file")])
def test_every_command_refuses_a_reference_outside(kind, style, command, opened, place):
    _check_reference(kind, style, command, opened, place)


@pytest.mark.parametrize("kind,style", REF_CASES, ids=[f"{k}-{s}" for k, s in REF_CASES])
def test_a_reference_outside_the_folder_is_refused_unread(kind, style, opened, place):
    _check_reference(kind, style, "animate", opened, place)


def _check_reference(kind: str, style: str, command: str, opened: list[str],
                     place: tuple[Path, Path, Path]) -> None:
    asset, outside, out = place
    build, suffix = KINDS[kind]
    ref_of, setup = STYLES[style]
    setup(asset, outside, f"secret{suffix}")
    src = build(asset, ref_of(outside, f"secret{suffix}"))
    outputs = {"animate": "a.glb", "simulate": "s.glb", "preview": "p.png", "fit --rest": "f.json"}
    args = [command, str(src)]
    if command == "fit --rest":  # the hostile file as the rest shape of a fit
        clean = out.parent / "clean.obj"
        clean.write_text(OBJ_BODY.replace("usemtl a\n", ""))
        args = ["fit", str(clean), "--rest", str(src), "--steps", "1"]
    if command in outputs:
        args += ["-o", str(out / outputs[command])]
    opened.clear()
    result = runner.invoke(app, args)
    assert_refused(result, "outside the asset's folder", out)
    assert str(asset) in result.stderr and f"secret{suffix}" in result.stderr
    secrets = {str((outside / f"secret{s}").resolve()) for s in (".bin", ".png", ".mtl")}
    assert not secrets & set(opened), f"opened {secrets & set(opened)}"


@pytest.mark.parametrize("kind", ["gltf buffer", "gltf image", "obj mtllib", "mtl map_Kd"])
def test_a_reference_into_a_link_loop_is_one_line(kind, place):
    asset, _, out = place
    _link(asset / "a.bin", asset / "b.bin")
    _link(asset / "b.bin", asset / "a.bin")
    src = KINDS[kind][0](asset, "a.bin")
    result = runner.invoke(app, ["animate", str(src), "-o", str(out / "a.glb")])
    assert_refused(result, "cannot be resolved", out)
