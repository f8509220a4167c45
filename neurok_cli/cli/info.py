"""``neurok info FILE``: what a mesh file or frame folder holds."""

from __future__ import annotations

import math
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

    Vertices, faces, parts, bounding box, units, animations and morph targets; for an
    object of several parts, the joints animate would move them on.

    Example:

      neurok info chair.glb --json
    """
    from ..io.describe import describe, describe_file, summary_rows

    if file.is_dir():
        data = describe(file, up=up)
    else:  # a file is read once, for its facts and its joints
        from ..io.mesh import load_mesh
        from ..rig.animate import file_rig

        asset = load_mesh(file, up=up)
        data = {**describe_file(asset), "rig": file_rig(asset)}
    if json_out:
        print_json(data)
        return
    print_rows(summary_rows(data) + _rig_rows(data.get("rig")))
    warn(data["warnings"])


def _rig_rows(rig: list[dict] | None) -> list[tuple[str, str]]:
    """How the parts hang together, each joint as ``--joint`` would give it."""
    if not rig:
        return []
    num = lambda x: f"{x:.4g}" if abs(x) > 5e-3 else "0"  # noqa: E731
    vec = lambda v: ",".join(num(x) for x in v)  # noqa: E731
    rows = []
    for part in rig:
        j = part.get("joint")
        if part["parent"] is None:
            text = "the base"
        elif j is None:
            text = f"rides on '{part['parent']}' ({part['found']})"
        elif j["kind"] == "hinge":
            lo, hi = (round(math.degrees(x)) for x in j["limits"])
            text = (f"hinge on '{part['parent']}', {lo}..{hi}°: "
                    f"{part['part']}:hinge:{vec(j['axis'])}@{vec(j['anchor'])}")
        else:
            text = (f"slide in '{part['parent']}', {j['limits'][0]:.3g}..{j['limits'][1]:.3g}: "
                    f"{part['part']}:slide:{vec(j['axis'])}")
        rows.append((f"joint '{part['part']}'", text))
    return rows
