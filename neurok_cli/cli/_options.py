"""Option types the commands share, so a flag means and reads the same everywhere.

Each is ``Annotated[type, typer.Option(...)]`` with its help panel (``INPUT`` ... ``MODEL``)
and a metavar in words (``SECONDS``, ``X,Y,Z``); a command gives its own default
(``seconds: Seconds = 4.0``) and declares locally whatever only it has. Where a default is
decided later (by the preset, the material or the file), ``shown(T, "by the preset")`` is
``T`` with that text in place of the default in the help.
"""

from __future__ import annotations

import copy
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from ..limits import GLTF_ENCODINGS
from ._checks import FRAMES_NOTE, ranged

# help panels, in the order a user reads them
INPUT = "Input"
MOTION = "Motion"
MATERIAL = "Material"
FORCES = "Forces and pins"
OUTPUT = "Output"
MODEL = "Model and numerics"

BY_PRESET = "by the preset"
BY_MATERIAL = "by the material"


def Opt(*decls: str, panel: str | None = None, show_default: bool | str = True,
        **kw: Any) -> Any:
    """``typer.Option`` with its default shown and its help panel named."""
    return typer.Option(*decls, rich_help_panel=panel, show_default=show_default, **kw)


def shown(kind: Any, text: str) -> Any:
    """``kind`` (an ``Annotated`` option type) with ``text`` shown as its default."""
    base, info = typing.get_args(kind)
    info = copy.copy(info)
    info.show_default = text
    return Annotated[base, info]


def choices(*names: str) -> str:
    """A metavar listing the values an option takes: ``[a|b|c]``."""
    return "[" + "|".join(names) + "]"


MATERIALS = ("auto", "soft", "cloth", "beam", "jelly", "foam", "rubber", "plastic", "wood",
             "silk", "cotton", "denim", "leather")

# what to write and how
Output = Annotated[Path | None, Opt(
    "-o", "--output", panel=OUTPUT, metavar="FILE", show_default="beside FILE, a new name",
    help="Where to write: .glb/.gltf, .html (a page that plays it), .usd/.usda/.usdc, "
         ".mdd/.pc2 (point caches for the input's own mesh), .mp4/.gif, or a folder (OBJ/PLY "
         "frames). Never overwrites FILE or, by default, any file.")]
Format = Annotated[str | None, Opt(
    "--format", panel=OUTPUT,
    metavar=choices("glb", "gltf", "html", "usd", "usda", "usdc", "mdd", "pc2", "obj", "ply",
                    "mp4", "gif"),
    show_default="by the output's extension", help="Output format.")]
Encoding = Annotated[str, Opt(
    panel=OUTPUT, metavar=choices(*GLTF_ENCODINGS),
    help="glTF encoding of the motion: morph targets (compact: as few as keep every vertex "
         "within 0.1 % of the size; exact: one a frame) or bones (a skin of --bones joints, "
         "what game engines play; in USD, a UsdSkel skeleton instead of point samples).")]
Bones = Annotated[int | None, Opt(
    panel=OUTPUT, metavar="N", show_default="32, doubled up to 128 while the mean error is "
    "above 0.3 % of the size", help=ranged("Joints of the bones encoding.", "bones"))]
MaxTargets = Annotated[int, Opt(panel=OUTPUT, metavar="K",
                                help=ranged("Most morph targets of the compact encoding.",
                                            "max_targets"))]
Meshopt = Annotated[bool, Opt(
    "--meshopt", panel=OUTPUT, metavar="",
    help="Compress glTF output with meshoptimizer (EXT_meshopt_compression): a compact clip "
         "0.14-0.39x the size, its mean error up by at most 0.003 % of the size; three.js, "
         "Babylon.js and game engines read it, Blender does not.")]
Renderer = Annotated[str, Opt(panel=OUTPUT, metavar=choices("auto", "gl", "numpy"),
                              help="Video renderer: gl (OpenGL through EGL), numpy, or "
                                   "auto (gl where it works, else numpy).")]
Json = Annotated[bool, Opt("--json", panel=OUTPUT, metavar="", help="Print the result as JSON.")]
Verbose = Annotated[bool, Opt("--verbose", "-v", panel=OUTPUT, metavar="",
                              help="Also print the model's figures and per-stage timings.")]

# the asset
Size = Annotated[float | None, Opt(
    panel=INPUT, metavar="METRES", show_default="from the file's units",
    help=ranged("Largest extent of the object, in metres (any file: over its units).",
                "size"))]
Units = Annotated[str | None, Opt(
    panel=INPUT, metavar=choices("m", "cm", "mm", "in", "ft"),
    show_default="glTF: metres; OBJ/PLY/STL: largest extent 0.5 m",
    help="Units of the file's numbers (--size overrides).")]
Material = Annotated[str, Opt(
    panel=MATERIAL, metavar="NAME",
    help="auto (by the shape: sheet, beam or soft body), a category (soft, cloth, beam), a "
         "solid (jelly, foam, rubber, plastic, wood), a cloth (silk, cotton, denim, "
         "leather), or articulated (rigid parts on hinges and sliders).")]
