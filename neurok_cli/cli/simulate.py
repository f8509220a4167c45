"""``neurok simulate INPUT -o OUT``: full-order physics (MuJoCo) on a user's asset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn

Opt = typer.Option


def _parse_cells(text: str | None) -> tuple[int, ...] | None:
    """'X,Y,Z' -> whole numbers (their range is checked with the material)."""
    if text is None:
        return None
    try:
        return tuple(int(t) for t in text.split(","))
    except ValueError:
        raise UsageError(f"--cells must be three whole numbers X,Y,Z, not {text!r}") from None


@guarded
def simulate(
    file: Annotated[Path, typer.Argument(
        help="Mesh to simulate (OBJ, GLB/glTF, PLY, STL; up to 1,500,000 triangles).")],
    output: o.Output,
    seconds: o.Seconds = 2.0,
    fps: o.Fps = 30.0,
    material: o.Material = "auto",
    young: o.Young = None,
    poisson: Annotated[float | None, Opt(help=ranged("Poisson ratio.", "poisson"))] = None,
    density: o.Density = None,
    damping: o.Damping = None,
    thickness: Annotated[float | None, Opt(
        help=ranged("Cloth thickness, metres.", "thickness"))] = None,
    size: o.Size = None,
    units: o.Units = None,
    up: o.Up = None,
    drop: o.Drop = None,
    gravity: o.Gravity = "0,-9.81,0",
    ground: o.Ground = True,
    friction: o.Friction = 0.8,
    velocity: o.Velocity = "0,0,0",
    spin: o.Spin = "0,0,0",
    wind: o.Wind = "0,0,0",
    gust: o.Gust = 0.0,
    pin: o.Pins = None,
    push: o.Pushes = None,
    dof: Annotated[str | None, Opt(help="Soft bodies: trilinear, quadratic or tet.")] = None,
    cells: Annotated[str | None, Opt(
        help="Interpolation cells X,Y,Z of soft bodies and beams (default: from the "
             "shape's proportions; more resolve the deformation more finely).")] = None,
    max_vertices: Annotated[int, Opt(
        help=ranged("Denser cloth/tet meshes are simulated on a proxy this size (5x for "
                    "cells).", "max_vertices"))
    ] = 3000,
    encoding: o.Encoding = "compact",
    fmt: o.Format = None,
    renderer: o.Renderer = "auto",
    json_out: o.Json = False,
) -> None:
    """Simulate an asset with full-order physics and write the motion."""
    from ..io.export import ExportOptions
    from ..sim.conditions import Conditions, parse_impulse, parse_vector
    from ..simulate import SimulateConfig, report_rows
    from ..simulate import simulate as run_simulate

    cond = Conditions(gravity=parse_vector(gravity, "--gravity"), ground=ground,
                      friction=friction, velocity=parse_vector(velocity, "--velocity"),
                      spin=parse_vector(spin, "--spin"), wind=parse_vector(wind, "--wind"),
                      gust=gust, pins=list(pin or []),
                      impulses=[parse_impulse(p) for p in push or []])
    cfg = SimulateConfig(input=file, output=output, seconds=seconds, fps=fps,
                         material=material, young=young, poisson=poisson, density=density,
                         damping=damping, thickness=thickness, size=size, units=units, up=up,
                         drop=drop,
                         conditions=cond, dof=dof, cells=_parse_cells(cells),
                         max_vertices=max_vertices,
                         export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer))
    with progress_bar("simulating") as update:
        report = run_simulate(cfg, progress=lambda f: update(round(1000 * f), 1000))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report))
