"""What a simulation is asked to do: material, forces, pins and start state (metres, +Y up)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..limits import MAX_SECONDS, MAX_SPEED, MAX_VERTICES, require_material

if TYPE_CHECKING:  # the command line parses options with this module: numpy when it selects
    import numpy as np

CATEGORIES = ("soft", "cloth", "beam")


@dataclass
class SimMaterial:
    """Elastic material of a flex. Units: Pa, kg/m^3, seconds, metres."""

    young: float = 3e4  # Young's modulus, Pa
    poisson: float = 0.35  # Poisson ratio, in [0, 0.5)
    density: float = 400.0  # kg/m^3 (cloth: mass = density * area * thickness)
    damping: float = 0.002  # Rayleigh stiffness-proportional damping, seconds
    thickness: float = 0.002  # metres; cloth sheets only

    def require_physical(self) -> None:
        """Raise a UsageError naming the first number outside ``limits.MATERIAL``."""
        require_material(young=self.young, poisson=self.poisson, density=self.density,
                         damping=self.damping, thickness=self.thickness)


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

    def json(self) -> dict:
        """The conditions as ``--json`` reports carry them, the same in ``animate`` and
        ``simulate`` (the start height is the report's ``start_height_m``)."""
        vec = _floats
        return {"gravity": vec(self.gravity), "ground": bool(self.ground),
                "friction": float(self.friction), "pins": list(self.pins),
                "velocity": vec(self.velocity), "spin": vec(self.spin), "wind": vec(self.wind),
                "gust": float(self.gust),
                "pushes": [{"region": i.region, "velocity": vec(i.velocity),
                            "time": float(i.time)} for i in self.impulses]}


def _floats(v) -> list[float]:
    """A vector as JSON numbers (NumPy's float32 is not one)."""
    return [float(x) for x in v]


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CMP = re.compile(rf"^\s*([xyz])\s*(<=|>=|<|>)\s*({_NUMBER})\s*$")
_RANGE = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")
NAMED_REGIONS = {"top": "y>0.9", "bottom": "y<0.1", "left": "x<0.1", "right": "x>0.9",
                 "back": "z<0.1", "front": "z>0.9"}


def _index_ranges(expr: str, name: str) -> list[tuple[int, int]] | None:
    """'3,5,10-20' -> inclusive ranges [(3, 3), (5, 5), (10, 20)]; None if the text is not
    an index list. Nothing is expanded, so a huge range costs no memory."""
    if not re.fullmatch(r"[\d\s,\-]+", expr):
        return None
    ranges = []
    for tok in filter(None, (t.strip() for t in expr.split(","))):
        m = _RANGE.fullmatch(tok)
        if not m:
            raise UsageError(f"{name} '{expr}': cannot read '{tok}'; vertex indices are whole "
                             "numbers >= 0 and a range has both ends, e.g. '0,4,8-12'")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UsageError(f"{name} '{expr}': the range '{tok}' runs backwards; write {hi}-{lo}")
        if hi >= MAX_VERTICES:
            raise UsageError(f"{name} '{expr}': vertex index {hi} is beyond any mesh this tool "
                             f"reads (at most {MAX_VERTICES:,} vertices)")
        ranges.append((lo, hi))
    if not ranges:
        raise UsageError(f"{name} '{expr}': names no vertices; give indices such as '0,4,8-12'")
    return ranges


def _comparisons(expr: str, text: str, name: str) -> list[list[tuple[int, str, float]]]:
    """'x<0.1 & y>0.5 | top' -> alternatives (or) of terms (and): (axis, op, value)."""
    alternatives = []
    for alternative in text.split("|"):
        terms = []
        for term in alternative.split("&"):
            term = NAMED_REGIONS.get(term.strip().lower(), term)
            m = _CMP.match(term)
            if not m or not math.isfinite(float(m.group(3))):
                raise UsageError(f"{name} '{expr}': cannot read '{term.strip()}'; use e.g. "
                                 "'y>0.9', 'x<0.1 & z>0.5', 'top' or vertex indices '0,4,8-12'")
            terms.append(("xyz".index(m.group(1)), m.group(2), float(m.group(3))))
        alternatives.append(terms)
    return alternatives


def check_region(expr: str, name: str = "region") -> None:
    """Raise a UsageError naming ``name`` (the option) unless ``expr`` reads as a region;
    whether it selects any vertex is known only with the mesh (``select_region``)."""
    text = NAMED_REGIONS.get(expr.strip().lower(), expr)
    if _index_ranges(text, name) is None:
        _comparisons(expr, text, name)


def pinned_by(regions: list[str], vertices: np.ndarray) -> np.ndarray:
    """(N,) bool: the vertices any of the ``--pin`` regions holds; a region list that holds
    none of them, or all of them (nothing could move), is a UsageError."""
    import numpy as np

    held = np.zeros(len(vertices), bool)
    for region in regions:
        held |= select_region(region, vertices)
    if regions and not held.any():
        raise UsageError(f"«pin region» {' '.join(regions)} selects no vertex")
    check_not_all(held, regions)
    return held


def check_not_all(held: np.ndarray, regions: list[str]) -> None:
    """Pins that hold every vertex (or cage node) leave nothing to move: "bottom" of a
    sheet lying flat is all of it."""
    if len(held) and held.all():
        raise UsageError(f"«pin region» {' '.join(regions)} holds all of the object, so nothing "
                         "could move; pin a part of it (e.g. «pin region» 'x<0.05')")


def select_region(expr: str, vertices: np.ndarray) -> np.ndarray:
    """Vertices (N, 3) selected by ``expr``: a boolean mask (N,).

    ``expr`` is either vertex indices ("0,5,10-20") or comparisons of coordinates normalised to
    the bounding box, 0 at the min and 1 at the max of each axis, joined by ``&`` (and) and
    ``|`` (or): "y>0.9", "x<0.05 & y>0.5". Names "top", "bottom", "left", "right", "front",
    "back" mean the outer 10 % of an axis. An axis along which the mesh is flat (a plane,
    a single triangle) constrains nothing: a flat sheet is its own front and back.
    """
    import numpy as np

    text = NAMED_REGIONS.get(expr.strip().lower(), expr)
    n = len(vertices)
    ranges = _index_ranges(text, "region")
    if ranges is not None:
        if max(hi for _, hi in ranges) >= n:
            raise UsageError(f"region '{expr}': vertex index outside 0..{n - 1}")
        mask = np.zeros(n, bool)
        for lo, hi in ranges:
            mask[lo:hi + 1] = True
        return mask
    lo, extent = vertices.min(axis=0), np.ptp(vertices, axis=0)
    flat = extent <= 1e-9 * max(float(extent.max()), 1e-300)
    rel = (vertices - lo) / np.maximum(extent, 1e-12)
    result = np.zeros(n, bool)
    for terms in _comparisons(expr, text, "region"):
        mask = np.ones(n, bool)
        for axis, op, value in terms:
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
    if len(vals) != 3 or not all(math.isfinite(v) for v in vals):
        raise UsageError(f"{name} must be three numbers X,Y,Z, not {text!r}")
    if math.hypot(*vals) > MAX_SPEED:
        raise UsageError(f"{name} {text!r} is too large: its length may be at most "
                         f"{MAX_SPEED:g}")
    return vals  # type: ignore[return-value]


def parse_impulse(text: str) -> Impulse:
    """'REGION:X,Y,Z[@T]' -> Impulse (velocity change in m/s at time T seconds)."""
    region, sep, rest = text.rpartition(":")
    if not sep or not region:
        raise UsageError(f"«push» must look like REGION:X,Y,Z[@T] (e.g. 'top:0,0,2@0.5'), "
                         f"not {text!r}")
    vec, _, at = rest.partition("@")
    try:
        t = float(at) if at else 0.0
    except ValueError:
        t = math.nan
    if not 0.0 <= t <= MAX_SECONDS:
        raise UsageError(f"«push» time must be seconds from 0 to {MAX_SECONDS:g} after '@', "
                         f"not {at!r}")
    check_region(region, "«push»")
    return Impulse(region=region, velocity=parse_vector(vec, "«push»"), time=t)
