"""Option types the commands share, so a flag means and reads the same everywhere.

Each is ``Annotated[type, typer.Option(...)]``; a command gives its own default
(``seconds: Seconds = 4.0``) and declares locally whatever only it has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._checks import FRAMES_NOTE, ranged

Opt = typer.Option

# what to write and how
Output = Annotated[Path, Opt("-o", "--output",
                             help="Where to write: .glb/.gltf, .mp4/.gif, or a folder.")]
Format = Annotated[str | None, Opt("--format", help="glb, gltf, obj, ply, mp4 or gif.")]
Encoding = Annotated[str, Opt(help="glTF encoding: compact or exact.")]
Renderer = Annotated[str, Opt(help="Video renderer: auto, gl or numpy.")]
Json = Annotated[bool, Opt("--json", help="Print the result as JSON.")]

# the asset
Size = Annotated[float | None, Opt(help=ranged("Largest extent in metres (OBJ/PLY/STL).", "size"))]
Units = Annotated[str | None, Opt(
    help="Read an OBJ/PLY/STL's numbers in these units: m, cm, mm, in or ft (default: the "
         "file has none, so its largest extent is taken as 0.5 m; --size sets it).")]
Material = Annotated[str, Opt(
    help="auto (by the shape: sheet, beam or soft body), a category (soft, cloth, beam), a "
         "solid (jelly, foam, rubber, plastic, wood) or a cloth (silk, cotton, denim, "
         "leather).")]
Up = Annotated[str | None, Opt(help="Up axis of OBJ/PLY/STL: y or z (default: z for STL, "
                                     "else y).")]
Animation = Annotated[str | None, Opt(
    help="A glTF's animation by name or index (default: the first neurok wrote, else the "
         "first; with those that move other parts).")]

# time
Seconds = Annotated[float, Opt(help=ranged(f"Duration, seconds; {FRAMES_NOTE}.", "seconds"))]
Fps = Annotated[float, Opt(help=ranged(f"Frames per second; {FRAMES_NOTE}.", "fps"))]

# material
Stiffness = Annotated[float, Opt(help=ranged("Scale on the material's stiffness.", "stiffness"))]
Young = Annotated[float | None, Opt(help=ranged("Young's modulus, Pa.", "young"))]
Density = Annotated[float | None, Opt(help=ranged("Density, kg/m^3.", "density"))]
Damping = Annotated[float | None, Opt(help=ranged("Rayleigh damping, seconds.", "damping"))]
StrainLimit = Annotated[float | None, Opt(
    help="Largest edge strain |l/l0 - 1| of the decoded frames, e.g. 0.05, from 0 to 10 "
         "(default: the weights' for the material; inf: none).")]

# conditions (vectors are "X,Y,Z"; +Y is up)
Drop = Annotated[float | None, Opt(help=ranged("Start height above the ground, x size.", "drop"))]
Gravity = Annotated[str | None, Opt(help="Gravity X,Y,Z in m/s^2 (+Y up; length up to 10000).")]
Ground = Annotated[bool | None, Opt("--ground/--no-ground", help="A floor below.")]
Friction = Annotated[float | None, Opt(help=ranged("Ground friction coefficient.", "friction"))]
Pins = Annotated[list[str] | None, Opt(
    "--pin", help="Pinned region ('y>0.9', 'top', '0,5,9-12': vertex indices below 5,000,000).")]
Velocity = Annotated[str | None, Opt(help="Initial velocity X,Y,Z, m/s (length up to 10000).")]
Spin = Annotated[str | None, Opt(help="Initial angular velocity X,Y,Z, rad/s (up to 10000).")]
Pushes = Annotated[list[str] | None, Opt("--push",
                                         help="REGION:X,Y,Z[@T] velocity kick, m/s at T s "
                                              "(0 to 3600).")]
Wind = Annotated[str | None, Opt(help="Wind velocity X,Y,Z, m/s (length up to 10000).")]
Gust = Annotated[float | None, Opt(help=ranged("Relative gust strength of the wind.", "gust"))]

# the model
Weights = Annotated[str, Opt(help="Weights bundle: a shipped name or a folder.")]
Device = Annotated[str, Opt(help="auto, cpu or cuda.")]
