"""``neurok info FILE``: what a mesh file or frame folder holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ._common import guarded, out, print_json, warn


@guarded
def info(
    file: Annotated[Path, typer.Argument(
        help="Mesh file (OBJ, GLB/glTF, PLY, STL) or frame folder.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")
                        ] = False,
    up: Annotated[str | None, typer.Option(help="Up axis of OBJ/PLY/STL files: y or z.")
                  ] = None,
) -> None:
    """Vertices, faces, parts, bounding box, units, animations and morph targets of a file."""
    from ..io.describe import describe, summary_rows

    data = describe(file, up=up)
    if json_out:
        print_json(data)
        return
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for label, value in summary_rows(data):
        table.add_row(label, value)
    out.print(table)
    warn(data["warnings"])
