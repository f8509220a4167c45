"""``neurok convert IN.glb -o OUT.glb --encoding bones``: an animated glTF re-encoded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..limits import TARGETS
from . import _options as o
from ._checks import ranged
from ._common import guarded, out, print_json, warn
from ._names import beside


@guarded
def convert(
    file: Annotated[Path, typer.Argument(metavar="FILE", show_default=False,
                                         help="Animated glTF/GLB to re-encode.")],
    output: Annotated[Path | None, o.Opt(
        "-o", "--output", panel=o.OUTPUT, metavar="FILE",
        show_default="FILE's name + _<encoding>.glb, beside it, a new name",
        help="Where to write: .glb or .gltf.")] = None,
    encoding: o.Encoding = "bones",
    bones: o.Bones = None,
    max_targets: o.MaxTargets = TARGETS,
    meshopt: o.Meshopt = False,
    animation: o.Animation = None,
    fps: Annotated[float, o.Opt(panel=o.OUTPUT, metavar="FPS",
                                help=ranged("Frames per second sampled.", "fps"))] = 30.0,
    json_out: o.Json = False,
) -> None:
    """Re-encode an animated glTF: bones (a skin) or morph targets.

    Examples:

      neurok convert penguin_animated.glb --encoding bones -o penguin_bones.glb

      neurok convert sim.glb --encoding compact --max-targets 8

      neurok convert penguin_animated.glb --meshopt -o penguin_small.glb
    """
    from ..errors import UsageError
    from ..io.gltf.convert import convert_animated

    if file.suffix.lower() not in (".glb", ".gltf"):
        raise UsageError(f"{file}: convert reads an animated glTF (.glb or .gltf); "
                         "`neurok animate` makes one from a mesh")
    if output is None:
        output = beside(file, f"_{encoding}")
    if output.suffix.lower() not in (".glb", ".gltf"):
        raise UsageError(f"{output}: convert writes glTF; use .glb or .gltf")
    report = convert_animated(file, output, encoding=encoding, fps=fps, animation=animation,
                              bones=bones, max_targets=max_targets, meshopt=meshopt)
    if json_out:
        print_json({"output": str(output), **report.__dict__})
        return
    warn(report.warnings)
    what = (f"{report.bones} joints, mean error {100 * report.mean_error:.3g} % of the size"
            if report.encoding == "bones" else f"{report.targets} morph targets")
    out.print(f"wrote [bold]{output}[/] ({report.encoding}: {what}, largest "
              f"{100 * report.max_error:.3g} %; {report.bytes / 1e6:.2f} MB)")
