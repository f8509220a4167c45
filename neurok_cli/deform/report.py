"""What ``neurok animate`` reports: the ``--json`` figures of a run (``AnimateReport``) and
its summary in a user's words (``report_rows``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..scenario.conditions import SimMaterial
from ..scenario.placement import ground_row


@dataclass
class AnimateReport:
    """One run of ``neurok animate``, as ``--json`` prints it (sizes in metres, masses in kg,
    times in seconds)."""

    output: Path
    category: str
    preset: str
    frames: int
    fps: float
    samples: int
    vertices: int
    welded_vertices: int
    latent_dims: int
    reduced_dims: int
    dynamics_points: int
    size_m: float
    mass_kg: float
    steps: int
    fit_residual: float
    run_residual: float
    energy: dict
    timings: dict
    export: dict
    weights: str
    device: str
    warnings: list[str]
    pins: dict | None = None  # vertices, points, hold (clamp or body.Joint's); None: unpinned
    strain_limit: float | None = None  # largest edge strain kept; None: frames as decoded
    strain_sweeps: int = 0  # projection sweeps the limit took (see model/strain.py)
    material: str = ""  # the material used, in words
    size_from: str = ""  # where size_m came from (see io.mesh.size_source)
    input: str = ""  # the file animated
    ground: dict | None = None  # where the ground is (placement.Ground.json); None: no ground
    rig: list[dict] | None = None  # an articulated object's parts and joints
    start_height_m: float = 0.0  # the preset's (or --drop's) start over the ground, metres
    conditions: dict | None = None  # the run's forces, pins and start (Conditions.json)
    handles: dict | None = None  # the object's own shape space (``--space handles``): its
    # handles, coordinates, cubature elements, whether a solid, steps and iterations; None:
    # the learned space
    space: str = ""  # the shape space moved in: handles or learned ("": parts on joints)


def energy_row(e: dict) -> dict:
    """The report's energy figures: the largest kinetic energy, what was dissipated and the
    work the forces did by the end (the largest over samples), and the balance's drift."""
    return {"kinetic_max_J": float(e["kinetic"].max()),
            "dissipated_J": float(e["dissipated"][-1].max()),
            "external_work_J": float(e["work"][-1].max()),
            "drift": _drift(e)}


def material_row(name: str, category: str, mat: SimMaterial) -> str:
    """The material as the summary shows it: its name, category and constants."""
    label = {"auto": f"auto: {category}", **{c: c for c in ("soft", "cloth", "beam")}}.get(
        name, f"{name} ({category})")
    return (f"{label}; Young's modulus {mat.young:.3g} Pa, density {mat.density:.3g} kg/m³, "
            f"Poisson {mat.poisson:g}" + (f", thickness {mat.thickness * 1e3:.2g} mm"
                                          if category == "cloth" else ""))


def _drift(e: dict[str, np.ndarray]) -> float:
    """Largest change of kinetic + potential + dissipated - work, relative to the energy
    scale of the run (the largest kinetic energy, or the start's magnitude)."""
    total = e["total"]
    scale = max(float(e["kinetic"].max()), float(np.abs(total[0]).max()), 1e-12)
    return float(np.abs(total - total[0]).max() / scale)


def _space_row(rep: AnimateReport) -> list[tuple[str, str]]:
    if rep.handles is not None:
        return [("shape space", f"the object's own: {rep.handles['handles']} affine handles")]
    if rep.space == "learned":
        return [("shape space", f"learned: the bundle's latent space ({Path(rep.weights).name})")]
    return []


