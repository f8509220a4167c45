"""USD output: USD's own checks pass, and the stage read back reproduces our frames."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.io.asset import Material
from neurok_cli.io.frames import read_frames
from neurok_cli.io.mesh import load_mesh
from neurok_cli.io.normals import vertex_normals
from neurok_cli.render.export import ExportOptions, export_motion
from tests.conftest import assert_one_error_line, asset_path, wobble

pxr = pytest.importorskip("pxr")
from pxr import Usd, UsdGeom  # noqa: E402

runner = CliRunner()


def usd_problems(path) -> list[str]:
    """What USD's own checkers find: the ComplianceChecker (usdchecker before USD 26.8) where
    this USD has it, and the UsdValidation validators (usdchecker since) where it has those."""
    from pxr import UsdUtils

    found = []
    if hasattr(UsdUtils, "ComplianceChecker"):
        checker = UsdUtils.ComplianceChecker()
        checker.CheckCompliance(str(path))
        found += [*checker.GetErrors(), *checker.GetFailedChecks(), *checker.GetWarnings()]
    try:
        from pxr import UsdValidation
    except ImportError:
        return found
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    context = UsdValidation.ValidationContext(validators)
    found += [f"{e.GetName()}: {e.GetMessage()}"
              for e in context.Validate(Usd.Stage.Open(str(path)))]
    return found


def read_usd(path):
    """The stage, its mesh and (T, N, 3) points and normals at every time code."""
    stage = Usd.Stage.Open(str(path))
    (mesh,) = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    times = range(int(stage.GetStartTimeCode()), int(stage.GetEndTimeCode()) + 1)
    points = np.stack([np.asarray(mesh.GetPointsAttr().Get(t)) for t in times])
    normals = np.stack([np.asarray(mesh.GetNormalsAttr().Get(t)) for t in times])
    return stage, mesh, points, normals


def test_the_checkers_find_a_bad_stage(tmp_path):
    """The check the tests below rely on does fail a stage without its metadata."""
    stage = Usd.Stage.CreateNew(str(tmp_path / "bad.usda"))
    UsdGeom.Mesh.Define(stage, "/M").CreatePointsAttr([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    stage.GetRootLayer().Save()
    assert usd_problems(tmp_path / "bad.usda")


@pytest.mark.parametrize("suffix", [".usda", ".usdc", ".usd"])
def test_a_textured_asset_round_trips_and_passes_the_checks(tmp_path, suffix):
    asset = load_mesh(asset_path("spot"))  # UV-mapped, textured OBJ
    frames = wobble(asset.vertices, frames=9, amplitude=0.1)
    out = tmp_path / f"spot{suffix}"
    result = export_motion(asset, [frames], out, fps=24,
                           options=ExportOptions(metres_per_unit=0.25))
    assert result.fmt == suffix[1:] and result.details == {"frames": 9}
    assert usd_problems(out) == []
    head = out.read_bytes()[:8]
    assert head.startswith(b"#usda") if suffix == ".usda" else head == b"PXR-USDC"
    stage, mesh, points, normals = read_usd(out)
    size = np.ptp(asset.vertices, axis=0).max()
    assert np.abs(points - frames).max() < 1e-5 * size
    assert UsdGeom.GetStageUpAxis(stage) == "Y"
    assert UsdGeom.GetStageMetersPerUnit(stage) == 0.25
    assert stage.GetTimeCodesPerSecond() == 24 and stage.GetFramesPerSecond() == 24
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (0, 8)
    assert stage.GetDefaultPrim().GetPath() == "/Root"
    np.testing.assert_array_equal(np.asarray(mesh.GetFaceVertexCountsAttr().Get()), 3)
    np.testing.assert_array_equal(np.asarray(mesh.GetFaceVertexIndicesAttr().Get()),
                                  asset.faces.reshape(-1))
    # smooth unit normals of each frame, seams included
    w = asset.welded()
    rep = np.empty(len(w.vertices), np.int64)
    rep[w.index] = np.arange(len(w.index))
    want = vertex_normals(frames[:, rep], w.faces)[:, w.index]
    assert np.abs(normals - want).max() < 1e-5
    assert mesh.GetNormalsInterpolation() == "vertex"
    st = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("st")
    uv = np.concatenate([p.uvs for p in asset.parts])
    np.testing.assert_allclose(np.asarray(st.Get()), np.stack([uv[:, 0], 1 - uv[:, 1]], 1),
                               atol=1e-7)
    colour = mesh.GetDisplayColorPrimvar()
    assert colour.GetInterpolation() == "constant"
    np.testing.assert_allclose(np.asarray(colour.Get())[0],
                               Material().base_color[:3], atol=1e-6)  # no MTL: the default


def test_simulate_to_usd_says_the_files_up_axis_units_and_frame_rate(tmp_path):
    """A Z-up STL stays in its own numbers; the metadata says Z up and its metres per unit."""
    src = asset_path("teapot")
    for out in ("t.usda", "f"):
        result = runner.invoke(app, ["simulate", str(src), "-o", str(tmp_path / out),
                                     "--seconds", "0.4", "--fps", "25", "--units", "mm"])
        assert result.exit_code == 0, result.output
    stage, _, points, _ = read_usd(tmp_path / "t.usda")
    assert usd_problems(tmp_path / "t.usda") == []
    assert UsdGeom.GetStageUpAxis(stage) == "Z"
    assert UsdGeom.GetStageMetersPerUnit(stage) == pytest.approx(0.001)
    assert stage.GetTimeCodesPerSecond() == 25 and stage.GetEndTimeCode() == 10
    _, frames = read_frames(tmp_path / "f")
    size = np.ptp(load_mesh(src).vertices, axis=0).max()
    assert np.abs(points - frames).max() < 1e-5 * size


def test_a_usd_format_that_its_name_contradicts_is_one_line(tmp_path):
    src = asset_path("teapot")
    result = runner.invoke(app, ["simulate", str(src), "-o", str(tmp_path / "t.usdc"),
                                 "--format", "usda"])
    assert_one_error_line(result, "--format usda writes a .usd or .usda file")
    assert list(tmp_path.iterdir()) == []


def test_parts_of_different_colours_colour_their_own_faces(tmp_path):
    asset = load_mesh(asset_path("truck"))
    frames = wobble(asset.vertices, frames=3)
    export_motion(asset, [frames], tmp_path / "t.usdc", fps=30)
    assert usd_problems(tmp_path / "t.usdc") == []
    stage, mesh, points, _ = read_usd(tmp_path / "t.usdc")  # the stage keeps mesh valid
    assert np.abs(points - frames).max() < 1e-5 * np.ptp(asset.vertices, axis=0).max()
    colour = mesh.GetDisplayColorPrimvar()
    assert colour.GetInterpolation() == "uniform"
    want = np.concatenate([np.repeat([p.material.base_color[:3]], len(p.faces), axis=0)
                           for p in asset.parts])
    np.testing.assert_allclose(np.asarray(colour.Get()), want, atol=1e-6)


@pytest.mark.parametrize("suffix", [".usda", ".usdc"])
def test_bones_write_a_usdskel_skeleton_that_plays_the_frames(tmp_path, suffix):
    """`--encoding bones` to USD: a SkelRoot whose skeleton, skinned by USD's own UsdSkel,
    gives the frames within the decomposition's error, with USD's checkers satisfied."""
    from pxr import UsdSkel

    asset = load_mesh(asset_path("penguin"))
    motion = wobble(asset.vertices, frames=12)
    out = tmp_path / f"penguin{suffix}"
    result = export_motion(asset, [motion], out, fps=24,
                           options=ExportOptions(encoding="bones", bones=12))
    assert result.details["bones"] == 12 and result.details["mean_error"] < 0.005
    assert usd_problems(out) == []
    stage = Usd.Stage.Open(str(out))
    root = stage.GetPrimAtPath("/Root")
    assert root.IsA(UsdSkel.Root) and stage.GetDefaultPrim() == root
    mesh = next(p for p in stage.Traverse() if p.IsA(UsdGeom.Mesh))
    assert not UsdGeom.Mesh(mesh).GetPointsAttr().ValueMightBeTimeVarying()
    cache = UsdSkel.Cache()
    cache.Populate(UsdSkel.Root(root), Usd.TraverseInstanceProxies())
    skel = cache.GetSkelQuery(UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton")))
    skinning = cache.GetSkinningQuery(mesh)
    assert skinning.GetNumInfluencesPerComponent() == 4
    played = []
    for t in range(len(motion)):
        points = UsdGeom.Mesh(mesh).GetPointsAttr().Get()
        assert skinning.ComputeSkinnedPoints(skel.ComputeSkinningTransforms(t), points, t)
        played.append(np.asarray(points, np.float64))
    diag = float(np.linalg.norm(np.ptp(asset.vertices, axis=0)))
    error = np.linalg.norm(np.asarray(played) - motion, axis=2) / diag
    assert error.mean() == pytest.approx(result.details["mean_error"], abs=1e-5)
    assert float(np.linalg.norm(motion - motion[:1], axis=2).max()) / diag > 0.02  # it moves
