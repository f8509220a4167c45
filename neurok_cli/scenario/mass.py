"""The mass of a body and the air around it: what a run's forces are made from, shared by the
latent motion (``deform``) and the physics engine (``sim``)."""

from __future__ import annotations

import numpy as np

from .conditions import SimMaterial

AIR_DENSITY = 1.2  # kg/m^3
DRAG = 1.0  # pressure coefficient of a flat plate


def closed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Signed volume of a closed, outward-oriented surface (m^3)."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def surface_area(vertices: np.ndarray, faces: np.ndarray) -> float:
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    return float(np.linalg.norm(np.cross(b - a, c - a), axis=1).sum() / 2)


def total_mass(vertices: np.ndarray, faces: np.ndarray, category: str,
               material: SimMaterial) -> float:
    """Mass from density: area x thickness for cloth, enclosed volume for solids (kg)."""
    if category == "cloth":
        return material.density * surface_area(vertices, faces) * material.thickness
    vol = abs(closed_volume(vertices, faces))
    if vol <= 0:  # an open "solid": use half its bounding box
        vol = 0.5 * float(np.prod(np.maximum(np.ptp(vertices, axis=0), 1e-3)))
    return material.density * vol
