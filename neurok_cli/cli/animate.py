"""``neurok animate INPUT -o OUT``: physically plausible motion through the learned latent
space."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn

Opt = typer.Option


def _vector(text: str | None, name: str):
    from ..sim.conditions import parse_vector

    return None if text is None else parse_vector(text, name)


@guarded
def animate(
    file: Annotated[Path, typer.Argument(
        help="Mesh to animate (OBJ, GLB/glTF, PLY, STL; up to 1,500,000 triangles).")],
    output: o.Output,
    seconds: o.Seconds = 4.0,
    fps: o.Fps = 30.0,
    material: o.Material = "auto",
    preset: Annotated[str | None, Opt(
        help="drop, wobble, poke, sway, flutter or free (default: by material).")] = None,
    stiffness: o.Stiffness = 1.0,
    young: o.Young = None,
    density: o.Density = None,
    damping: o.Damping = None,
    strain_limit: o.StrainLimit = None,
    size: o.Size = None,
    units: o.Units = None,
    up: o.Up = None,
    drop: o.Drop = None,
    gravity: o.Gravity = None,
    ground: o.Ground = None,
    friction: o.Friction = None,
    pin: o.Pins = None,
    velocity: o.Velocity = None,
    spin: o.Spin = None,
    push: o.Pushes = None,
    wind: o.Wind = None,
    gust: o.Gust = None,
    samples: Annotated[int, Opt(
        help=ranged("Number of different plausible motions.", "samples", "animate"))] = 1,
    seed: Annotated[int, Opt(
        help=ranged("Random seed: the same seed gives the same file.", "seed"))] = 0,
    weights: o.Weights = "neurok-base",
    device: o.Device = "auto",
    method: Annotated[str, Opt(help="ODE integrator: rk4 (fixed step) or dopri5.")] = "rk4",
    encoding: o.Encoding = "compact",
    fmt: o.Format = None,
    renderer: o.Renderer = "auto",
    json_out: o.Json = False,
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
                        damping=damping, size=size, units=units, up=up, overrides=over,
                        samples=samples,
                        seed=seed, weights=weights, device=device, method=method,
                        strain_limit=strain_limit,
                        export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer))
    stages = ["loading", "moving", "writing"]
    with progress_bar("animating") as update:
        report = run_animate(cfg, progress=lambda s: update(stages.index(s), len(stages), s))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report))
