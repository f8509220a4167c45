"""``neurok animate`` end to end with the shipped weights, on real assets."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.evaluate.strain import edge_strain
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.gltf.doc import load_document
from neurok_cli.io.mesh import load_mesh
from neurok_cli.model.strain import mesh_edges
from neurok_cli.render.preview import PreviewConfig, _load_motion
from tests.conftest import ROOT, assert_one_error_line, assert_valid_gltf, asset_path

runner = CliRunner()


def animate(*args: str):
    return runner.invoke(app, ["animate", *map(str, args)])


def ours(path):
    """Frames of the animations neurok added (the file may carry its own before them)."""
    doc = load_document(path)
    names = [a.name or "" for a in doc.gltf.animations]
    picks = [i for i, n in enumerate(names) if n.startswith("neurok_")]
    return [read_animated(path, animations=[i]).frames for i in picks]


@pytest.mark.parametrize("space", ["auto", "learned"])
def test_penguin_drops_onto_the_ground_in_a_valid_glb(tmp_path, space):
    out = tmp_path / "p.glb"
    result = animate(asset_path("penguin"), "-o", out, "--seconds", "3", "--size", "0.5",
                     "--json", "--space", space)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["category"] == "soft" and report["preset"] == "drop"
    assert report["frames"] == 91 and report["samples"] == 1
    assert report["start_height_m"] == pytest.approx(0.25)  # half its 0.5 m
    assert report["conditions"]["ground"] and not report["conditions"]["pins"]
    assert_valid_gltf(out)
    (frames,) = ours(out)
    rest = load_mesh(asset_path("penguin")).vertices
    scale = np.ptp(rest, axis=0).max()
    assert np.isfinite(frames).all()
    low = frames[:, :, 1].min(axis=1)
    ground = rest[:, 1].min()  # where it stands in its file
    assert report["ground"]["at"] == pytest.approx(ground)
    # it starts half its size above the ground and falls by about that much ...
    assert low[0] == pytest.approx(ground + 0.5 * scale, abs=1e-3 * scale)
    assert low.min() < ground + 0.1 * scale
    assert low.min() > ground - 0.03 * scale  # the impact sinks it at most 3 % of its size
    assert np.abs(frames[-1] - frames[-2]).max() < 0.02 * scale  # it has settled ...
    assert abs(low[-1] - ground) < 0.01 * scale  # ... on the ground, within 1 % of its size
    if space == "auto":  # by default its own shape space, which needs no strain limit
        assert report["space"] == "handles" and report["handles"]["handles"] > 0
        assert report["strain_limit"] is None and report["strain_sweeps"] == 0
    else:  # the decoded frames keep the shipped weights' strain limit for soft bodies
        assert report["space"] == "learned" and report["handles"] is None
        assert report["strain_limit"] == pytest.approx(0.137, abs=0.01)
        assert report["strain_sweeps"] >= 0


@pytest.mark.parametrize("preset", ["drop", "poke"])
def test_a_single_triangle_lands_on_the_ground(tmp_path, preset):
    """A sheet of 3 vertices has fewer basis points than the 4 its contact points blend
    their weights from (it stopped with an internal error)."""
    out = tmp_path / "t.glb"
    result = animate(asset_path("simplemorph"), "-o", out, "--seconds", "1", "--preset", preset)
    assert result.exit_code == 0, result.output
    (frames,) = ours(out)
    assert frames.shape[1] == 3 and np.isfinite(frames).all()
    size = np.ptp(frames[0], axis=0).max()
    assert np.abs(frames[-1] - frames[0]).max() > 0.05 * size  # it moved ...
    low = frames[:, :, 1].min(axis=1)
    if preset == "drop":  # ... and fell onto the ground
        assert low[-1] < low[0] - 0.1 * size


def test_the_strain_limit_can_be_set_or_turned_off(tmp_path):
    runs = {}
    for limit in ("inf", "0.01"):
        out = tmp_path / f"s{limit}.glb"
        result = animate(asset_path("spot"), "-o", out, "--seconds", "0.5", "--preset",
                         "poke", "--strain-limit", limit, "--json")
        assert result.exit_code == 0, result.output
        runs[limit] = (json.loads(result.output), ours(out)[0])
    assert runs["inf"][0]["strain_limit"] is None and runs["inf"][0]["strain_sweeps"] == 0
    assert runs["0.01"][0]["strain_limit"] == 0.01
    rest = load_mesh(asset_path("spot"))
    edges = mesh_edges(rest.faces)
    strain = {k: edge_strain(rest.vertices, f, edges).mean() for k, (_, f) in runs.items()}
    assert strain["0.01"] < strain["inf"]


def test_same_seed_same_bytes_and_samples_differ(tmp_path):
    src = asset_path("spot")
    a, b = tmp_path / "a.glb", tmp_path / "b.glb"
    for out in (a, b):
        result = animate(src, "-o", out, "--seconds", "1", "--samples", "2", "--seed", "3",
                         "--preset", "wobble")
        assert result.exit_code == 0, result.output
    assert a.read_bytes() == b.read_bytes()
    assert_valid_gltf(a)
    first, second = ours(a)
    assert first.shape == second.shape and np.abs(first - second).max() > 0
    # the samples are alternatives: preview shows one, the first unless told, and says so
    shown = {}
    for pick in (None, "1", "neurok_wobble_0"):
        parts, positions, _, warnings = _load_motion(PreviewConfig(a, tmp_path / "p.mp4",
                                                                   animation=pick))
        shown[pick] = np.concatenate(positions, axis=1)
        assert bool(warnings) == (pick is None), warnings
    assert "'neurok_wobble_1'" in _load_motion(PreviewConfig(a, tmp_path / "p.mp4"))[3][0]
    np.testing.assert_allclose(shown[None], first, atol=1e-6)
    np.testing.assert_allclose(shown["1"], second, atol=1e-6)
    np.testing.assert_allclose(shown["neurok_wobble_0"], first, atol=1e-6)
    result = runner.invoke(app, ["preview", str(a), "-o", str(tmp_path / "p.png"),
                                 "--animation", "neurok_wobble_7"])
    assert_one_error_line(result, "no animation 'neurok_wobble_7'")


@pytest.mark.parametrize("space, hold", [("auto", "fixed"), ("learned", "clamp")])
def test_pinned_beam_sways_and_its_clamp_stays_put(tmp_path, space, hold):
    """A long box pinned at x < 0.05 (the sway preset for beams): its own space holds the
    region as one fixed handle, the learned space as a clamp."""
    src = tmp_path / "beam.obj"
    box = trimesh.creation.box(extents=(1.0, 0.08, 0.08))
    box = box.subdivide().subdivide().subdivide()
    box.export(src)
    out = tmp_path / "beam.glb"
    result = animate(src, "-o", out, "--seconds", "2", "--json", "--space", space)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["category"] == "beam" and report["preset"] == "sway"
    assert report["pins"]["hold"] == hold and report["pins"]["points"] > 0
    (frames,) = ours(out)
    rest = load_mesh(src).vertices
    held = rest[:, 0] - rest[:, 0].min() < 0.05 * np.ptp(rest[:, 0])
    assert np.abs(frames[:, held] - rest[held]).max() < 1e-5
    tip = rest[:, 0] > rest[:, 0].max() - 0.05
    assert np.abs(frames[:, tip] - rest[tip]).max() > 1e-3  # the free end moves


@pytest.mark.parametrize("space, hold", [("auto", "fixed"), ("learned", "hinge")])
def test_a_sheet_held_by_a_narrow_edge_hangs_from_it(tmp_path, space, hold):
    """A 1 m sheet lying flat, held by a strip two vertices wide along one edge, falls and
    hangs from it, as the engine's does (the learned space holds such a strip as a hinge);
    the pinned vertices stay put."""
    src = tmp_path / "sheet.obj"
    n = 30
    x, z = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    v = np.stack([x.ravel(), np.ones(n * n), z.ravel()], 1)
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (i * n + j).ravel()
    faces = np.concatenate([np.stack([a, a + 1, a + n], 1), np.stack([a + 1, a + n + 1, a + n], 1)])
    trimesh.Trimesh(v, faces).export(src)
    out = tmp_path / "sheet.glb"
    result = animate(src, "-o", out, "--material", "cloth", "--pin", "x<0.05", "--no-ground",
                     "--preset", "free", "--seconds", "1.5", "--json", "--space", space)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    pins = report["pins"]
    assert pins["vertices"] == 2 * n and pins["points"] > 0 and pins["hold"] == hold
    (frames,) = ours(out)
    rest = load_mesh(src).vertices
    held = rest[:, 0] < 0.05
    assert np.abs(frames[:, held] - rest[held]).max() < 1e-5
    far = rest[:, 0] > 0.95
    drop = rest[far, 1].mean() - frames[:, far, 1].mean(axis=1)  # (T,)
    assert drop.max() > 0.75  # hangs nearly straight down from its edge at some point
    # (on its way down still air holds it back: the flat sheet's terminal speed is ~3 m/s)


@pytest.mark.parametrize("args, needle", [
    (["missing.obj", "-o", "x.glb"], "missing.obj"),
    (["{spot}", "-o", "x.glb", "--preset", "jump"], "--preset"),
    (["{spot}", "-o", "x.glb", "--material", "unobtainium"], "--material"),
    (["{spot}", "-o", "x.glb", "--weights", "nowhere"], "--weights"),
    (["{spot}", "-o", "x.xyz"], "output format"),
    (["{spot}", "-o", "x.ply"], "--format ply"),
    (["{spot}", "-o", "x.png"], "neurok preview x.glb -o x.png"),
    (["{spot}", "-o", "x.glb", "--pin", "y>2"], "selects no"),
    (["{spot}", "-o", "x.glb", "--samples", "0"], "--samples"),
    (["{spot}", "-o", "x.glb", "--strain-limit", "-0.1"], "--strain-limit must be a number from 0"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, args, needle):
    args = [a.replace("{spot}", str(asset_path("spot"))) for a in args]
    args = [str(tmp_path / a) if a.endswith((".glb", ".xyz", ".ply", ".png")) else a for a in args]
    result = animate(*args)
    assert_one_error_line(result, needle)
    assert not list(tmp_path.glob("*"))


def test_animating_an_output_again_does_not_replay_the_earlier_motion(tmp_path):
    """An animated file of ours as input: its motion is an earlier result, kept after the new
    one as it was, but not added into it (its weights are not folded into ours). Held still
    (no gravity, no ground), the new first animation stays at the rest."""
    from tests.conftest import ROOT

    first = tmp_path / "drop.glb"
    made = runner.invoke(app, ["animate", str(ROOT / "examples" / "blob.obj"), "-o", str(first),
                               "--seconds", "0.5"])
    assert made.exit_code == 0, made.output
    again = tmp_path / "still.glb"
    made = runner.invoke(app, ["animate", str(first), "-o", str(again), "--seconds", "0.5",
                               "--preset", "free", "--no-ground", "--gravity", "0,0,0"])
    assert made.exit_code == 0, made.output
    assert_valid_gltf(again)
    dropped = read_animated(first).frames
    size = float(np.ptp(dropped[0], axis=0).max())
    assert float(np.abs(dropped[-1] - dropped[0]).max()) > 0.1 * size  # it did fall
    still = read_animated(again, animations=[0]).frames
    assert float(np.abs(still - still[0]).max()) < 1e-4 * size
    assert float(np.abs(still[0] - dropped[0]).max()) < 1e-4 * size
    names = [a.name for a in load_document(again).gltf.animations]
    assert names[0] != names[1] and len(names) == 2  # the earlier motion is kept, second


def test_handles_set_the_object_s_own_space_and_its_page_s_model(tmp_path):
    """Fewer handles, a coarser model: the summary and the page's model say how many."""
    import base64
    import re
    import zlib

    from neurok_cli.io.reduced import unpack

    blob = ROOT / "examples" / "blob.obj"
    reports = {}
    for n in (8, None):
        out = tmp_path / f"blob{n}.html"
        result = animate(blob, "-o", out, "--seconds", "0.3", "--json",
                         *(["--handles", str(n)] if n else []))
        assert result.exit_code == 0, result.output
        reports[n] = json.loads(result.output)["handles"]
        text = out.read_text()
        model = unpack(zlib.decompress(base64.b64decode(
            re.search(r'id="neurok-live">([^<]*)<', text).group(1))))
        assert model.values["handles"] == reports[n]["handles"]
    assert reports[8]["handles"] == 8 and reports[None]["handles"] == 24
    assert reports[8]["coordinates"] < reports[None]["coordinates"]


