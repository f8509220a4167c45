"""Presets: what happens to an object in a run, one row a preset, shared by ``neurok animate``
and ``neurok simulate`` (``--preset``), and the user's explicit settings on top of one.

A preset's row gives the start height (a fraction of the object's size), the pinned regions,
the kicks, the wind and whether there is a ground; where a preset does something else to one
category (``sway`` clamps a beam by one end and hangs a cloth by one edge), a row of the same
name says so with ``only``. A beam's row (``along``) is written for a beam lying along x and
is turned onto the object's longest side: a standing pole is clamped at its foot, a rod along
z at its -z end. ``preset_conditions`` looks the row up and lays the user's settings over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError
from .conditions import Conditions, Impulse

DEFAULT_BEAM_PIN = "x<0.02"  # a beam's clamp when no pin is given: the -x end of one along x
KICK = 1.5  # m/s: a preset's kick of an object 1 m or larger; sqrt(size / 1 m) of it below
CLOTH_EDGE = "x<0.02"  # where a cloth hangs from in sway and flutter: its -x edge


@dataclass(frozen=True)
class Kick:
    """A preset's push: the vertices of ``region`` (conditions.select_region) set moving
    along ``direction`` (a unit vector, +Y up) at ``time`` seconds, as fast as ``kick_speed``
    says for the object's size."""

    region: str
    direction: tuple[float, float, float]
    time: float = 0.0  # seconds


@dataclass(frozen=True)
class Preset:
    """One row of the table: what a preset does to an object (metres, seconds, +Y up)."""

    name: str
    says: str  # what happens, in one line
    only: tuple[str, ...] = ()  # the categories this row is for; (): every other one
    height: float = 0.0  # start height of the lowest point over the ground, fraction of the size
    pins: tuple[str, ...] = ()  # held regions (conditions.select_region)
    kicks: tuple[Kick, ...] = ()
    ground: bool = True  # a plane at y = 0
    wind: tuple[float, float, float] = (0.0, 0.0, 0.0)  # air velocity, m/s
    gust: float = 0.0  # relative gust amplitude of the wind, 0..1
    joints: bool = False  # articulated objects' only: their joints thrown (rig/animate.py)
    along: bool = False  # regions and kicks given for a beam along x, turned onto its length

    def conditions(self, size: float, extent=None) -> Conditions:
        """The row as a run's conditions for an object ``size`` metres across, its bounding
        box ``extent`` (3,) along x, y, z (an ``along`` row is turned onto the longest; None:
        as written). The rest are ``Conditions``' defaults: gravity, friction, no start
        velocity or spin."""
        speed = kick_speed(size)
        axis = long_axis(extent) if self.along else 0
        kicks = [Impulse(_turned_region(k.region, axis),
                         tuple(d * speed for d in _turned_direction(k.direction, axis)), k.time)
                 for k in self.kicks]
        return Conditions(ground=self.ground, wind=self.wind, gust=self.gust,
                          pins=[_turned_region(r, axis) for r in self.pins], impulses=kicks)


# One row a preset, in the order --preset lists them; a row with ``only`` comes before the
# row of the same name for every other category.
TABLE = (
    Preset("drop", "starts half its size up and falls onto the ground", height=0.5),
    Preset("wobble", "a sideways kick at the top", kicks=(Kick("top", (1.0, 0.0, 0.0)),)),
    Preset("poke", "a kick into the front at 0.3 s",
           kicks=(Kick("front", (0.0, 0.0, -1.0), 0.3),)),
    # a beam along x; along y (standing) it is clamped at its foot and kicked along +x
    Preset("sway", "clamped at one end (a standing one at its foot), tip kicked", only=("beam",),
           height=0.5, pins=("x<0.05",), kicks=(Kick("x>0.9", (0.0, 0.0, 1.0)),),
           ground=False, along=True),
    # hung by its -x edge, no ground: a cloth let go level swings down and sways, damped by
    # the air ("bottom" would hold all of a sheet lying flat: nothing would move)
    Preset("sway", "hung by its -x edge, let go level", only=("cloth",), height=0.5,
           pins=(CLOTH_EDGE,), ground=False),
    Preset("sway", "pinned at the bottom, kicked sideways at the top", pins=("bottom",),
           kicks=(Kick("top", (1.0, 0.0, 0.0)),)),
    # a gusty wind blowing from the held edge across the sheet, as on a flagpole (along the
    # held edge, +z, it met a hanging sheet edge-on: a flat sheet bent 0.019 rad where the
    # engine's bent 0.041; across it, 0.035 against 0.034)
    Preset("flutter", "hung by its -x edge in a gusty 4 m/s wind, no ground", height=0.5,
           pins=(CLOTH_EDGE,), ground=False, wind=(4.0, 0.0, 0.0), gust=0.5),
    Preset("free", "nothing but gravity and the options given"),
    Preset("open", "an articulated object's joints thrown open", joints=True),
    Preset("close", "an articulated object's joints thrown shut", joints=True),
    Preset("swing", "an articulated object's joints thrown part way, to swing back",
           joints=True),
)
PRESETS = tuple(dict.fromkeys(row.name for row in TABLE))
JOINT_PRESETS = tuple(row.name for row in TABLE if row.joints)  # articulated objects' only
DEFAULT_PRESET = {"soft": "drop", "cloth": "flutter", "beam": "sway"}  # by category