Up = Annotated[str | None, Opt(panel=INPUT, metavar=choices("y", "z"),
                               show_default="z for STL, else y",
                               help="Up axis of OBJ/PLY/STL.")]
Animation = Annotated[str | None, Opt(
    panel=INPUT, metavar="NAME", show_default="the first neurok wrote, else the first",
    help="A glTF's animation by name or index (with those that move other parts).")]

# time
Seconds = Annotated[float, Opt(panel=MOTION, metavar="SECONDS",
                               help=ranged(f"Duration; {FRAMES_NOTE}.", "seconds"))]
Fps = Annotated[float, Opt(panel=MOTION, metavar="FPS",
                           help=ranged(f"Frames per second; {FRAMES_NOTE}.", "fps"))]

# material
Stiffness = Annotated[float, Opt(panel=MATERIAL, metavar="SCALE",
                                 help=ranged("Scale on the material's stiffness.", "stiffness"))]
Young = Annotated[float | None, Opt(panel=MATERIAL, metavar="PA", show_default=BY_MATERIAL,
                                    help=ranged("Young's modulus, Pa.", "young"))]
Density = Annotated[float | None, Opt(panel=MATERIAL, metavar="KG/M3", show_default=BY_MATERIAL,
                                      help=ranged("Density, kg/m^3.", "density"))]
Damping = Annotated[float | None, Opt(panel=MATERIAL, metavar="SECONDS",
                                      show_default=BY_MATERIAL,
                                      help=ranged("Rayleigh damping, seconds.", "damping"))]
StrainLimit = Annotated[float | None, Opt(
    panel=MATERIAL, metavar="STRAIN", show_default="the weights' for the material",
    help="Largest edge strain |l/l0 - 1| of the learned space's decoded frames, e.g. 0.05, "
         "from 0 to 10 (inf: none).")]

# conditions (vectors are "X,Y,Z"; +Y is up)
Drop = Annotated[float | None, Opt(
    panel=MOTION, metavar="SIZES",
    help=ranged("Start height above the ground, in object sizes.", "drop"))]
GroundAt = Annotated[float | None, Opt(
    "--ground-at", panel=FORCES, metavar="Y", show_default="where the asset stands: its lowest "
    "point", help="Height of the ground along the file's up axis, in the file's own numbers (as "
    "a modelling tool shows them; --size and --units do not change it). The motion starts "
    "--drop sizes above it, and a drop lands there.")]
Gravity = Annotated[str | None, Opt(panel=FORCES, metavar="X,Y,Z",
                                    help="Gravity, m/s^2 (+Y up; length up to 10000).")]
Ground = Annotated[bool | None, Opt("--ground/--no-ground", panel=FORCES, metavar="",
                                    help="A floor below.")]
Friction = Annotated[float | None, Opt(panel=FORCES, metavar="MU",
                                       help=ranged("Ground friction coefficient.", "friction"))]
Pins = Annotated[list[str] | None, Opt(
    "--pin", panel=FORCES, metavar="REGION",
    help="Pinned region, repeatable: 'y>0.9', 'top', 'bottom', or vertex indices "
         "'0,5,9-12' (below 5,000,000).")]
Joints = Annotated[list[str] | None, Opt(
    "--joint", panel=MOTION, metavar="PART:hinge:AXIS[@POINT]",
    show_default="found where parts touch",
    help="A joint of an articulated object, repeatable: the part (as neurok info names it) "
         "turns about AXIS through POINT (x,y,z in the file's frame; default: where it "
         "touches its parent), the axis pointing the way it opens; or PART:slide:AXIS. "
         "Parts' other joints are found where they touch.")]
Velocity = Annotated[str | None, Opt(panel=MOTION, metavar="X,Y,Z",
                                     help="Initial velocity, m/s (length up to 10000).")]
Spin = Annotated[str | None, Opt(panel=MOTION, metavar="X,Y,Z",
                                 help="Initial angular velocity, rad/s (up to 10000).")]
Pushes = Annotated[list[str] | None, Opt(
    "--push", panel=FORCES, metavar="REGION:X,Y,Z[@T]",
    help="Velocity kick of a region, m/s, at T seconds (0 to 3600; default 0); repeatable.")]
Wind = Annotated[str | None, Opt(panel=FORCES, metavar="X,Y,Z",
                                 help="Wind velocity, m/s (length up to 10000).")]
Gust = Annotated[float | None, Opt(panel=FORCES, metavar="SHARE",
                                   help=ranged("Relative gust strength of the wind.", "gust"))]

# the model
Weights = Annotated[str, Opt(
    panel=MODEL, metavar="NAME|PATH",
    help="Weights bundle: a folder, or a name looked up in $NEUROK_WEIGHTS, then among the "
         "shipped bundles.")]
Device = Annotated[str, Opt(panel=MODEL, metavar=choices("auto", "cpu", "cuda"),
                            help="Where the model runs.")]
