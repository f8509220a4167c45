"""``neurok simulate INPUT -o OUT``: full-order physics (MuJoCo) on a user's asset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import guarded, print_json, print_rows, progress_bar, warn

Opt = typer.Option


@guarded
def simulate(
    file: Annotated[Path, typer.Argument(help="Mesh to simulate (OBJ, GLB/glTF, PLY, STL).")],
    output: Annotated[Path, Opt("-o", "--output",
                                help="Where to write: .glb/.gltf, .mp4/.gif, or a folder.")],
    seconds: Annotated[float, Opt(help="Duration, seconds.")] = 2.0,
    fps: Annotated[float, Opt(help="Frames per second.")] = 30.0,
    material: Annotated[str, Opt(help="soft, cloth or beam.")] = "soft",
    young: Annotated[float | None, Opt(help="Young's modulus, Pa.")] = None,
    poisson: Annotated[float | None, Opt(help="Poisson ratio.")] = None,
    density: Annotated[float | None, Opt(help="Density, kg/m^3.")] = None,
    damping: Annotated[float | None, Opt(help="Rayleigh damping, seconds.")] = None,
    thickness: Annotated[float | None, Opt(help="Cloth thickness, metres.")] = None,
    size: Annotated[float | None, Opt(help="Largest extent in metres (OBJ/PLY/STL).")] = None,
    up: Annotated[str | None, Opt(help="Up axis of OBJ/PLY/STL: y or z.")] = None,
    drop: Annotated[float | None, Opt(help="Start height above the ground, x size.")] = None,
    gravity: Annotated[str, Opt(help="Gravity X,Y,Z in m/s^2 (+Y up).")] = "0,-9.81,0",
    ground: Annotated[bool, Opt("--ground/--no-ground", help="A floor below.")] = True,
    friction: Annotated[float, Opt(help="Ground friction coefficient.")] = 0.8,
    velocity: Annotated[str, Opt(help="Initial velocity X,Y,Z, m/s.")] = "0,0,0",
    spin: Annotated[str, Opt(help="Initial angular velocity X,Y,Z, rad/s.")] = "0,0,0",
    wind: Annotated[str, Opt(help="Wind velocity X,Y,Z, m/s.")] = "0,0,0",
    gust: Annotated[float, Opt(help="Relative gust strength of the wind, 0..1.")] = 0.0,
    pin: Annotated[list[str] | None, Opt(help="Pinned region ('y>0.9', 'top', '0,5,9').")
                   ] = None,
    push: Annotated[list[str] | None, Opt(help="REGION:X,Y,Z[@T] velocity kick, m/s at T s.")
                    ] = None,
    dof: Annotated[str | None, Opt(help="Soft bodies: trilinear, quadratic or tet.")] = None,
    max_vertices: Annotated[int, Opt(
        help="Denser cloth/tet meshes are simulated on a proxy this size (5x for cells).")
    ] = 3000,
    encoding: Annotated[str, Opt(help="glTF encoding: compact or exact.")] = "compact",
    fmt: Annotated[str | None, Opt("--format", help="glb, gltf, obj, ply, mp4 or gif.")] = None,
    renderer: Annotated[str, Opt(help="Video renderer: auto, gl or numpy.")] = "auto",
    json_out: Annotated[bool, Opt("--json", help="Print the report as JSON.")] = False,
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
                         damping=damping, thickness=thickness, size=size, up=up, drop=drop,
                         conditions=cond, dof=dof, max_vertices=max_vertices,
                         export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer))
    with progress_bar("simulating") as update:
        report = run_simulate(cfg, progress=lambda f: update(round(1000 * f), 1000))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report))
