"""``neurok fit OBSERVED [--rest REST] -o OUT.json``: the latent state(s) of observed shapes,
and optionally an animation that continues (or re-simulates) an observed sequence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn

Opt = typer.Option


@guarded
def fit(
    observed: Annotated[Path, typer.Argument(
        help="Observed shape: a mesh, a point cloud (.xyz/.txt/.csv/.npy/.ply/.obj without "
             "faces), an animated glTF or a folder of frames.")],
    output: Annotated[Path, Opt("-o", "--output", help="Where to write the JSON result.")],
    rest: Annotated[Path | None, Opt(
        help="The undeformed mesh (default for a sequence: its first frame).")] = None,
    steps: Annotated[int, Opt(help=ranged("Optimisation steps per fit.", "steps"))] = 150,
    points: Annotated[int, Opt(help=ranged("Observed points in the Chamfer fit.", "points"))
                      ] = 2048,
    samples: Annotated[int, Opt(help="Surface samples each way for the reported error.")
                       ] = 10_000,
    fps: Annotated[float | None, Opt(help="Frame rate of a frame folder (default: its "
                                           "frames.json's, else 30).")] = None,
    up: o.Up = None,
    animation: o.Animation = None,
    seed: Annotated[int, Opt(help=ranged("Random seed.", "seed"))] = 0,
    weights: o.Weights = "neurok-base",
    device: o.Device = "auto",
    then_animate: Annotated[Path | None, Opt(
        help="Also animate from the recovered state of a sequence (.glb, .mp4, folder).")
                            ] = None,
    start: Annotated[str, Opt("--from", help="last (continue) or first (re-simulate).")
                     ] = "last",
    seconds: Annotated[float, Opt(help=ranged("Duration of the animation, s.", "seconds"))] = 4.0,
    material: Annotated[str, Opt(help="auto, soft, cloth or beam.")] = "auto",
    size: Annotated[float | None, Opt(help="Largest extent of the animation's body in "
                                           "metres (OBJ/PLY/STL frames).")] = None,
    preset: Annotated[str | None, Opt(help="Preset of the animation (default: free).")
                      ] = None,
    stiffness: o.Stiffness = 1.0,
    strain_limit: o.StrainLimit = None,
    gravity: o.Gravity = None,
    ground: Annotated[bool | None, Opt("--ground/--no-ground",
                                       help="A floor at the sequence's lowest point.")] = None,
    push: o.Pushes = None,
    wind: o.Wind = None,
    json_out: o.Json = False,
) -> None:
    """Inverse kinematics: recover the latent state of observed shapes."""
    from ..animate import AnimateConfig, Overrides
    from ..animate import animate as run_animate
    from ..errors import UsageError
    from ..fit import FitConfig, continuation, result_json, write_result
    from ..fit import fit as run_fit
    from ..sim.conditions import parse_impulse, parse_vector

    if start not in ("first", "last"):
        raise UsageError(f"--from must be first or last, not {start!r}")
    vec = lambda t, n: None if t is None else parse_vector(t, n)  # noqa: E731
    over = Overrides(gravity=vec(gravity, "--gravity"), ground=ground, wind=vec(wind, "--wind"),
                     pushes=[parse_impulse(p) for p in push or []])
    cfg = FitConfig(observed=observed, rest=rest, steps=steps, points=points, samples=samples,
                    fps=fps, up=up, seed=seed, weights=weights, device=device,
                    animation=animation,
                    require_sequence=then_animate is not None)
    with progress_bar("fitting") as update:
        result = run_fit(cfg, progress=lambda i, n: update(i, n))
    write_result(result, output)
    doc = result_json(result)
    report = None
    if then_animate is not None:
        source = rest or (observed if observed.is_file() else _first_frame(observed))
        acfg = AnimateConfig(input=source, output=then_animate, seconds=seconds,
                             fps=float(1.0 / max(result.observation.times[1]
                                                 - result.observation.times[0], 1e-6)),
                             material=material, preset=preset, stiffness=stiffness,
                             strain_limit=strain_limit, size=size, up=up,
                             overrides=over, seed=seed, weights=weights, device=device,
                             continuation=continuation(result, start))
        with progress_bar("animating") as update:
            report = run_animate(acfg)
    if json_out:
        if report is not None:
            doc["animation"] = report.__dict__
        print_json(doc)
        return
    rows = [("observed", f"{observed} ({doc['observed']}, {doc['frames']} shape(s), "
                         f"{doc['mode']} fit)"),
            ("rest", doc["rest"]),
            ("Chamfer-L1", f"{doc['chamfer_l1']['mean']:.4f} mean, "
                           f"{doc['chamfer_l1']['max']:.4f} max (rest pose "
                           f"{doc['rest_chamfer_l1']:.4f}; unit: bounding-box diagonal)"),
            ("latent", f"{doc['latent_dim']} dims"),
            ("output", str(output)),
            ("time (s)", f"{doc['seconds']:.2f}")]
    if "initial_conditions" in doc:
        s = doc["initial_conditions"][start]
        rows.append((f"state ({start})", f"t = {s['time']:.3f} s, velocity "
                     f"{_vec(s['velocity'])} (x size/s), spin {_vec(s['spin'])} rad/s"))
    if report is not None:
        warn(report.warnings)
        rows.append(("animation", f"{report.output} ({report.frames} frames, "
                                  f"{report.category}, preset {report.preset})"))
    print_rows(rows)


def _vec(v: list[float]) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def _first_frame(folder: Path) -> Path:
    from ..io.frames import frame_files

    return frame_files(folder)[0]
