"""Limits that keep a run's work bounded, and the checks of the numbers a user gives.

Each limit is stated here once: the options' help texts and the errors quote it. A number
outside its range is a ``UsageError`` naming the option, so it fails in one line before any
model is loaded or any file is written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import UsageError

MAX_SECONDS = 3600.0  # s: the longest motion
MAX_FPS = 1000.0  # frames per second
MAX_FRAMES = 20_000  # frames of one motion (seconds x fps + 1)
MIN_SIZE_M, MAX_SIZE_M = 1e-3, 1e4  # largest extent of a simulated object, metres
MAX_SEED = 2**32 - 1  # seeds feed numpy and torch generators
MAX_VERTICES = 5_000_000  # vertices of an input mesh (a vertex index beyond is no index)
MAX_FACES = 1_500_000  # triangles to simulate: 1M took 39 s and 1.7 GB in animate (one thread)
MAX_SPEED = 1e4  # m/s (or rad/s, m/s^2): the largest vector option's length
MAX_BONES = 256  # joints of a skin: their indices are written as unsigned bytes
HANDLES = (4, 256)  # --handles: the fewest and most affine handles of an object's own space
MAX_TARGETS = 1000  # morph targets of the compact encoding
TARGETS = 200  # ... by default (--max-targets)
COMPILED_FROM = 2_000_000  # vertex-frames from which a clip's per-vertex passes are compiled:
# below, NumPy is done before numba has started (its import and cache load, 0.45 s)
INTEGRATORS = ("rk4", "dopri5")  # the learned space's ODE integrators (--method)
DEVICES = ("auto", "cpu", "cuda")  # (and cuda:N)
GLTF_ENCODINGS = ("compact", "exact", "bones")  # how a motion goes into glTF (io/gltf/write.py)


def _fmt(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


@dataclass(frozen=True)
class Range:
    """The values an option may take: [lo, hi] (open at a side where asked), finite unless
    ``inf_ok`` (+inf, meaning "none"), whole numbers where ``whole``."""

    lo: float
    hi: float
    lo_open: bool = False
    hi_open: bool = False
    whole: bool = False
    inf_ok: bool = False

    def text(self) -> str:
        """The range in words, e.g. 'a whole number from 0 to 4,294,967,295'."""
        kind = "a whole number" if self.whole else "a number"
        if not (self.lo_open or self.hi_open):
            words = f"{kind} from {_fmt(self.lo)} to {_fmt(self.hi)}"
        else:
            lo = f"{'>' if self.lo_open else '>='} {_fmt(self.lo)}"
            hi = f"{'<' if self.hi_open else '<='} {_fmt(self.hi)}"
            words = f"{kind} {lo} and {hi}"
        return words + (" (or inf for none)" if self.inf_ok else "")

    def require(self, quantity: str, value: float | int) -> None:
        """Raise a UsageError naming ``quantity`` unless ``value`` is in the range."""
        if self.inf_ok and value == math.inf:
            return
        bad = (not math.isfinite(value) or value < self.lo or value > self.hi
               or (self.lo_open and value == self.lo) or (self.hi_open and value == self.hi)
               or (self.whole and value != int(value)))
        if bad:
            raise UsageError(f"{quantity} must be {self.text()}, not {value:g}"
                             if isinstance(value, float) else
                             f"{quantity} must be {self.text()}, not {value}")


# the material numbers a run may be given, by parameter name (cli/_checks.py checks the
# options against the same table, before any work)
MATERIAL: dict[str, Range] = {
    "stiffness": Range(0.0, 1e3, lo_open=True),  # a scale on the material's own stiffness
    "young": Range(0.0, 1e12, lo_open=True),  # Pa
    "density": Range(0.0, 1e5, lo_open=True),  # kg/m^3
    "damping": Range(0.0, 10.0),  # s (stiffness-proportional)
    "poisson": Range(0.0, 0.5, hi_open=True),
    "thickness": Range(0.0, 1.0, lo_open=True),  # m (sheets)
}
_WORDS = {"young": "young modulus"}  # a quantity's name where its parameter's is short


def require_material(**values: float | None) -> None:
    """Check the material numbers given (None: not given) against ``MATERIAL``."""
    for name, value in values.items():
        if value is not None:
            MATERIAL[name].require(f"«{_WORDS.get(name, name)}»", value)


def check_frames(seconds: float, fps: float, *, what: str = "«seconds» x «fps»") -> int:
    """The frame count of ``seconds`` at ``fps`` (both checked), at most MAX_FRAMES."""
    Range(0.0, MAX_SECONDS, lo_open=True).require("«seconds»", seconds)
    Range(0.0, MAX_FPS, lo_open=True).require("«fps»", fps)
    frames = math.floor(seconds * fps + 1e-9) + 1
    if frames > MAX_FRAMES:
        raise UsageError(f"{what} asks for {frames:,} frames; at most {MAX_FRAMES:,} are made "
                         "in one run: shorten it or lower the frame rate")
    return frames


def check_size(size_m: float, given: bool) -> None:
    """Refuse an object whose largest extent (metres) no simulation can follow; ``given``:
    the size came from --size (else from the file's own units)."""
    if MIN_SIZE_M <= size_m <= MAX_SIZE_M:
        return
    span = f"the {MIN_SIZE_M:g} m to {MAX_SIZE_M:g} m that can be simulated"
    if given:
        raise UsageError(f"«size» {size_m:g} m is outside {span}")
    raise UsageError(f"the object's largest extent, read as {size_m:.4g} m, is outside {span}; "
                     "pass «size» with its size in metres")


def check_faces(faces: int, what: str) -> None:
    """Refuse a mesh with more than MAX_FACES triangles (``what``: the file, for the
    message)."""
    if faces > MAX_FACES:
        raise UsageError(f"{what}: {faces:,} triangles is more than the {MAX_FACES:,} that "
                         "can be simulated; decimate the mesh first (e.g. in Blender)")
