"""``neurok preview FILE -o out.mp4``: look at any animated glTF or frame folder (or one
frame of it: ``-o still.png --at T``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _options as o
from ._checks import ranged
from ._common import guarded, out, print_json, progress_bar, warn


@guarded
def preview(
    file: Annotated[Path, typer.Argument(
        help="Animated glTF/GLB, frame folder, or a static mesh (shown turning).")],
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Video to write (.mp4 or .gif), or one frame as a .png "
                               "still; default: FILE's name + .mp4.")
    ] = None,
    fps: Annotated[float | None, typer.Option(
        help=ranged("Frames per second (default: the file's keyframes, else 30).", "fps",
                    "preview"))] = None,
    width: Annotated[int, typer.Option(help=ranged("Image width in pixels.", "width"))] = 640,
    height: Annotated[int, typer.Option(help=ranged("Image height in pixels.", "height"))] = 480,
    azimuth: Annotated[float, typer.Option(
        help=ranged("Camera angle about +Y, degrees.", "azimuth"))] = 30.0,
    elevation: Annotated[float, typer.Option(
        help=ranged("Camera angle above the ground, degrees.", "elevation"))
                         ] = 20.0,
    renderer: Annotated[str, typer.Option(
        help="auto, gl (OpenGL through EGL) or numpy (no graphics libraries).")] = "auto",
    up: Annotated[str | None, typer.Option(
        help="Up axis of OBJ/PLY/STL input: y or z (default: z for STL, else y).")
                  ] = None,
    at: Annotated[float | None, typer.Option(
        help="A .png still's time in seconds (default: the middle of the animation).")
                  ] = None,
    animation: o.Animation = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Render an animation to an MP4 (H.264) or GIF preview, or one frame to a PNG."""
    from ..preview import PreviewConfig
    from ..preview import preview as run_preview

    cfg = PreviewConfig(input=file, output=output or Path(file.name).with_suffix(".mp4"),
                        fps=fps, width=width, height=height, azimuth=azimuth,
                        elevation=elevation, renderer=renderer, up=up, at=at,
                        animation=animation)
    with progress_bar("rendering") as update:
        report = run_preview(cfg, progress=update)
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    if report.still:
        out.print(f"wrote [bold]{report.output}[/]: the frame at {report.seconds:.3g} s, "
                  f"{report.triangles:,} triangles, {report.renderer} renderer")
        return
    out.print(f"wrote [bold]{report.output}[/]: {report.frames} frames at {report.fps:.4g} fps "
              f"({report.seconds:.2f} s), {report.triangles:,} triangles, "
              f"{report.renderer} renderer")
