"""Materials a user can name (``--material rubber``), each a category and an elastic material.

Solids move as soft bodies (or beams, when the shape is long and slender); cloths as
sheets. The cloths follow the presets artists know from Blender (silk, cotton, denim,
leather: light and limp to heavy and stiff): their areal densities are real fabrics'
(0.05-0.9 kg/m²) and their stiffness grows with their thickness cubed in bending. The
engine's cloth steps at a fixed 5 ms, so every cloth keeps the default's wave speed
sqrt(E / rho) (~13 m/s) and differs in weight, thickness and damping.

Plastic and wood are far stiffer (GPa) than any frame rate shows: at their real modulus a
0.5 m part sags by micrometres and rings at kHz, which would cost tens of thousands of
integration steps for a motion no one can see. They are moved at a modulus (2 and 5 MPa)
whose sag and ringing are still below a millimetre and above 40 Hz for an everyday object:
they look rigid, as they should, at an affordable step.
"""

from __future__ import annotations

from dataclasses import dataclass

from .conditions import PRESET_MATERIALS, SimMaterial


@dataclass(frozen=True)
class NamedMaterial:
    """A material by name: its category ("solid" takes soft or beam by the shape, or
    "cloth") and its elastic constants."""

    kind: str
    material: SimMaterial
    note: str


MATERIALS = {
    "jelly": NamedMaterial("solid", SimMaterial(young=1e4, poisson=0.45, density=1050.0,
                                                damping=0.002), "wobbles and sags"),
    "foam": NamedMaterial("solid", SimMaterial(young=3e4, poisson=0.1, density=60.0,
                                               damping=0.01), "light, squashes, soaks up"),
    "rubber": NamedMaterial("solid", SimMaterial(young=2e5, poisson=0.45, density=1100.0,
                                                 damping=0.003), "squashes and springs back"),
    "plastic": NamedMaterial("solid", SimMaterial(young=2e6, poisson=0.35, density=1000.0,
                                                  damping=0.002), "looks rigid"),
    "wood": NamedMaterial("solid", SimMaterial(young=5e6, poisson=0.3, density=600.0,
                                               damping=0.002), "looks rigid, light"),
    "silk": NamedMaterial("cloth", SimMaterial(young=2.9e4, poisson=0.3, density=170.0,
                                               damping=0.0005, thickness=0.0003),
                          "light, flowing"),
    "cotton": NamedMaterial("cloth", SimMaterial(young=5e4, poisson=0.3, density=300.0,
                                                 damping=0.001, thickness=0.0005),
                            "everyday fabric"),
    "denim": NamedMaterial("cloth", SimMaterial(young=8.5e4, poisson=0.3, density=500.0,
                                                damping=0.002, thickness=0.0008),
                           "heavy, holds folds"),
    "leather": NamedMaterial("cloth", SimMaterial(young=1e5, poisson=0.3, density=600.0,
                                                  damping=0.003, thickness=0.0015),
                             "heavy and stiff"),
}


def material_names() -> list[str]:
    """Every name ``--material`` takes: auto, the categories, then the named materials."""
    return ["auto", *PRESET_MATERIALS, *MATERIALS]


def resolve_material(name: str, shape_category: str) -> tuple[str, SimMaterial]:
    """The category and material of ``--material name`` for a shape whose own category
    (``body.auto_category``) is ``shape_category``: a category name or auto keeps that
    category's default material; a solid material keeps a beam a beam and makes anything
    else a soft body; a cloth material makes the shape a sheet."""
    if name == "auto":
        return shape_category, PRESET_MATERIALS[shape_category]
    if name in PRESET_MATERIALS:
        return name, PRESET_MATERIALS[name]
    named = MATERIALS[name]
    if named.kind == "cloth":
        return "cloth", named.material
    return ("beam" if shape_category == "beam" else "soft"), named.material
