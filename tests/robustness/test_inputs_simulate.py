"""Real but messy inputs: scanned surfaces (holes, duplicated faces, non-manifold edges, stray
vertices, extra vertex properties) and flat sheets simulate, and every shared asset does; and
references that stay inside the asset's folder keep working."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.mesh import load_mesh
from tests.conftest import ASSET_FILES, assert_one_error_line, asset_path
from tests.robustness.test_inputs import BLOB, OBJ_BODY, gltf_doc

runner = CliRunner()


def _sphere(n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """A UV sphere (n rings, 2n segments; the poles are rings of coincident vertices)."""
    th, ph = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, 2 * n,
                                                               endpoint=False), indexing="ij")
    v = np.stack([np.sin(th) * np.cos(ph), np.cos(th), np.sin(th) * np.sin(ph)], -1)
    idx = np.arange(n * 2 * n).reshape(n, 2 * n)
    a, b = idx[:-1], np.roll(idx, -1, axis=1)[:-1]
    c, d = idx[1:], np.roll(idx, -1, axis=1)[1:]
    f = np.concatenate([np.stack([a, c, b], -1).reshape(-1, 3),
                        np.stack([b, c, d], -1).reshape(-1, 3)])
    return v.reshape(-1, 3), f


def _scan(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A sphere as a scanner leaves it: noise, holes, flipped patches, duplicated faces (both
    windings), a fin of three faces on one edge and a bowtie on one vertex (non-manifold), a
    zero-area face, a floating island and stray points no face uses."""
    rng = np.random.default_rng(seed)
    v, f = _sphere()
    v = v + rng.normal(0, 2e-3, v.shape)
    f = f[rng.random(len(f)) > 0.06]  # holes
    flip = rng.random(len(f)) < 0.1
    f[flip] = f[flip][:, ::-1]
    f = np.vstack([f, f[:40], f[40:70, ::-1]])  # duplicates
    n = len(v)
    extra = [[0.3, 1.3, 0.0], [0.2, 1.2, 0.2], [-0.2, 1.4, 0.1],  # fin tips
             [2.0, 0, 0], [2.1, 0, 0], [2.2, 0, 0],  # a zero-area face
             [0, 0, 2.0], [0.1, 0, 2.0], [0, 0.1, 2.0],  # an island
             [0, 2.0, 0], [0.1, 2.1, 0], [-0.1, 2.1, 0], [0.1, 1.9, 0], [-0.1, 1.9, 0]]
    v = np.vstack([v, extra, rng.normal(0, 0.3, (12, 3))])  # then stray points
    a, b = f[0, 0], f[0, 1]
    f = np.vstack([f, [[a, b, n], [a, b, n + 1], [b, a, n + 2], [n + 3, n + 4, n + 5],
                       [n + 6, n + 7, n + 8], [n + 9, n + 10, n + 11], [n + 9, n + 12, n + 13]]])
    return v, f


def _write_ply(path: Path, v: np.ndarray, f: np.ndarray, *, extra: bool = True) -> Path:
    """Binary PLY; with ``extra``, the properties scanners add (normals, colour, confidence)."""
    props = [("x", "<f4"), ("y", "<f4"), ("z", "<f4")]
    if extra:
        props += [("nx", "<f4"), ("ny", "<f4"), ("nz", "<f4"), ("red", "u1"), ("green", "u1"),
                  ("blue", "u1"), ("confidence", "<f4")]
    names = {"<f4": "float", "u1": "uchar"}
    head = "ply\nformat binary_little_endian 1.0\ncomment scanned\n"
    head += f"element vertex {len(v)}\n" + "".join(f"property {names[t]} {n}\n"
                                                    for n, t in props)
    head += f"element face {len(f)}\nproperty list uchar int vertex_indices\nend_header\n"
    rows = np.zeros(len(v), dtype=props)
    rows["x"], rows["y"], rows["z"] = v.T
    if extra:
        rows["ny"], rows["red"], rows["confidence"] = 1.0, 200, 0.5
    faces = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    faces["n"], faces["i"] = 3, f
    path.write_bytes(head.encode() + rows.tobytes() + faces.tobytes())
    return path


