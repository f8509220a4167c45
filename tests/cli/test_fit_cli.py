"""``neurok fit`` end to end with the shipped weights: a deformed mesh, a point cloud, and a
sequence continued by ``--then-animate``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.data.geometry import sample_surface
from neurok_cli.deform.learned.motion import encode_object
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.io.gltf import read_animated
from neurok_cli.io.mesh import canonical_frame, load_mesh
from neurok_cli.model import load_bundle
from tests.conftest import ROOT, assert_one_error_line, assert_valid_gltf, asset_path

runner = CliRunner()
BLOB = ROOT / "examples" / "blob.obj"


def fit(*args) -> dict:
    result = runner.invoke(app, ["fit", *map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def write_obj(path: Path, v: np.ndarray, f: np.ndarray) -> None:
    path.write_text("".join(f"v {a:.9g} {b:.9g} {c:.9g}\n" for a, b, c in v)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f))


def _deformed(mesh: Path, folder: Path, seed: int = 2) -> tuple[Path, np.ndarray]:
    """``mesh`` in a state the model can express: its decode at a latent one prior-sigma
    from the mean (file vertices, same topology), written to ``folder``."""
    model, _ = load_bundle(resolve_weights("neurok-base"), torch.device("cpu"))
    asset = load_mesh(mesh)
    frame, welded = canonical_frame(asset), asset.welded()
    vc = frame.to_canonical(welded.vertices)
    prior, *_ = encode_object(model, vc, welded.faces, 0)
    z = prior.mu + torch.randn(prior.mu.shape, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        d = model.decode(z, prior, torch.as_tensor(vc, dtype=torch.float32)[None])[0].numpy()
    shape = frame.from_canonical(vc + d)[welded.index]
    path = folder / "deformed.obj"
    write_obj(path, shape, asset.faces)
    return path, shape


@pytest.fixture(scope="module")
def deformed(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """The blob, deformed (see _deformed)."""
    return _deformed(BLOB, tmp_path_factory.mktemp("fit"))


def _turned_cloud(shape: np.ndarray, faces: np.ndarray, path: Path) -> np.ndarray:
    """2,048 points of ``shape`` turned 17 degrees about +Y and moved, written to ``path``;
    returns the turn."""
    R = Rotation.from_rotvec([0.0, 0.3, 0.0]).as_matrix()
    moved = shape @ R.T + np.array([0.2, 0.5, -0.1])
    cloud, _, _ = sample_surface(moved, faces, 2048, np.random.default_rng(0))
    np.savetxt(path, cloud)
    return R


def test_a_deformed_mesh_of_the_same_topology_is_recovered(deformed, tmp_path):
    """In the object's own space by default (the learned decoder's shape is not in it)."""
    path, _ = deformed
    doc = fit(path, "--rest", BLOB, "-o", tmp_path / "f.json")
    assert doc["mode"] == "correspondence" and doc["frames"] == 1
    assert doc["space"] == "handles" and doc["weights"] == ""
    assert doc["latent_dim"] == len(doc["shapes"][0]["coordinates"]) == 12 * doc["handles"]
    assert doc["chamfer_l1"]["mean"] <= 0.002
    assert doc["chamfer_l1"]["mean"] < 0.2 * doc["rest_chamfer_l1"]
    assert doc["shapes"][0]["vertex_error"] < 0.01
    assert json.loads((tmp_path / "f.json").read_text())["shapes"] == doc["shapes"]


def test_a_deformed_mesh_is_recovered_in_the_learned_space_too(deformed, tmp_path):
    path, _ = deformed
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        doc = fit(path, "--rest", BLOB, "-o", tmp_path / "f.json", "--space", "learned")
        assert torch.get_num_threads() == 2  # fit runs on one thread, then gives them back
    finally:
        torch.set_num_threads(threads)
    assert doc["space"] == "learned" and doc["mode"] == "correspondence"
    assert doc["latent_dim"] == len(doc["shapes"][0]["z"])
    assert doc["chamfer_l1"]["mean"] <= 0.01
    assert doc["chamfer_l1"]["mean"] < 0.5 * doc["rest_chamfer_l1"]


def test_a_moved_point_cloud_is_recovered(deformed, tmp_path):
    path, shape = deformed
    _turned_cloud(shape, load_mesh(BLOB).faces, tmp_path / "c.xyz")
    doc = fit(tmp_path / "c.xyz", "--rest", BLOB, "-o", tmp_path / "c.json")
    assert doc["mode"] == "chamfer" and doc["observed"] == "points"
    assert doc["chamfer_l1"]["mean"] <= 0.02
    # its turn about the up axis is not asked for: the blob is nearly round about it, and a
    # decoder that can bend it takes part of the turn as a bend at the same Chamfer-L1
    # (measured over three deformations: 7-11 degrees off with the first weights, 8-15
    # with the current ones; the penguin below, 0.2-0.6 with both)


def test_a_moved_point_cloud_of_an_asymmetric_shape_is_recovered_with_its_pose(tmp_path):
    """In the learned space."""
    mesh = asset_path("penguin")
    _, shape = _deformed(mesh, tmp_path)
    R = _turned_cloud(shape, load_mesh(mesh).faces, tmp_path / "c.xyz")
    doc = fit(tmp_path / "c.xyz", "--rest", mesh, "-o", tmp_path / "c.json", "--space",
              "learned")
    assert doc["mode"] == "chamfer" and doc["chamfer_l1"]["mean"] <= 0.01
    # the cloud's own sampling leaves ~0.0075, so the fit is near it, the rest pose not
    assert doc["chamfer_l1"]["mean"] < 0.7 * doc["rest_chamfer_l1"]
    got = np.array(doc["shapes"][0]["rotation"])
    # the turn comes back as a rotation, not as a deformation
    assert np.degrees(Rotation.from_matrix(got @ R.T).magnitude()) < 2.0


def _continued(seq: Path, cont: Path) -> tuple[float, float]:
    """How far the continuation's first frame is from the sequence's last, and how its
    first step differs from the sequence's last, in sizes (per frame)."""
    observed = read_animated(seq).frames
    # the first animation is the continuation (the sequence's own follows it, as it was)
    continued = read_animated(cont, animations=[0]).frames
    size = np.ptp(observed[0], axis=0).max()
    gap = np.linalg.norm(continued[0] - observed[-1], axis=1).mean() / size
    jump = np.linalg.norm((continued[1] - continued[0]) - (observed[-1] - observed[-2]),
                          axis=1).mean() / size
    return gap, jump


