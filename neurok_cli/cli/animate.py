"""``neurok animate INPUT -o OUT``: physically plausible motion through the learned latent
space."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import guarded, print_json, print_rows, progress_bar, warn

Opt = typer.Option


def _vector(text: str | None, name: str):
    from ..sim.conditions import parse_vector

    return None if text is None else parse_vector(text, name)


@guarded
def animate(
    file: Annotated[Path, typer.Argument(help="Mesh to animate (OBJ, GLB/glTF, PLY, STL).")],
    output: Annotated[Path, Opt("-o", "--output",
                                help="Where to write: .glb/.gltf, .mp4/.gif, or a folder.")],
    seconds: Annotated[float, Opt(help="Duration, seconds.")] = 4.0,
    fps: Annotated[float, Opt(help="Frames per second.")] = 30.0,
    material: Annotated[str, Opt(help="auto, soft, cloth or beam.")] = "auto",
    preset: Annotated[str | None, Opt(
        help="drop, wobble, poke, sway or flutter (default: by material).")] = None,
    stiffness: Annotated[float, Opt(help="Scale on the material's stiffness.")] = 1.0,
    young: Annotated[float | None, Opt(help="Young's modulus, Pa.")] = None,
    density: Annotated[float | None, Opt(help="Density, kg/m^3.")] = None,
    damping: Annotated[float | None, Opt(help="Rayleigh damping, seconds.")] = None,
    size: Annotated[float | None, Opt(help="Largest extent in metres (OBJ/PLY/STL).")] = None,
    up: Annotated[str | None, Opt(help="Up axis of OBJ/PLY/STL: y or z.")] = None,
    drop: Annotated[float | None, Opt(help="Start height above the ground, x size.")] = None,
    gravity: Annotated[str | None, Opt(help="Gravity X,Y,Z in m/s^2 (+Y up).")] = None,
    ground: Annotated[bool | None, Opt("--ground/--no-ground", help="A floor below.")] = None,
    friction: Annotated[float | None, Opt(help="Ground friction coefficient.")] = None,
    pin: Annotated[list[str] | None, Opt(help="Pinned region ('y>0.9', 'top', '0,5,9').")
                   ] = None,
    velocity: Annotated[str | None, Opt(help="Initial velocity X,Y,Z, m/s.")] = None,
    spin: Annotated[str | None, Opt(help="Initial angular velocity X,Y,Z, rad/s.")] = None,
    push: Annotated[list[str] | None, Opt(help="REGION:X,Y,Z[@T] velocity kick, m/s at T s.")
                    ] = None,
    wind: Annotated[str | None, Opt(help="Wind velocity X,Y,Z, m/s.")] = None,
    gust: Annotated[float | None, Opt(help="Relative gust strength of the wind, 0..1.")] = None,
    samples: Annotated[int, Opt(help="Number of different plausible motions (1-64).")] = 1,
    seed: Annotated[int, Opt(help="Random seed: the same seed gives the same file.")] = 0,
    weights: Annotated[str, Opt(help="Weights bundle: a shipped name or a folder.")
                       ] = "neurok-base",
    device: Annotated[str, Opt(help="auto, cpu or cuda.")] = "auto",
    method: Annotated[str, Opt(help="ODE integrator: rk4 (fixed step) or dopri5.")] = "rk4",
    encoding: Annotated[str, Opt(help="glTF encoding: compact or exact.")] = "compact",
    fmt: Annotated[str | None, Opt("--format", help="glb, gltf, obj, ply, mp4 or gif.")] = None,
    renderer: Annotated[str, Opt(help="Video renderer: auto, gl or numpy.")] = "auto",
    json_out: Annotated[bool, Opt("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Animate a static asset through the learned latent space (glTF, frames or video)."""
    from ..animate import AnimateConfig, Overrides, report_rows
    from ..animate import animate as run_animate
    from ..io.export import ExportOptions
    from ..sim.conditions import parse_impulse

    over = Overrides(gravity=_vector(gravity, "--gravity"), ground=ground, friction=friction,
                     pins=list(pin) if pin else None, velocity=_vector(velocity, "--velocity"),
                     spin=_vector(spin, "--spin"), wind=_vector(wind, "--wind"), gust=gust,
                     pushes=[parse_impulse(p) for p in push or []], drop=drop)
    cfg = AnimateConfig(input=file, output=output, seconds=seconds, fps=fps, material=material,
                        preset=preset, stiffness=stiffness, young=young, density=density,
                        damping=damping, size=size, up=up, overrides=over, samples=samples,
                        seed=seed, weights=weights, device=device, method=method,
                        export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer))
    stages = ["loading", "moving", "writing"]
    with progress_bar("animating") as update:
        report = run_animate(cfg, progress=lambda s: update(stages.index(s), len(stages), s))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report))
