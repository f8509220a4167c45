"""A surface too coarse to show its category's motion is named in one warning line, in both
``animate`` and ``simulate``; a mesh fine enough is not."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.scenario.category import too_coarse

runner = CliRunner()


def _grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    v = np.stack([u.ravel(), np.zeros(u.size), w.ravel()], axis=1)
    q = np.arange(n * n).reshape(n, n)[:-1, :-1].ravel()
    f = np.concatenate([np.stack([q, q + 1, q + n + 1], 1), np.stack([q, q + n + 1, q + n], 1)])
    return v, f


def _rod(max_edge: float | None) -> tuple[np.ndarray, np.ndarray]:
    rod = trimesh.creation.cylinder(radius=0.05, height=1.0, sections=12)
    v, f = rod.vertices, rod.faces
    if max_edge:
        v, f = trimesh.remesh.subdivide_to_size(v, f, max_edge=max_edge)
    return np.asarray(v), np.asarray(f)


@pytest.mark.parametrize("mesh, category, says", [
    (_grid(2), "cloth", "4 vertices"),  # a modelling tool's plane
    (_grid(12), "cloth", None),
    (_rod(None), "beam", "only 2 places along its length"),  # a cylinder's two rims
    (_rod(0.1), "beam", None),
    ((trimesh.creation.box().vertices, trimesh.creation.box().faces), "soft", "8 vertices"),
    ((trimesh.creation.icosphere(3).vertices, trimesh.creation.icosphere(3).faces), "soft",
     None),
])
def test_too_coarse_names_what_cannot_move(mesh, category, says):
    v, _ = mesh
    got = too_coarse(np.asarray(v, float), category)
    if says is None:
        assert got is None
    else:
        assert says in got and "subdivide" in got and "\n" not in got


@pytest.mark.parametrize("command", ["animate", "simulate"])
def test_a_plane_of_four_vertices_is_animated_with_a_warning(tmp_path, command):
    src = tmp_path / "plane.obj"
    src.write_text("v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 2 3 4\n")
    out = tmp_path / "out.glb"
    result = runner.invoke(app, [command, str(src), "-o", str(out), "--seconds", "0.1",
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert out.exists()
    warnings = json.loads(result.stdout)["warnings"]
    assert sum("subdivide" in w for w in warnings) == 1
