"""Random materials and conditions for dataset sequences (all from an explicit Generator)."""

from __future__ import annotations

import numpy as np

from ..scenario.conditions import Conditions, Impulse, SimMaterial

STAR_SHAPED = ("sphere", "ellipsoid", "superquadric", "blob", "capsule", "box")


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _unit(rng: np.random.Generator, horizontal: bool = False) -> np.ndarray:
    v = rng.normal(size=3)
    if horizontal:
        v[1] = 0.0
    return v / max(np.linalg.norm(v), 1e-12)


SOLID_SAG = (0.004, 0.12)  # rho g L / E of a lattice solid: from stiff to a jelly that sags


def sample_material(category: str, rng: np.random.Generator, vertices: np.ndarray,
                    by_sag: bool = False) -> SimMaterial:
    """A material for ``category``; beams are sized so their sag under gravity is 1-25 % of
    their length (a stiffness that suits the shape, from Euler-Bernoulli). ``by_sag``: a
    soft body's stiffness from its weight too, E = rho g L / s with s in SOLID_SAG, so that
    a solid that fills its volume squashes visibly but never puddles (the same draws)."""
    if category == "soft" and by_sag:
        sag = _log_uniform(rng, *SOLID_SAG)
        poisson, density = rng.uniform(0.25, 0.45), rng.uniform(100, 1200)
        damping = _log_uniform(rng, 5e-4, 1e-2)
        length = float(np.ptp(vertices, axis=0).max())
        return SimMaterial(young=float(density * 9.81 * length / sag), poisson=poisson,
                           density=density, damping=damping)
    if category == "soft":
        return SimMaterial(young=_log_uniform(rng, 5e3, 2e5), poisson=rng.uniform(0.25, 0.45),
                           density=rng.uniform(100, 1200), damping=_log_uniform(rng, 5e-4, 1e-2))
    if category == "cloth":
        return SimMaterial(young=_log_uniform(rng, 1e4, 5e5), poisson=rng.uniform(0.2, 0.4),
                           density=rng.uniform(150, 600), damping=_log_uniform(rng, 2e-4, 5e-3),
                           thickness=_log_uniform(rng, 5e-4, 3e-3))
    ext = np.ptp(vertices, axis=0)
    length, height, width = ext[0], ext[1], ext[2]
    density = rng.uniform(300, 3000)
    sag = _log_uniform(rng, 0.01, 0.25)
    inertia, area = width * height**3 / 12, width * height
    young = density * area * 9.81 * length**3 / (8 * inertia * sag)
    return SimMaterial(young=float(min(young, 5e9)), poisson=rng.uniform(0.25, 0.45),
                       density=density, damping=_log_uniform(rng, 5e-4, 5e-3))


def _gravity(rng: np.random.Generator) -> tuple[float, float, float]:
    g = np.array([0.0, -9.81, 0.0])
    if rng.random() < 0.15:  # a tilted world now and then
        axis = _unit(rng, horizontal=True)
        angle = rng.uniform(0.05, 0.45)
        g = np.cos(angle) * g + np.sin(angle) * 9.81 * axis
    return tuple(float(x) for x in g)


def _push(rng: np.random.Generator, regions: tuple[str, ...], speed: tuple[float, float],
          start: float, end: float, perpendicular_to_x: bool = False) -> Impulse:
    d = _unit(rng)
    if perpendicular_to_x:
        d[0] = 0.0
        d /= max(np.linalg.norm(d), 1e-12)
    v = d * rng.uniform(*speed)
    return Impulse(region=str(rng.choice(regions)), velocity=tuple(float(x) for x in v),
                   time=float(rng.uniform(start, end)))


def sample_conditions(category: str, rng: np.random.Generator, size: float, family: str,
                      interior_pins: float = 0.0) -> Conditions:
    """Gravity, ground, start state, pins, wind and pushes for one sequence.

    interior_pins: the share of pinned sheets held by a square patch round a point of their
    middle half rather than by an edge or corners (0 draws nothing for it, so a dataset made
    without it comes out as it did before the option existed)."""
    c = Conditions(gravity=_gravity(rng), friction=float(rng.uniform(0.3, 1.2)))
    if category == "soft":
        c.height = float(rng.uniform(0.0, 0.6) * size)
        if rng.random() < 0.5:
            v = _unit(rng, horizontal=True) * rng.uniform(0.2, 1.5)
            v[1] = rng.uniform(-1.0, 1.0)
            c.velocity = tuple(float(x) for x in v)
        if rng.random() < 0.4:
            c.spin = tuple(float(x) for x in _unit(rng) * rng.uniform(0.5, 4.0))
        if rng.random() < 0.3:
            c.impulses = [_push(rng, ("top", "left", "right", "front", "back"), (0.5, 2.5),
                                0.2, 1.5)]
    elif category == "cloth":
        c.height = float(rng.uniform(0.2, 1.0))
        if family == "flag":
            c.pins = ["x<0.02"] if rng.random() < 0.5 else ["x<0.02 & y>0.98",
                                                            "x<0.02 & y<0.02"]
        elif family == "disc":  # round: no corners to hold
            if rng.random() < 0.6:
                c.pins = [str(rng.choice(["x<0.03", "x>0.45 & x<0.55 & z>0.45 & z<0.55"]))]
        elif rng.random() < 0.6:
            if interior_pins > 0 and rng.random() < interior_pins:
                u, v = rng.uniform(0.25, 0.75, size=2)
                h = rng.uniform(0.03, 0.08)
                c.pins = [f"x>{u - h:.3f} & x<{u + h:.3f} & z>{v - h:.3f} & z<{v + h:.3f}"]
            else:
                c.pins = [str(rng.choice(["x<0.02 & z<0.02", "x<0.02", "z<0.02",
                                          "x<0.02 & z<0.02|x>0.98 & z<0.02"]))]
        c.ground = not c.pins or rng.random() < 0.5
        if rng.random() < 0.5 or family == "flag":
            w = _unit(rng, horizontal=True) * rng.uniform(1.0, 8.0)
            c.wind, c.gust = tuple(float(x) for x in w), float(rng.uniform(0.0, 0.5))
        if rng.random() < 0.2:
            c.impulses = [_push(rng, ("x>0.8", "z>0.8", "x<0.2 & z>0.8"), (0.5, 2.0), 0.1, 1.5)]
    else:  # beam: clamped at x = 0 by default
        c.ground = False
        c.height = float(rng.uniform(0.5, 1.0))
        if rng.random() < 0.6:
            c.impulses = [_push(rng, ("x>0.9", "x>0.6 & x<0.8"), (0.3, 3.0), 0.0, 1.0,
                                perpendicular_to_x=True)]
        if rng.random() < 0.2:
            w = _unit(rng, horizontal=True) * rng.uniform(2.0, 10.0)
            c.wind, c.gust = tuple(float(x) for x in w), float(rng.uniform(0.0, 0.5))
    return c


def sample_dof(category: str, rng: np.random.Generator, family: str) -> str:
    """Soft bodies: mostly trilinear cages, some quadratic, and full tetrahedra for
    star-shaped solids (richer local deformation)."""
    if category == "cloth":
        return "full"
    if category == "beam":
        return "quadratic"
    u = rng.random()
    if u < 0.12 and family in STAR_SHAPED:
        return "tet"
    return "quadratic" if u < 0.25 else "trilinear"
