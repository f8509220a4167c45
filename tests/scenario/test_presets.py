"""The presets' table: what each preset asks of the physics, and the same run in ``neurok
animate`` and ``neurok simulate`` by default."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.errors import UsageError
from neurok_cli.scenario.conditions import Conditions, Impulse, select_region
from neurok_cli.scenario.presets import (
    DEFAULT_PRESET,
    JOINT_PRESETS,
    PRESETS,
    TABLE,
    Overrides,
    beam_clamp,
    preset_conditions,
)
from tests.conftest import assert_one_error_line

runner = CliRunner()


@pytest.mark.parametrize("preset, category, size, conditions, height", [
    ("sway", "cloth", 0.5, Conditions(ground=False, pins=["x<0.02"]), 0.5),
    ("sway", "beam", 0.25, Conditions(ground=False, pins=["x<0.05"],
                                      impulses=[Impulse("x>0.9", (0.0, 0.0, 0.75))]), 0.5),
    ("sway", "soft", 4.0, Conditions(pins=["bottom"],
                                     impulses=[Impulse("top", (1.5, 0.0, 0.0))]), 0.0),
    ("poke", "soft", 0.25, Conditions(impulses=[Impulse("front", (0.0, 0.0, -0.75), 0.3)]),
     0.0),
    ("wobble", "beam", 1.0, Conditions(impulses=[Impulse("top", (1.5, 0.0, 0.0))]), 0.0),
    ("flutter", "cloth", 2.0, Conditions(ground=False, pins=["x<0.02"], wind=(4.0, 0.0, 0.0),
                                         gust=0.5), 0.5),
    ("flutter", "soft", 0.3, Conditions(ground=False, pins=["x<0.02"], wind=(4.0, 0.0, 0.0),
                                        gust=0.5), 0.5),
    ("drop", "beam", 0.3, Conditions(), 0.5),
    ("free", "cloth", 0.3, Conditions(), 0.0),
    ("open", "soft", 0.3, Conditions(), 0.0),
])
def test_the_table_gives_the_conditions_animate_has_always_had(preset, category, size,
                                                               conditions, height):
    """Pinned values: animate's figures must not move when the table changes shape."""
    assert preset_conditions(preset, category, size, Overrides()) == (conditions, height)


def test_the_table_names_every_preset_once_for_every_category():
    assert PRESETS == ("drop", "wobble", "poke", "sway", "flutter", "free", "open", "close",
                       "swing")
    assert JOINT_PRESETS == ("open", "close", "swing")
    assert set(DEFAULT_PRESET.values()) <= set(PRESETS)
    for name in PRESETS:  # one row for every category, besides rows for some
        assert sum(1 for row in TABLE if row.name == name and not row.only) == 1
    assert all(len(row.says) < 80 for row in TABLE)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_for_every_material(preset):
    for category in ("soft", "cloth", "beam"):
        cond, height = preset_conditions(preset, category, 0.5, Overrides())
        assert height >= 0
        if preset == "drop":
            assert cond.ground and height > 0 and not cond.pins
        if preset in ("sway", "flutter"):
            assert cond.pins
        if preset == "flutter":  # the wind blows from the held edge (x<...) across the cloth
            assert cond.wind[0] > 0 and not cond.ground
            assert cond.pins == ["x<0.02"]


def test_user_settings_win_over_the_preset():
    push = Impulse("left", (1.0, 0.0, 0.0), 0.2)
    cond, height = preset_conditions(
        "flutter", "cloth", 1.0, Overrides(pins=["y>0.9"], wind=(1.0, 0.0, 0.0), ground=True,
                                           pushes=[push], drop=0.1))
    assert cond.pins == ["y>0.9"] and cond.wind == (1.0, 0.0, 0.0) and cond.ground
    assert cond.impulses[-1] is push and height == 0.1
    assert cond.gust == 0.5  # what the user left alone stays the preset's
    again, _ = preset_conditions("flutter", "cloth", 1.0, Overrides())
    assert again.pins == ["x<0.02"]  # the table's rows are not changed by a run


def test_unknown_preset():
    with pytest.raises(UsageError, match="unknown preset 'jump'; choose one of drop, wobble"):
        preset_conditions("jump", "soft", 1.0, Overrides())


@pytest.mark.parametrize("preset", PRESETS)
def test_no_preset_holds_all_of_a_flat_sheet(preset):
    """A cloth lying flat: "bottom" would be all of it, and a preset that pins everything
    gives a clip in which nothing moves (sway did, before it hung a cloth by one edge)."""
    u, w = np.meshgrid(np.linspace(0, 1, 12), np.linspace(0, 1, 12))
    sheet = np.stack([u.ravel(), np.zeros(u.size), w.ravel()], axis=1)
    cond, _ = preset_conditions(preset, "cloth", 1.0, Overrides())
    held = np.zeros(len(sheet), bool)
    for region in cond.pins:
        held |= select_region(region, sheet)
    assert held.mean() < 0.2
    if preset == "sway":
        assert held.any() and not cond.ground


