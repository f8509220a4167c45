"""``neurok preview FILE -o out.mp4``: look at any animated glTF or frame folder."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import guarded, out, print_json, progress_bar, warn


@guarded
def preview(
    file: Path = typer.Argument(..., help="Animated glTF/GLB, frame folder, or a static mesh."),
    output: Path = typer.Option(None, "-o", "--output",
                                help="Video to write (.mp4 or .gif); default FILE's name .mp4."),
    fps: float = typer.Option(None, "--fps", help="Frames per second (default: the file's)."),
    width: int = typer.Option(640, "--width", help="Image width in pixels."),
    height: int = typer.Option(480, "--height", help="Image height in pixels."),
    azimuth: float = typer.Option(30.0, "--azimuth", help="Camera angle about +Y, degrees."),
    elevation: float = typer.Option(20.0, "--elevation", help="Camera angle above ground, deg."),
    renderer: str = typer.Option("auto", "--renderer",
                                 help="auto, gl (EGL/OpenGL) or numpy (no GPU libraries)."),
    up: str = typer.Option(None, "--up", help="Up axis of OBJ/PLY/STL input: y or z."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Render an animation to an MP4 (H.264) or GIF preview."""
    from ..preview import PreviewConfig, preview as run_preview

    cfg = PreviewConfig(input=file, output=output or Path(file.name).with_suffix(".mp4"),
                        fps=fps, width=width, height=height, azimuth=azimuth,
                        elevation=elevation, renderer=renderer, up=up)
    with progress_bar("rendering") as update:
        report = run_preview(cfg, progress=update)
    if json_out:
        print_json(report.__dict__)
        return
    warn(report.warnings)
    out.print(f"wrote [bold]{report.output}[/]: {report.frames} frames at {report.fps:.4g} fps "
              f"({report.seconds:.2f} s), {report.triangles:,} triangles, "
              f"{report.renderer} renderer")
