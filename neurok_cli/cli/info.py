"""``neurok info FILE``: what a mesh file or frame folder holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import guarded, print_json, print_rows, warn
from ._options import Opt, choices


@guarded
def info(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", help="Mesh file (OBJ, GLB/glTF, PLY, STL) or frame folder.")],
    json_out: Annotated[bool, Opt("--json", metavar="", help="Print JSON instead of a table.")
                        ] = False,
    up: Annotated[str | None, Opt(metavar=choices("y", "z"), show_default="z for STL, else y",
                                  help="Up axis of OBJ/PLY/STL files.")] = None,
) -> None:
    """What a mesh file or frame folder holds.

    Vertices, faces, parts, bounding box, units, animations and morph targets.

    Example:

      neurok info chair.glb --json
    """
    from ..io.describe import describe, summary_rows

    data = describe(file, up=up)
    if json_out:
        print_json(data)
        return
    print_rows(summary_rows(data))
    warn(data["warnings"])
