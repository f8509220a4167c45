"""``neurok preview FILE [-o out.mp4]``: look at any animated glTF or frame folder (or one
frame of it: ``-o still.png --at T``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _options as o
from ._checks import ranged
from ._common import guarded, out, print_json, progress_bar, warn
from ._names import beside

VIEW = "View"


@guarded
def preview(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", show_default=False,
        help="Animated glTF/GLB, frame folder, dataset .npz sequence, or a static mesh "
             "(shown turning).")],
    up: o.Up = None,
    animation: o.Animation = None,
    output: Annotated[Path | None, o.Opt(
        "-o", "--output", panel=o.OUTPUT, metavar="FILE",
        show_default="FILE's name + .mp4, beside it, a new name",
        help="Video to write (.mp4 or .gif), or one frame as a .png still.")] = None,
    fps: Annotated[float | None, o.Opt(
        panel=o.OUTPUT, metavar="FPS", show_default="the file's keyframes, else 30",
        help=ranged("Frames per second.", "fps", "preview"))] = None,
    at: Annotated[float | None, o.Opt(
        panel=o.OUTPUT, metavar="SECONDS", show_default="the middle of the animation",
        help="A .png still's time.")] = None,
    json_out: o.Json = False,
    width: Annotated[int, o.Opt(panel=VIEW, metavar="PIXELS",
                                help=ranged("Image width.", "width"))] = 640,
    height: Annotated[int, o.Opt(panel=VIEW, metavar="PIXELS",
                                 help=ranged("Image height.", "height"))] = 480,
    azimuth: Annotated[float, o.Opt(
        panel=VIEW, metavar="DEGREES", help=ranged("Camera angle about +Y.", "azimuth"))
    ] = 30.0,
    elevation: Annotated[float, o.Opt(
        panel=VIEW, metavar="DEGREES",
        help=ranged("Camera angle above the ground.", "elevation"))] = 20.0,
    renderer: o.Renderer = "auto",
) -> None:
    """Render an animation to MP4 or GIF, or one frame to PNG.

    Examples:

      neurok preview chair_animated.glb         (writes chair_animated.mp4 beside it)

      neurok preview out.glb -o still.png --at 1.5 --width 1280 --height 960
    """
    from ..render.preview import PreviewConfig
    from ..render.preview import preview as run_preview

    cfg = PreviewConfig(input=file, output=output or beside(file, ""),
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