def _sheet(n: int = 12, tilt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A flat square sheet of zero thickness in the XZ plane (or tilted out of it)."""
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    v = np.stack([x.ravel(), np.zeros(n * n), z.ravel()], -1)
    if tilt:
        c, s = np.cos(0.6), np.sin(0.6)
        v = v @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T
    i = np.arange(n * n).reshape(n, n)
    f = np.concatenate([np.stack([i[:-1, :-1], i[1:, :-1], i[:-1, 1:]], -1).reshape(-1, 3),
                        np.stack([i[:-1, 1:], i[1:, :-1], i[1:, 1:]], -1).reshape(-1, 3)])
    return v, f


def _simulate(src: Path, out: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["simulate", str(src), "-o", str(out), "--seconds", "0.1",
                                 "--json", *extra])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    frames = read_animated(out).frames
    assert frames.shape[1] == len(load_mesh(src).vertices) and np.isfinite(frames).all()
    return report


@pytest.mark.parametrize("extra", [[], ["--material", "cloth"], ["--dof", "tet"],
                                   ["--max-vertices", "100"], ["--material", "beam"]],
                         ids=["auto", "cloth", "tet", "proxy", "beam"])
def test_a_messy_scan_simulates(extra, tmp_path):
    src = _write_ply(tmp_path / "scan.ply", *_scan())
    report = _simulate(src, tmp_path / "s.glb", *extra)
    assert report["simulated_vertices"] < report["welded_vertices"]  # strays stay out


def test_a_flat_sheet_is_cloth_unless_told_otherwise(tmp_path):
    src = _write_ply(tmp_path / "sheet.ply", *_sheet(), extra=False)
    assert _simulate(src, tmp_path / "s.glb")["material"] == "cloth"
    assert _simulate(src, tmp_path / "silk.glb", "--material", "silk")["material"] == "cloth"


@pytest.mark.parametrize("material", ["soft", "beam", "rubber"])
def test_a_flat_sheet_as_a_solid_is_one_line(material, tmp_path):
    src = _write_ply(tmp_path / "sheet.ply", *_sheet(), extra=False)
    out = tmp_path / "solid.glb"
    result = runner.invoke(app, ["simulate", str(src), "-o", str(out), "--material", material])
    assert_one_error_line(result, f"cannot be simulated as {material}")
    assert "use --material cloth" in result.stderr and not out.exists()


def test_a_tilted_flat_sheet_simulates_as_cloth(tmp_path):
    src = _write_ply(tmp_path / "tilted.ply", *_sheet(tilt=True), extra=False)
    _simulate(src, tmp_path / "t.glb", "--material", "cloth")


@pytest.mark.parametrize("name", list(ASSET_FILES))
def test_every_shared_asset_simulates(name, tmp_path):
    src = asset_path(name)
    report = _simulate(src, tmp_path / f"{name}.glb")
    assert report["rejected"] is None


# --- references inside the folder keep working ---------------------------------------------


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("buffer_ref,image_ref", [
    ("m.bin", "t.png"), ("my%20mesh.bin", "my%20tex.png"), ("sub/../m.bin", "./t.png"),
    ("sub/m.bin", "sub/t.png"), ("inner_link.bin", "inner_link.png")])
def test_references_inside_the_folder_are_read(buffer_ref, image_ref, tmp_path):
    folder = tmp_path / "asset"
    (folder / "sub").mkdir(parents=True)
    png = _png()
    for name, data in (("m.bin", BLOB), ("my mesh.bin", BLOB), ("sub/m.bin", BLOB),
                       ("t.png", png), ("my tex.png", png), ("sub/t.png", png)):
        (folder / name).write_bytes(data)
    try:
        (folder / "inner_link.bin").symlink_to(folder / "sub" / "m.bin")
        (folder / "inner_link.png").symlink_to("t.png")
    except (OSError, NotImplementedError):
        if "link" in buffer_ref:
            pytest.skip("symbolic links are not available here")
    (folder / "m.gltf").write_text(json.dumps(gltf_doc(buffer_uri=buffer_ref,
                                                       image_uri=image_ref)))
    result = runner.invoke(app, ["info", str(folder / "m.gltf"), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["vertices"] == 4 and info["parts"][0]["texture"]


def test_an_obj_with_its_mtl_and_texture_beside_it_keeps_the_texture(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "t.png").write_bytes(_png())
    (tmp_path / "lib" / "m.mtl").write_text("newmtl a\nKd 1 0 0\nmap_Kd -s 1 1 1 t.png\n")
    (tmp_path / "m.obj").write_text(f"mtllib lib/m.mtl\n{OBJ_BODY}")
    asset = load_mesh(tmp_path / "m.obj")
    assert asset.parts[0].material.texture == (tmp_path / "lib" / "t.png").read_bytes()


def test_a_shared_asset_copied_elsewhere_keeps_its_texture(tmp_path):
    """The capsule's OBJ names its MTL, and the MTL its JPEG, beside them: a copy of the
    folder anywhere keeps the texture."""
    src = asset_path("capsule").parent
    copy = shutil.copytree(src, tmp_path / "capsule")
    asset = load_mesh(copy / "capsule.obj")
    assert asset.parts[0].material.texture == (src / "capsule0.jpg").read_bytes()


@pytest.mark.parametrize("ref", ["../secret.bin", "%2e%2e/secret.bin"])
def test_the_installed_command_refuses_in_its_own_process(ref, tmp_path):
    """A real process: the one line is on stderr, stdout is empty, the exit status is 1."""
    (tmp_path / "secret.bin").write_bytes(BLOB)
    folder = tmp_path / "asset"
    folder.mkdir()
    (folder / "m.gltf").write_text(json.dumps(gltf_doc(buffer_uri=ref)))
    out = tmp_path / "o.glb"
    proc = subprocess.run([sys.executable, "-m", "neurok_cli", "animate", str(folder / "m.gltf"),
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "outside the asset's folder" in lines[0] and ref in lines[0]
    assert not out.exists()