@pytest.mark.parametrize("extent, pins, region, kick", [
    (None, ["x<0.05"], "x>0.9", (0.0, 0.0, 0.75)),  # as written: a beam along x
    ((1.0, 0.1, 0.1), ["x<0.05"], "x>0.9", (0.0, 0.0, 0.75)),
    ((0.1, 1.0, 0.1), ["y<0.05"], "y>0.9", (0.75, 0.0, 0.0)),  # standing: held at its foot
    ((0.1, 0.1, 1.0), ["z<0.05"], "z>0.9", (0.75, 0.0, 0.0)),
])
def test_a_beams_sway_is_turned_onto_its_length(extent, pins, region, kick):
    """Clamped along x, a standing pole was held by a line down its side, and nothing
    moved; the row is now turned onto the beam's longest side."""
    cond, _ = preset_conditions("sway", "beam", 0.25, Overrides(), extent=extent)
    assert cond.pins == pins
    (push,) = cond.impulses
    assert push.region == region and push.velocity == pytest.approx(kick)
    assert beam_clamp(extent) == pins[0].replace("0.05", "0.02")


def test_only_a_beams_rows_turn():
    """Cloth hangs by its -x edge and soft bodies sway from the bottom, whatever their
    longest side."""
    tall = (0.2, 1.0, 0.3)
    assert preset_conditions("sway", "cloth", 1.0, Overrides(), extent=tall)[0].pins == \
        ["x<0.02"]
    assert preset_conditions("sway", "soft", 1.0, Overrides(), extent=tall)[0].pins == \
        ["bottom"]
    assert preset_conditions("sway", "beam", 1.0, Overrides(pins=["x<0.1"]),
                             extent=tall)[0].pins == ["x<0.1"]  # the user's pins stand


# --- the same run in both commands --------------------------------------------------------


def _ball(path):
    trimesh.creation.icosphere(subdivisions=1, radius=0.5).export(path)
    return path


def _sheet(path, n=8):
    u, w = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    lines = [f"v {a:.4f} 0 {b:.4f}" for a, b in zip(u.ravel(), w.ravel())]
    q = np.arange(n * n).reshape(n, n)[:-1, :-1].ravel() + 1
    lines += [f"f {a} {a + 1} {a + n + 1}\nf {a} {a + n + 1} {a + n}" for a in q]
    path.write_text("\n".join(lines) + "\n")
    return path


def _standing_rod(path):
    rod = trimesh.creation.cylinder(radius=0.03, height=1.0, sections=8)
    rod.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, [1, 0, 0]))
    rod.export(path)
    return path


def _report(command: str, src, out, *extra: str) -> dict:
    result = runner.invoke(app, [command, str(src), "-o", str(out), "--seconds", "0.1",
                                 "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("make, extra, preset, height", [
    (_ball, [], "drop", 0.25),  # a unitless file: 0.5 m across, dropped from half of it
    (_sheet, [], "flutter", 0.25),
    (_ball, ["--preset", "poke", "--drop", "0.2", "--wind", "1,0,0", "--friction", "0.3"],
     "poke", 0.1),
    (_standing_rod, ["--material", "beam"], "sway", 0.25),
], ids=["soft", "cloth", "options", "standing beam"])
def test_animate_and_simulate_run_the_same_job(tmp_path, make, extra, preset, height):
    """By default, and with the same options, both commands' reports carry the same preset,
    start height (m) and conditions."""
    src = make(tmp_path / "in.obj")
    runs = {c: _report(c, src, tmp_path / f"{c}.glb", *extra) for c in ("animate", "simulate")}
    for report in runs.values():
        assert report["preset"] == preset
        assert report["start_height_m"] == pytest.approx(height)
        assert set(report["conditions"]) == {"gravity", "ground", "friction", "pins",
                                             "velocity", "spin", "wind", "gust", "pushes"}
    assert runs["animate"]["conditions"] == runs["simulate"]["conditions"]
    assert runs["animate"]["start_height_m"] == runs["simulate"]["start_height_m"]
    if preset == "sway":  # clamped at its foot, kicked sideways at its top
        assert runs["animate"]["conditions"]["pins"] == ["y<0.05"]
    if preset == "poke":
        (push,) = runs["simulate"]["conditions"]["pushes"]
        assert push["region"] == "front" and push["time"] == 0.3
        assert push["velocity"] == pytest.approx([0.0, 0.0, -1.5 * 0.5 ** 0.5])  # 0.5 m across
        assert runs["simulate"]["conditions"]["friction"] == 0.3


def test_simulate_names_the_presets_it_takes(tmp_path):
    out = tmp_path / "o.glb"
    result = runner.invoke(app, ["simulate", str(_ball(tmp_path / "b.obj")), "-o", str(out),
                                 "--preset", "jump"])
    assert_one_error_line(result, "choose one of drop, wobble, poke, sway, flutter")
    assert not out.exists()
