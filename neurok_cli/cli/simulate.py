"""``neurok simulate FILE [-o OUT]``: full-order physics (MuJoCo) on a user's asset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from ..limits import TARGETS
from ..scenario.presets import PRESETS
from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn
from ._names import beside

# options whose default the preset (or the material) decides, shown as animate shows them
from .animate import Drop, Friction, Gravity, Ground, Gust, Pins, Pushes, Spin, Velocity, Wind


def _parse_cells(text: str | None) -> tuple[int, ...] | None:
    """'X,Y,Z' -> whole numbers (their range is checked with the material)."""
    if text is None:
        return None
    try:
        return tuple(int(t) for t in text.split(","))
    except ValueError:
        raise UsageError(f"--cells must be three whole numbers X,Y,Z, not {text!r}") from None


# --material as animate's, but auto tells only a sheet from a soft body here
Material = Annotated[str, o.Opt(
    panel=o.MATERIAL, metavar="NAME",
    help="auto (cloth when flat, else a soft body), a category (soft, cloth, beam), a solid "
         "(jelly, foam, rubber, plastic, wood), a cloth (silk, cotton, denim, leather), or "
         "articulated (rigid parts on hinges and sliders).")]


def _vector(text: str | None, name: str):
    from ..scenario.conditions import parse_vector

    return None if text is None else parse_vector(text, name)


@guarded
def simulate(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", show_default=False,
        help="Mesh to simulate (OBJ, GLB/glTF, PLY, STL; up to 1,500,000 triangles).")],
    size: o.Size = None,
    units: o.Units = None,
    up: o.Up = None,
    seconds: o.Seconds = 2.0,
    fps: o.Fps = 30.0,
    drop: Drop = None,
    preset: Annotated[str | None, o.Opt(
        panel=o.MOTION, metavar=o.choices(*PRESETS), show_default=o.BY_MATERIAL,
        help="What happens, as in animate: drop onto the ground, wobble, poke, sway (pinned "
             "at the bottom, a beam by one end, a cloth hung by one edge), flutter in the "
             "wind, or free (only the options below); for articulated objects, open, close "
             "or swing their joints.")] = None,
    joint: o.Joints = None,
    velocity: Velocity = None,
    spin: Spin = None,
    material: Material = "auto",
    young: o.Young = None,
    poisson: Annotated[float | None, o.Opt(
        panel=o.MATERIAL, metavar="RATIO", show_default=o.BY_MATERIAL,
        help=ranged("Poisson ratio.", "poisson"))] = None,
    density: o.Density = None,
    damping: o.Damping = None,
    thickness: Annotated[float | None, o.Opt(
        panel=o.MATERIAL, metavar="METRES", show_default=o.BY_MATERIAL,
        help=ranged("Cloth thickness.", "thickness"))] = None,
    gravity: Gravity = None,
    ground: Ground = None,
    ground_at: o.GroundAt = None,
    friction: Friction = None,
    pin: Pins = None,
    push: Pushes = None,
    wind: Wind = None,
    gust: Gust = None,
    output: o.Output = None,
    fmt: o.Format = None,
    encoding: o.Encoding = "compact",
    bones: o.Bones = None,
    max_targets: o.MaxTargets = TARGETS,
    meshopt: o.Meshopt = False,
    renderer: o.Renderer = "auto",
    json_out: o.Json = False,
    dof: Annotated[str | None, o.Opt(
        panel=o.MODEL, metavar=o.choices("trilinear", "quadratic", "tet", "lattice"),
        show_default="trilinear; a beam quadratic",
        help="How soft bodies and beams are discretised: a shell in a cage of cells "
             "(trilinear, quadratic), tetrahedra fanned from the centre (tet: star-shaped "
             "solids), or tetrahedra that fill the solid (lattice); cloth moves every vertex.")
    ] = None,
    cells: Annotated[str | None, o.Opt(
        panel=o.MODEL, metavar="X,Y,Z", show_default="from the shape's proportions",
        help="Interpolation cells of soft bodies and beams, each 1 to 12 (more resolve the "
             "deformation more finely); with --dof lattice, one number from 2 to 16: cubes "
             "along the longest side.")
    ] = None,
    max_vertices: Annotated[int, o.Opt(
        panel=o.MODEL, metavar="N",
        help=ranged("Denser cloth/tet meshes are simulated on a proxy this size (5x for "
                    "cells).", "max_vertices"))
    ] = 3000,
) -> None:
    """Simulate an asset with full physics (MuJoCo).

    Slower than animate, and the reference it learns from: the same job (the same presets
    and defaults), the same formats.

    Examples:

      neurok simulate chair.glb                 (writes chair_simulated.glb beside it)

      neurok simulate towel.obj --material cotton --pin 'x<0.02' --seconds 3 -o towel.mp4

      neurok simulate chest.glb --preset open   (a lid on its hinge)
    """
    from ..render.export import ExportOptions
    from ..rig.articulation import parse_joint
    from ..scenario.conditions import parse_impulse
    from ..scenario.presets import Overrides
    from ..sim.simulate import SimulateConfig, report_rows
    from ..sim.simulate import simulate as run_simulate

    over = Overrides(gravity=_vector(gravity, "--gravity"), ground=ground, friction=friction,
                     pins=list(pin) if pin else None, velocity=_vector(velocity, "--velocity"),
                     spin=_vector(spin, "--spin"), wind=_vector(wind, "--wind"), gust=gust,
                     pushes=[parse_impulse(p) for p in push or []])
    output = output or beside(file, "_simulated", fmt)
    cfg = SimulateConfig(input=file, output=output, seconds=seconds, fps=fps,
                         material=material, young=young, poisson=poisson, density=density,
                         damping=damping, thickness=thickness, size=size, units=units, up=up,
                         drop=drop, ground_at=ground_at, overrides=over, dof=dof,
                         cells=_parse_cells(cells), max_vertices=max_vertices, preset=preset,
                         joints=[parse_joint(j) for j in joint or []],
                         export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer,
                                              bones=bones, max_targets=max_targets,
                                             meshopt=meshopt))
    with progress_bar("simulating") as update:
        report = run_simulate(cfg, progress=lambda f: update(round(1000 * f), 1000))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report))
