"""``neurok animate FILE [-o OUT]``: physically plausible motion in the object's own shape
space, or the learned bundle's latent space."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..limits import TARGETS
from ..scenario.presets import PRESETS
from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn
from ._names import beside


def _vector(text: str | None, name: str):
    from ..scenario.conditions import parse_vector

    return None if text is None else parse_vector(text, name)


# options whose default the preset (or the material) decides
Drop = o.shown(o.Drop, o.BY_PRESET)
Velocity = o.shown(o.Velocity, "0,0,0")
Spin = o.shown(o.Spin, "0,0,0")
Gravity = o.shown(o.Gravity, "0,-9.81,0")
Ground = o.shown(o.Ground, o.BY_PRESET)
Friction = o.shown(o.Friction, "0.8")
Pins = o.shown(o.Pins, o.BY_PRESET)
Pushes = o.shown(o.Pushes, o.BY_PRESET)
Wind = o.shown(o.Wind, o.BY_PRESET)
Gust = o.shown(o.Gust, o.BY_PRESET)


@guarded
def animate(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", show_default=False,
        help="Mesh to animate (OBJ, GLB/glTF, PLY, STL; up to 1,500,000 triangles).")],
    size: o.Size = None,
    units: o.Units = None,
    up: o.Up = None,
    seconds: o.Seconds = 4.0,
    fps: o.Fps = 30.0,
    preset: Annotated[str | None, o.Opt(
        panel=o.MOTION, metavar=o.choices(*PRESETS), show_default=o.BY_MATERIAL,
        help="What happens: drop onto the ground, wobble, poke, sway (pinned at the bottom, a "
             "beam by one end, a cloth hung by one edge), flutter in the wind, or free (only "
             "the options below); for articulated objects, open, close or swing their "
             "joints.")] = None,
    joint: o.Joints = None,
    samples: Annotated[int, o.Opt(
        panel=o.MOTION, metavar="N",
        help=ranged("Number of different plausible motions.", "samples", "animate"))] = 1,
    seed: Annotated[int, o.Opt(
        panel=o.MOTION, metavar="N",
        help=ranged("Random seed: the same seed gives the same file.", "seed"))] = 0,
    drop: Drop = None,
    velocity: Velocity = None,
    spin: Spin = None,
    material: o.Material = "auto",
    stiffness: o.Stiffness = 1.0,
    young: o.Young = None,
    density: o.Density = None,
    damping: o.Damping = None,
    strain_limit: o.StrainLimit = None,
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
    verbose: o.Verbose = False,
    weights: o.Weights = "neurok-base",
    device: o.Device = "auto",
    method: Annotated[str, o.Opt(panel=o.MODEL, metavar=o.choices("rk4", "dopri5"),
                                 help="ODE integrator of the learned space: rk4 (fixed step) "
                                      "or dopri5.")] = "rk4",
    space: Annotated[str, o.Opt(
        panel=o.MODEL, metavar=o.choices("auto", "learned", "handles"),
        help="Shape space of a deformable body: handles (the object's own affine handles "
             "with its material's energy), learned (the bundle's latent space: --weights, "
             "--method, --strain-limit, a start fitted there) or auto (handles unless what "
             "is asked needs the bundle).")] = "auto",
    handles: Annotated[int | None, o.Opt(
        panel=o.MODEL, metavar="N", show_default="by category",
        help=ranged("The object's own shape space with N affine handles (default by "
                    "category: soft 24, cloth 32, a beam 24 and 4 more per unit of its "
                    "slenderness, at most 128): fewer move faster, more hold finer folds and "
                    "bends; a page steps the same model.", "handles"))] = None,
) -> None:
    """Animate a static asset: glTF, web page, USD, frames or video.

    Examples:

      neurok animate chair.glb                  (writes chair_animated.glb beside it)

      neurok animate penguin.obj --size 0.3 --material rubber --preset wobble -o wobble.glb

      neurok animate towel.obj --material cotton --pin 'x<0.02' --wind 0,0,5 -o towel.mp4

      neurok animate chest.glb --preset open     (parts on hinges: neurok info lists them)
    """
    from ..deform.animate import AnimateConfig
    from ..deform.animate import animate as run_animate
    from ..deform.report import report_rows
    from ..render.export import ExportOptions
    from ..rig.articulation import parse_joint
    from ..scenario.conditions import parse_impulse
    from ..scenario.presets import Overrides

    over = Overrides(gravity=_vector(gravity, "--gravity"), ground=ground, friction=friction,
                     pins=list(pin) if pin else None, velocity=_vector(velocity, "--velocity"),
                     spin=_vector(spin, "--spin"), wind=_vector(wind, "--wind"), gust=gust,
                     pushes=[parse_impulse(p) for p in push or []], drop=drop)
    output = output or beside(file, "_animated", fmt)
    cfg = AnimateConfig(input=file, output=output, seconds=seconds, fps=fps, material=material,
                        preset=preset, stiffness=stiffness, young=young, density=density,
                        damping=damping, size=size, units=units, up=up, ground_at=ground_at,
                        overrides=over,
                        samples=samples,
                        seed=seed, weights=weights, device=device, method=method, space=space,
                        handles=handles,
                        strain_limit=strain_limit, joints=[parse_joint(j) for j in joint or []],
                        export=ExportOptions(fmt=fmt, encoding=encoding, renderer=renderer,
                                             bones=bones, max_targets=max_targets,
                                             meshopt=meshopt))
    with progress_bar("animating") as update:
        report = run_animate(cfg, progress=lambda stage: update(0, None, stage),
                             on_frame=lambda done, total: update(done, total, "moving"),
                             on_decode=lambda done, total: update(done, total, "decoding"))
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    print_rows(report_rows(report, verbose=verbose))