@dataclass
class Overrides:
    """What the user set explicitly; None = the preset decides."""

    gravity: tuple[float, float, float] | None = None
    ground: bool | None = None
    friction: float | None = None
    pins: list[str] | None = None
    velocity: tuple[float, float, float] | None = None
    spin: tuple[float, float, float] | None = None
    wind: tuple[float, float, float] | None = None
    gust: float | None = None
    pushes: list[Impulse] = field(default_factory=list)
    drop: float | None = None  # start height over the ground, fraction of the size


# where the x, y and z of a row written along x go for an object longest along x, y or z: a
# cyclic turn for y (the row's -x end becomes the foot, its sideways +z kick +x), x and z
# swapped for z
_TURNS = ("xyz", "yzx", "zyx")


def long_axis(extent) -> int:
    """The axis (0, 1, 2) along which a bounding box's ``extent`` (3,) is longest (the first
    of equals); x where it is not given. (Plain Python: the command line reads this module
    for its help, before any numerical library.)"""
    if extent is None:
        return 0
    e = [float(x) for x in extent]
    return e.index(max(e))


def beam_clamp(extent=None) -> str:
    """A beam's clamp when no pin is given: the low end of its longest side (the foot of a
    standing one)."""
    return _turned_region(DEFAULT_BEAM_PIN, long_axis(extent))


def _turned_region(region: str, axis: int) -> str:
    return region.translate(str.maketrans("xyz", _TURNS[axis]))


def _turned_direction(direction: tuple[float, float, float], axis: int
                      ) -> tuple[float, float, float]:
    out = [0.0, 0.0, 0.0]
    for value, name in zip(direction, _TURNS[axis]):
        out["xyz".index(name)] = value
    return tuple(out)


def kick_speed(size: float) -> float:
    """A preset's kick, m/s, of an object ``size`` metres across: brisk, gentler for small
    objects."""
    return KICK * min(size, 1.0) ** 0.5


def check_preset(name: str) -> None:
    """A UsageError listing the presets unless ``name`` is one."""
    if name not in PRESETS:
        raise UsageError(f"unknown «preset» {name!r}; choose one of {', '.join(PRESETS)}")


def preset_row(name: str, category: str) -> Preset:
    """The row of preset ``name`` for ``category`` (soft, cloth, beam)."""
    check_preset(name)
    rows = [row for row in TABLE if row.name == name]
    return next((r for r in rows if category in r.only), None) or next(
        r for r in rows if not r.only)


def preset_conditions(preset: str, category: str, size: float, o: Overrides, extent=None
                      ) -> tuple[Conditions, float]:
    """Conditions and start height (fraction of the size) of a preset for an object of
    ``category`` ``size`` metres across (its bounding box ``extent`` (3,): a beam's row is
    turned onto its longest side), then the user's explicit settings on top."""
    row = preset_row(preset, category)
    c = row.conditions(size, extent)
    for name in ("gravity", "ground", "friction", "velocity", "spin", "wind", "gust"):
        value = getattr(o, name)
        if value is not None:
            setattr(c, name, value)
    if o.pins is not None:
        c.pins = list(o.pins)
    c.impulses = c.impulses + list(o.pushes)
    return c, row.height if o.drop is None else o.drop

