"""What a simulation is asked to do: material, forces, pins and start state (metres, +Y up)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError

CATEGORIES = ("soft", "cloth", "beam")


@dataclass
class SimMaterial:
    """Elastic material of a flex. Units: Pa, kg/m^3, seconds, metres."""

    young: float = 3e4  # Young's modulus, Pa
    poisson: float = 0.35  # Poisson ratio, in [0, 0.5)
    density: float = 400.0  # kg/m^3 (cloth: mass = density * area * thickness)
    damping: float = 0.002  # Rayleigh stiffness-proportional damping, seconds
    thickness: float = 0.002  # metres; cloth sheets only

    def check(self) -> None:
        if not (self.young > 0 and 0 <= self.poisson < 0.5 and self.density > 0
                and self.damping >= 0 and self.thickness > 0):
            raise UsageError(f"material out of range: {self}; need young > 0, 0 <= poisson "
                             "< 0.5, density > 0, damping >= 0, thickness > 0")


# a sensible material for each category when the user gives none
PRESET_MATERIALS = {
    "soft": SimMaterial(young=3e4, poisson=0.4, density=300.0, damping=0.003),
    "cloth": SimMaterial(young=5e4, poisson=0.25, density=300.0, damping=0.001, thickness=0.002),
    "beam": SimMaterial(young=2e6, poisson=0.3, density=1000.0, damping=0.002),
}


@dataclass
class Impulse:
    """A sudden velocity change of the vertices in ``region`` at ``time`` (m/s, seconds)."""

    region: str
    velocity: tuple[float, float, float]
    time: float = 0.0


@dataclass
class Conditions:
    """Forces, constraints and the start state of a run; vectors in metres, +Y up."""

    gravity: tuple[float, float, float] = (0.0, -9.81, 0.0)  # m/s^2
    ground: bool = True  # a plane at y = 0
    friction: float = 0.8
    height: float = 0.0  # start height of the object's lowest point above the ground, m
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)  # initial linear velocity, m/s
    spin: tuple[float, float, float] = (0.0, 0.0, 0.0)  # initial angular velocity, rad/s
    wind: tuple[float, float, float] = (0.0, 0.0, 0.0)  # air velocity, m/s
    gust: float = 0.0  # relative gust amplitude of the wind, 0..1
    pins: list[str] = field(default_factory=list)  # region expressions or vertex index lists
    impulses: list[Impulse] = field(default_factory=list)


_CMP = re.compile(r"^\s*([xyz])\s*(<=|>=|<|>)\s*(-?[0-9.]+(?:e-?\d+)?)\s*$")


def _index_list(expr: str, n: int) -> np.ndarray | None:
    """'3,5,10-20' -> indices; None if the text is not an index list."""
    if not re.fullmatch(r"[\d\s,\-]+", expr):
        return None
    out: list[int] = []
    for tok in filter(None, (t.strip() for t in expr.split(","))):
        a, _, b = tok.partition("-")
        lo, hi = int(a), int(b or a)
        out.extend(range(lo, hi + 1))
    idx = np.asarray(out, np.int64)
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        raise UsageError(f"region '{expr}': vertex index outside 0..{n - 1}")
    return idx


def select_region(expr: str, vertices: np.ndarray) -> np.ndarray:
    """Vertices (N, 3) selected by ``expr``: a boolean mask (N,).

    ``expr`` is either vertex indices ("0,5,10-20") or comparisons of coordinates normalised to
    the bounding box, 0 at the min and 1 at the max of each axis, joined by ``&`` (and) and
    ``|`` (or): "y>0.9", "x<0.05 & y>0.5". Names "top", "bottom", "left", "right", "front",
    "back" mean the outer 10 % of an axis. An axis along which the mesh is flat (a plane,
    a single triangle) constrains nothing: a flat sheet is its own front and back.
    """
    named = {"top": "y>0.9", "bottom": "y<0.1", "left": "x<0.1", "right": "x>0.9",
             "back": "z<0.1", "front": "z>0.9"}
    text = named.get(expr.strip().lower(), expr)
    n = len(vertices)
    idx = _index_list(text, n)
    if idx is not None:
        mask = np.zeros(n, bool)
        mask[idx] = True
        return mask
    lo, extent = vertices.min(axis=0), np.ptp(vertices, axis=0)
    flat = extent <= 1e-9 * max(float(extent.max()), 1e-300)
    rel = (vertices - lo) / np.maximum(extent, 1e-12)
    result = np.zeros(n, bool)
    for alternative in text.split("|"):
        mask = np.ones(n, bool)
        for term in alternative.split("&"):
            m = _CMP.match(term)
            if not m:
                raise UsageError(f"region '{expr}': cannot read '{term.strip()}'; use e.g. "
                                 "'y>0.9', 'x<0.1 & z>0.5', 'top' or vertex indices '0,4,8-12'")
            axis, op, value = "xyz".index(m.group(1)), m.group(2), float(m.group(3))
            if flat[axis]:
                continue
            col = rel[:, axis]
            mask &= {"<": col < value, ">": col > value, "<=": col <= value,
                     ">=": col >= value}[op]
        result |= mask
    return result


def parse_vector(text: str, name: str) -> tuple[float, float, float]:
    """'X,Y,Z' -> a 3-tuple of floats (a clear error otherwise)."""
    try:
        vals = tuple(float(t) for t in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 3 or not all(np.isfinite(vals)):
        raise UsageError(f"{name} must be three numbers X,Y,Z, not {text!r}")
    return vals  # type: ignore[return-value]


def parse_impulse(text: str) -> Impulse:
    """'REGION:X,Y,Z[@T]' -> Impulse (velocity change in m/s at time T seconds)."""
    region, sep, rest = text.rpartition(":")
    if not sep or not region:
        raise UsageError(f"--push must look like REGION:X,Y,Z[@T] (e.g. 'top:0,0,2@0.5'), "
                         f"not {text!r}")
    vec, _, at = rest.partition("@")
    try:
        t = float(at) if at else 0.0
    except ValueError as e:
        raise UsageError(f"--push time must be seconds after '@', not {at!r}") from e
    return Impulse(region=region, velocity=parse_vector(vec, "--push"), time=t)