def test_a_moved_point_cloud_is_recovered_in_the_object_s_own_space(tmp_path):
    """No correspondences: the rest's rigid pose from nearest points both ways, then its
    handles by rounds of nearest points and least squares."""
    mesh = asset_path("penguin")
    _, shape = _deformed(mesh, tmp_path)
    R = _turned_cloud(shape, load_mesh(mesh).faces, tmp_path / "c.xyz")
    doc = fit(tmp_path / "c.xyz", "--rest", mesh, "-o", tmp_path / "c.json")
    assert doc["space"] == "handles" and doc["mode"] == "chamfer"
    assert doc["chamfer_l1"]["mean"] <= 0.01  # the cloud's own sampling leaves ~0.0075
    assert doc["chamfer_l1"]["mean"] < 0.8 * doc["rest_chamfer_l1"]
    got = np.array(doc["shapes"][0]["rotation"])
    assert np.degrees(Rotation.from_matrix(got @ R.T).magnitude()) < 5.0


def test_a_sequence_continues_in_the_object_s_own_space(tmp_path):
    """animate's own clip lies in the rest's own space: the fit holds it exactly and the
    continuation starts where and as fast as it ended."""
    seq = tmp_path / "seq.glb"
    made = runner.invoke(app, ["animate", str(BLOB), "-o", str(seq), "--seconds", "0.4",
                               "--preset", "wobble"])
    assert made.exit_code == 0, made.output
    cont = tmp_path / "cont.glb"
    doc = fit(seq, "-o", tmp_path / "s.json", "--then-animate", cont, "--seconds", "0.3")
    assert doc["space"] == "handles" and doc["frames"] == 13
    assert doc["chamfer_l1"]["max"] <= 1e-3
    last = doc["initial_conditions"]["last"]
    assert len(last["coordinates_dot"]) == doc["latent_dim"] and "z" not in last
    assert doc["animation"]["space"] == "handles" and doc["animation"]["preset"] == "free"
    assert_valid_gltf(cont)
    gap, jump = _continued(seq, cont)
    assert gap < 2e-3, gap
    step = np.linalg.norm(np.diff(read_animated(seq).frames[-2:], axis=0), axis=-1).mean()
    assert jump < 0.3 * step / np.ptp(read_animated(seq).frames[0], axis=0).max(), jump
    # a setting only the learned space has cannot continue a start fitted in the own one
    result = runner.invoke(app, ["fit", str(seq), "-o", str(tmp_path / "t.json"),
                                 "--then-animate", str(tmp_path / "t.glb"),
                                 "--strain-limit", "inf"])
    assert result.exit_code == 1
    assert_one_error_line(result, "own space")
    assert not (tmp_path / "t.glb").exists()