def report_rows(rep: AnimateReport, verbose: bool = False) -> list[tuple[str, str]]:
    """The summary of a run in a user's words; with ``verbose``, the model's figures and the
    time of each stage too. Each row fits in 100 columns."""
    t = rep.timings
    kind = {"soft": "soft body", "cloth": "cloth", "beam": "beam"}.get(rep.category,
                                                                        rep.category)
    more = f", {rep.samples} different motions" if rep.samples > 1 else ""
    rows = [("animated", f"{rep.input or '?'}: {rep.vertices:,} vertices, a {kind}"),
            ("size", _size_row(rep.size_m, rep.size_from)),
            ("mass", f"{rep.mass_kg:.3g} kg, from the material's density"),
            ("material", rep.material.split(", Poisson")[0]),
            *_space_row(rep),
            ("preset", rep.preset + (f"; pinned: {rep.pins['vertices']:,} vertices"
                                     if rep.pins else "")),
            ("ground", ground_row(rep.ground)),
            ("frames", f"{rep.frames} at {rep.fps:g} fps ({(rep.frames - 1) / rep.fps:.3g} s)"
                       f"{more}"),
            ("output", f"{rep.output} ({rep.export['format']}, "
                       f"{rep.export['bytes'] / 1e6:.2f} MB)"),
            *_riding_row(rep.export.get("riding_parts")),
            ("took", f"{t['total']:.1f} s")]
    if rep.rig is not None:
        return _rig_rows(rep, rows, verbose)
    if not verbose:
        return rows
    stages = ", ".join(f"{k} {t[k]:.2f}" for k in ("load", "encode", "fit", "integrate",
                                                    "decode", "export"))
    pins = [("pins", f"{rep.pins['vertices']:,} vertices, {rep.pins['points']} dynamics "
                     f"points; {rep.pins['hold']}")] if rep.pins else []
    vertices = ("vertices", f"{rep.vertices:,} ({rep.welded_vertices:,} welded)")
    energy = ("energy", f"max kinetic {rep.energy['kinetic_max_J']:.3g} J, dissipated "
                        f"{rep.energy['dissipated_J']:.3g} J, drift {rep.energy['drift']:.2%}")
    if rep.handles is not None:
        h = rep.handles
        cubature = "tetrahedra" if h["solid"] else "triangles"
        return rows + [
            vertices, *pins,
            ("handles", f"{h['coordinates']} coordinates, energy on {h['elements']:,} "
                        f"cubature {cubature}"),
            ("integration", f"{rep.steps:,} BDF2 steps of {h['step_s'] * 1e3:.1f} ms, "
                            f"{h['iterations']:.1f} minimizer iterations each"),
            energy, ("stages (s)", stages)]
    return rows + [
        vertices,
        *pins,
        ("latent", f"{rep.latent_dims} dims, {rep.reduced_dims} reduced, "
                   f"{rep.dynamics_points} dynamics points"),
        ("integration", f"{rep.steps:,} RK4 steps"),
        ("strain limit", f"{rep.strain_limit:.2%} of each edge's rest length, "
                         f"{rep.strain_sweeps} sweeps" if rep.strain_limit is not None
         else "none: frames as decoded"),
        ("decoder fit", f"residual {rep.fit_residual:.2%} held out, "
                        f"{rep.run_residual:.3%} of the size along the run"),
        energy,
        ("stages (s)", stages),
        ("device", rep.device),
        ("weights", rep.weights)]


def _rig_rows(rep: AnimateReport, rows: list[tuple[str, str]], verbose: bool
              ) -> list[tuple[str, str]]:
    """An articulated object's summary: its parts and how each joint moved."""
    from ..rig.animate import part_count, part_rows

    rows = [r for r in rows if r[0] != "took"]
    rows[0] = ("animated", f"{rep.input}: {rep.vertices:,} vertices, {part_count(rep.rig)} "
                           "rigid parts on joints")
    rows += part_rows(rep.rig)
    t = rep.timings
    rows.append(("took", f"{t['total']:.1f} s"))
    if verbose:
        rows += [("coordinates", f"{rep.latent_dims} ({rep.steps:,} RK4 steps)"),
                 ("energy", f"max kinetic {rep.energy['kinetic_max_J']:.3g} J, lost to "
                            f"damping and limits {rep.energy['dissipated_J']:.3g} J"),
                 ("stages (s)", ", ".join(f"{k} {t[k]:.2f}" for k in
                                          ("load", "rig", "integrate", "frames", "export")))]
    return rows


def _riding_row(names: list[str] | None) -> list[tuple[str, str]]:
    """A glTF's parts that its own animation moves ride on the body (io/gltf/parts.py)."""
    if not names:
        return []
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return [("parts", f"{shown} ride{'s' if len(names) == 1 else ''} on the body (moved by "
                      "the file's animation)")]


def _size_row(size_m: float, source: str) -> str:
    """The object's size and where it came from (io.mesh.size_source), shortly."""
    if source == "--size":
        return f"{size_m:.3g} m, as --size gave it"
    if source.startswith("the file's"):
        return f"{size_m:.3g} m, from {source}"
    return f"{size_m:.3g} m, assumed: the file has no units (--size or --units sets it)"
