"""The web page writer (render/page.py): one self-contained file holding the clip."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.mesh import load_mesh
from neurok_cli.io.reduced import ReducedModel
from neurok_cli.render.export import ExportOptions, export_motion
from neurok_cli.render.page import MODULES
from tests.conftest import ROOT, assert_one_error_line, assert_valid_gltf, wobble


def _page(tmp_path, caption="blob.obj: <soft> & co"):
    asset = load_mesh(ROOT / "examples" / "blob.obj")
    motion = wobble(asset.vertices, frames=10)
    out = tmp_path / "clip.html"
    result = export_motion(asset, [motion], out, fps=30, options=ExportOptions(caption=caption))
    return asset, motion, out, result


def test_the_page_holds_three_js_the_clip_and_its_framing(tmp_path):
    asset, motion, out, result = _page(tmp_path)
    assert result.fmt == "html" and result.bytes == out.stat().st_size < 3e6
    text = out.read_text()
    imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', text).group(1))
    assert set(imports["imports"]) == set(MODULES)
    three = base64.b64decode(imports["imports"]["three"].split(",", 1)[1]).decode()
    assert 'from"three/core"' in three and "three.core.min.js" not in three
    assert "Copyright" in text.rsplit("<!--", 1)[1]  # three.js's licence, kept
    glb = tmp_path / "inside.glb"
    glb.write_bytes(base64.b64decode(re.search(r'id="neurok-model">([^<]*)<', text).group(1)))
    assert_valid_gltf(glb)
    played = read_animated(glb, fps=30, animations=[0]).frames
    diag = float(np.linalg.norm(np.ptp(asset.vertices, axis=0)))
    assert np.abs(played - motion).max() / diag < 2e-3  # the compact encoding's error
    config = json.loads(re.search(r'id="neurok-config">(.*?)</script>', text).group(1))
    lo = played.reshape(-1, 3).min(axis=0)
    assert config["ground"] < lo[1] and config["radius"] > 0.5 * diag * 0.9
    assert config["caption"] == "blob.obj: <soft> & co"
    assert "blob.obj: &lt;soft&gt; &amp; co" in text  # shown escaped


def test_animate_writes_a_page_and_refuses_what_a_page_cannot_hold(tmp_path):
    runner = CliRunner()
    blob = str(ROOT / "examples" / "blob.obj")
    out = tmp_path / "blob.html"
    result = runner.invoke(app, ["animate", blob, "-o", str(out), "--seconds", "0.3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["export"]["format"] == "html" and out.is_file()
    assert "blob.obj: soft, 0.5 m, drop (neurok animate)" in out.read_text()
    bad = tmp_path / "small.html"
    assert_one_error_line(runner.invoke(app, ["animate", blob, "-o", str(bad), "--meshopt"]),
                          "--meshopt compresses glTF output")
    assert not bad.exists()


def _live(text: str):
    import zlib

    from neurok_cli.io.reduced import unpack

    found = re.search(r'id="neurok-live">([^<]*)<', text)
    return None if found is None else unpack(zlib.decompress(base64.b64decode(found.group(1))))


def test_a_page_holds_the_reduced_model_where_the_object_s_own_handles_moved_it(tmp_path):
    """Bound to the page's vertices: world = [x, 1] @ page_from_model puts the model's rest
    where the clip starts, for a file read +Y up and one read Z-up (turned by the GLB's root
    node)."""
    runner = CliRunner()
    blob = str(ROOT / "examples" / "blob.obj")
    for up in ("y", "z"):
        out = tmp_path / f"blob_{up}.html"
        result = runner.invoke(app, ["animate", blob, "-o", str(out), "--seconds", "0.3",
                                     "--up", up, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["export"]["live"] is True
        text = out.read_text()
        assert json.loads(re.search(r'id="neurok-config">(.*?)</script>', text).group(1))["live"]
        model = _live(text)
        glb = tmp_path / "inside.glb"
        glb.write_bytes(base64.b64decode(re.search(r'id="neurok-model">([^<]*)<', text).group(1)))
        start = read_animated(glb, fps=30, animations=[0]).frames[0]
        a = model.arrays
        rest = np.concatenate([a["rest"][a["page_vertex"]], np.ones((len(start), 1))], axis=1)
        diag = float(np.linalg.norm(np.ptp(start, axis=0)))
        assert np.abs(rest @ a["page_from_model"] - start).max() < 1e-4 * diag


def test_a_page_of_what_the_handles_did_not_move_plays_the_clip_alone(tmp_path):
    """simulate's clips and the bundle's latent space have no reduced model to step; a page
    whose meshes do not list the asset's vertices gets none either."""
    from neurok_cli.render.page import live_model

    text = _page(tmp_path)[2].read_text()
    assert _live(text) is None
    assert not json.loads(re.search(r'id="neurok-config">(.*?)</script>', text).group(1))["live"]
    model = ReducedModel({"rest": np.eye(4)[:, :3]}, {"handles": 8})
    A = np.eye(4)[:, :3]
    assert live_model(model, np.arange(4), A, np.eye(4), np.eye(4)[:, :3]) is not None
    assert live_model(model, np.arange(4), A, np.eye(4), np.eye(5)[:, :3]) is None  # count
    assert live_model(model, np.arange(4)[::-1], A, np.eye(4), np.eye(4)[:, :3]) is None
    model.values["handles"] = 200  # more than a page steps live
    assert live_model(model, np.arange(4), A, np.eye(4), np.eye(4)[:, :3]) is None