def test_a_sequence_gives_initial_conditions_and_continues(tmp_path):
    # in the learned space: a sequence the reduced latent space holds exactly (frames as
    # decoded: the strain limit moves them off it, and the continuation starts from what
    # the reduced coordinates hold of the fitted state, as for any sequence made elsewhere)
    seq = tmp_path / "seq.glb"
    made = runner.invoke(app, ["animate", str(BLOB), "-o", str(seq), "--seconds", "0.4",
                               "--preset", "wobble", "--strain-limit", "inf"])
    assert made.exit_code == 0, made.output
    cont = tmp_path / "cont.glb"
    doc = fit(seq, "-o", tmp_path / "s.json", "--steps", "60", "--then-animate", cont,
              "--seconds", "0.3", "--strain-limit", "inf", "--space", "learned")
    assert doc["observed"] == "sequence" and doc["frames"] == 13
    assert doc["chamfer_l1"]["max"] <= 0.02
    first, last = doc["initial_conditions"]["first"], doc["initial_conditions"]["last"]
    assert first["frame"] == 0 and last["frame"] == 12
    # pushed sideways at the top at t = 0: the sequence moves along +x
    assert first["velocity"][0] > 0 or first["spin"][2] < 0
    assert doc["animation"]["preset"] == "free" and doc["animation"]["strain_limit"] is None
    assert_valid_gltf(cont)
    gap, _ = _continued(seq, cont)  # the continuation starts where the sequence ended
    assert gap < 0.03, gap


def test_a_unitless_sequence_continues_at_the_size_given(tmp_path):
    """Frames in OBJ have no units: --size reaches the continuation's physics, as it does
    animate's."""
    folder = tmp_path / "frames"
    made = runner.invoke(app, ["animate", str(BLOB), "-o", str(folder), "--format", "obj",
                               "--seconds", "0.2", "--preset", "wobble"])
    assert made.exit_code == 0, made.output
    doc = fit(folder, "-o", tmp_path / "s.json", "--steps", "20", "--then-animate",
              tmp_path / "cont.glb", "--seconds", "0.1", "--size", "0.25")
    assert doc["animation"]["size_m"] == pytest.approx(0.25)
    assert not any("--size" in w for w in doc["animation"]["warnings"])


def test_bad_inputs_fail_in_one_line_without_output(tmp_path, deformed):
    path, _ = deformed
    out = tmp_path / "o.json"
    cases = [
        (["fit", str(path), "-o", str(out)], "--rest"),
        (["fit", str(tmp_path / "none.obj"), "--rest", str(BLOB), "-o", str(out)],
         "no such file"),
        (["fit", str(path), "--rest", str(BLOB), "-o", str(out), "--then-animate",
          str(tmp_path / "a.glb")], "sequence"),
        (["fit", str(path), "--rest", str(BLOB), "-o", str(out), "--from", "middle"],
         "--from"),
        (["fit", str(path), "--rest", str(BLOB), "-o", str(out), "--animation", "1"],
         "not a glTF file"),
        (["fit", str(ROOT / "examples" / "flag.glb"), "-o", str(out), "--animation", "sway"],
         "no animation 'sway'"),
    ]
    (tmp_path / "few.xyz").write_text("0 0 0\n1 1 1\n")
    cases.append((["fit", str(path), "--rest", str(BLOB), "-o", str(out), "--space", "own"],
                  "unknown"))
    cases.append((["fit", str(tmp_path / "few.xyz"), "--rest", str(BLOB), "-o", str(out)],
                  "at least 16"))
    for args, words in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 1, (args, result.output)
        assert_one_error_line(result, words)
        assert not out.exists() and not (tmp_path / "a.glb").exists()
