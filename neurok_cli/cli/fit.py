"""``neurok fit OBSERVED [--rest REST] -o OUT.json``: the latent state(s) of observed shapes,
and optionally an animation that continues (or re-simulates) an observed sequence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _options as o
from ._checks import ranged
from ._common import guarded, print_json, print_rows, progress_bar, warn
from ._options import Opt

FIT, THEN = "Fit", "Then animate (a sequence only)"
FIT_STEPS = 60  # FitConfig.steps, the library's default (a test holds them equal)


@guarded
def fit(
    observed: Annotated[Path, typer.Argument(
        metavar="OBSERVED", show_default=False,
        help="Observed shape: a mesh, a point cloud (.xyz/.txt/.csv/.npy/.ply/.obj without "
             "faces), an animated glTF or a folder of frames.")],
    rest: Annotated[Path | None, Opt(
        panel=o.INPUT, metavar="FILE", show_default="a sequence's first frame",
        help="The undeformed mesh.")] = None,
    fps: Annotated[float | None, Opt(
        panel=o.INPUT, metavar="FPS", show_default="its frames.json's, else 30",
        help="Frame rate of a frame folder.")] = None,
    up: o.Up = None,
    animation: o.Animation = None,
    output: Annotated[Path, Opt("-o", "--output", panel=o.OUTPUT, metavar="FILE.json",
                                show_default=False, help="Where to write the JSON result.")
                      ] = ...,
    json_out: o.Json = False,
    steps: Annotated[int, Opt(panel=FIT, metavar="N",
                              help=ranged("Most Levenberg-Marquardt steps per stage of a "
                                          "learned-space fit.", "steps"))
                     ] = FIT_STEPS,
    points: Annotated[int, Opt(panel=FIT, metavar="N",
                               help=ranged("Observed points in the fit.", "points"))
                      ] = 2048,
    samples: Annotated[int, Opt(panel=FIT, metavar="N",
                                help="Surface samples each way for the reported error (at "
                                     "least 16).")
                       ] = 10_000,
    seed: Annotated[int, Opt(panel=FIT, metavar="N", help=ranged("Random seed.", "seed"))] = 0,
    articulated: Annotated[bool, Opt(
        "--articulated", panel=FIT, metavar="",
        help="Fit the joint positions (and the base's pose) of a rest made of rigid parts, "
             "as animate moves them, instead of the shape's state.")] = False,
    joint: o.Joints = None,
    space: Annotated[str, Opt(
        panel=FIT, metavar=o.choices("auto", "handles", "learned"),
        help="Shape space of the fit: handles (the object's own affine handles, what auto "
             "takes; --then-animate continues there) or learned (the bundle's latent space: "
             "the encoder's guess, then the Chamfer distance).")] = "auto",
    weights: o.Weights = "neurok-base",
    device: o.Device = "auto",
    then_animate: Annotated[Path | None, Opt(
        panel=THEN, metavar="FILE", show_default="none",
        help="Also animate from the recovered state of a sequence (.glb, .mp4, folder).")
                            ] = None,
    start: Annotated[str, Opt("--from", panel=THEN, metavar=o.choices("last", "first"),
                              help="last (continue) or first (re-simulate).")] = "last",
    seconds: Annotated[float, Opt(panel=THEN, metavar="SECONDS",
                                  help=ranged("Duration of the animation.", "seconds"))] = 4.0,
    material: Annotated[str, Opt(panel=THEN, metavar=o.choices("auto", "soft", "cloth", "beam"),
                                 help="Material category, as animate's: the handles a "
                                      "handles fit takes, and the animation's.")] = "auto",
    size: Annotated[float | None, Opt(
        panel=THEN, metavar="METRES", show_default="from the file's units",
        help="Largest extent of the animation's body (OBJ/PLY/STL frames).")] = None,
    preset: Annotated[str | None, Opt(panel=THEN, metavar="NAME", show_default="free",
                                      help="Preset of the animation.")] = None,
    stiffness: Annotated[float, Opt(panel=THEN, metavar="SCALE",
                                    help=ranged("Scale on the stiffness.", "stiffness"))] = 1.0,
    strain_limit: Annotated[float | None, Opt(
        panel=THEN, metavar="STRAIN", show_default="the weights' for the material",
        help="Largest edge strain of the decoded frames (inf: none); --space learned "
             "only.")] = None,
    gravity: Annotated[str | None, Opt(panel=THEN, metavar="X,Y,Z", show_default="0,-9.81,0",
                                       help="Gravity, m/s^2.")] = None,
    ground: Annotated[bool | None, Opt("--ground/--no-ground", panel=THEN, metavar="",
                                       show_default="by the preset",
                                       help="A floor at the sequence's lowest point.")] = None,
    push: Annotated[list[str] | None, Opt(
        "--push", panel=THEN, metavar="REGION:X,Y,Z[@T]", show_default="none",
        help="Velocity kick of a region, m/s, at T seconds; repeatable.")] = None,
    wind: Annotated[str | None, Opt(panel=THEN, metavar="X,Y,Z", show_default="0,0,0",
                                    help="Wind velocity, m/s.")] = None,
) -> None:
    """Recover the state of observed shapes (inverse kinematics).

    Examples:

      neurok fit scan.ply --rest chair.obj -o scan_fit.json

      neurok fit clip.glb -o clip.json --then-animate more.glb --seconds 2 --push top:0,0,1

      neurok fit open.obj --rest chest.glb --articulated -o lid.json   (the lid's angle)
    """
    from ..deform.animate import AnimateConfig
    from ..deform.animate import animate as run_animate
    from ..deform.fit import FitConfig, continuation, result_json, write_result
    from ..deform.fit import fit as run_fit
    from ..errors import UsageError
    from ..scenario.conditions import parse_impulse, parse_vector
    from ..scenario.presets import Overrides

    if start not in ("first", "last"):
        raise UsageError(f"--from must be first or last, not {start!r}")
    vec = lambda t, n: None if t is None else parse_vector(t, n)  # noqa: E731
    over = Overrides(gravity=vec(gravity, "--gravity"), ground=ground, wind=vec(wind, "--wind"),
                     pushes=[parse_impulse(p) for p in push or []])
    cfg = FitConfig(observed=observed, rest=rest, steps=steps, points=points, samples=samples,
                    fps=fps, up=up, seed=seed, weights=weights, device=device,
                    animation=animation, space=space, material=material,
                    require_sequence=then_animate is not None)
    if articulated or joint:
        _fit_joints(cfg, joint or [], output, json_out, then_animate)
        return
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
            ("space", f"the object's own: {doc['handles']} handles, {doc['latent_dim']} "
                      "coordinates" if doc["space"] == "handles" else
                      f"learned: {doc['latent_dim']} latent dims"),
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


def _fit_joints(cfg, joints: list[str], output: Path, json_out: bool,
                then_animate: Path | None) -> None:
    """``--articulated``: the joints' positions of each observed shape (rig/fit.py)."""
    from ..deform.fit import write_json
    from ..errors import UsageError
    from ..rig.articulation import parse_joint
    from ..rig.fit import fit_rig

    if then_animate is not None:
        raise UsageError("--then-animate: not for a joint fit (--articulated); animate the "
                         "rest with --preset and --joint instead")
    specs = [parse_joint(j) for j in joints]
    with progress_bar("fitting joints") as update:
        doc = fit_rig(cfg, specs, progress=lambda i, n: update(i, n))
    write_json(doc, output)
    if json_out:
        print_json(doc)
        return
    last = doc["shapes"][-1]["joints"]
    units = {r["part"]: r["joint"]["kind"] for r in doc["rig"] if r.get("joint")}
    angle = lambda n, v: f"{v * 57.29578:.1f}°" if units[n] == "hinge" else f"{v:.4g} m"  # noqa: E731
    print_rows([("observed", f"{cfg.observed} ({doc['observed']}, {doc['frames']} "
                             "shape(s), joint fit)"),
                ("rest", doc["rest"]),
                ("Chamfer-L1", f"{doc['chamfer_l1']['mean']:.4f} mean, "
                               f"{doc['chamfer_l1']['max']:.4f} max (rest pose "
                               f"{doc['rest_chamfer_l1']:.4f}; unit: bounding-box diagonal)"),
                *[(f"joint '{n}'", angle(n, v) + (" (last shape)" if doc["frames"] > 1 else
                                                   "")) for n, v in last.items()],
                ("output", str(output)), ("time (s)", f"{doc['seconds']:.2f}")])


def _vec(v: list[float]) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def _first_frame(folder: Path) -> Path:
    from ..io.frames import frame_files

    return frame_files(folder)[0]