def test_samples_in_the_object_s_own_space(tmp_path):
    """--samples stays in the object's own space: the first motion is the conditions' alone
    (the single run's, within the file's encoding), the others start over its low modes."""
    one, two = tmp_path / "one.glb", tmp_path / "two.glb"
    reports = {}
    for out, extra in ((one, []), (two, ["--samples", "2", "--seed", "4"])):
        result = animate(ROOT / "examples" / "blob.obj", "-o", out, "--seconds", "1",
                         "--handles", "8", "--json", *extra)
        assert result.exit_code == 0, result.output
        reports[out] = json.loads(result.output)
    assert reports[two]["space"] == "handles" and reports[two]["samples"] == 2
    first, second = ours(two)
    (alone,) = ours(one)
    size = float(np.ptp(alone[0], axis=0).max())
    diagonal = float(np.linalg.norm(np.ptp(alone[0], axis=0)))
    # each file's compact encoding keeps every vertex within 1e-3 of the diagonal, both
    # samples' ranges sharing one encoding (the motions themselves are the same to the bit)
    np.testing.assert_allclose(first, alone, rtol=0, atol=2e-3 * diagonal)
    assert 0.005 * size < np.abs(second - first).max() < 0.5 * size  # another, nearby motion
    assert_valid_gltf(two)


@pytest.mark.parametrize("args, needle", [
    (["--handles", "2"], "--handles must be a whole number from 4 to 256, not 2"),
    (["--handles", "8", "--space", "learned"], "not --space learned's"),
])
def test_handles_that_cannot_be_had_are_refused(tmp_path, args, needle):
    result = animate(ROOT / "examples" / "blob.obj", "-o", tmp_path / "x.glb", *args)
    assert_one_error_line(result, needle)
