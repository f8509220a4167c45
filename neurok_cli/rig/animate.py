"""``neurok animate`` of an articulated object: rigid parts turning and sliding on joints.

loaded asset -> pieces (nodes, OBJ groups or closed pieces), each welded on its own ->
physical frame (metres, +Y up, ground at y = 0) -> rig (rig/articulation.py: parts and joints,
inferred or given) -> the preset's joint speeds -> Lagrangian motion in the joint
coordinates (rig/linkage.py) -> back to the file's frame -> export.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import UsageError
from ..io.asset import Asset, weld
from ..io.mesh import CanonicalFrame
from ..scenario.placement import Ground
from .articulation import JointSpec, Rig, connected_pieces, infer_rig, merged
from .linkage import DENSITY, Linkage, Run, integrate

PRESETS = ("open", "close", "swing", "drop", "free")
THROW_TIME = 1.0  # s: a thrown joint covers its way in about this, damping and all
THROW_MARGIN = 1.15  # more speed than gravity alone asks, for what damping takes
SWING = 0.6  # of the opening throw's speed: up part way, and back


@dataclass
class Pieces:
    """An asset's surface as rigid pieces, each welded on its own (a hinge's shared edge
    would otherwise join a lid to its box)."""

    vertices: np.ndarray  # (M, 3) file units
    faces: np.ndarray  # (F, 3)
    index: np.ndarray  # (N,) the welded vertex of each file vertex
    piece: np.ndarray  # (M,) each welded vertex's piece
    names: list[str]


def asset_pieces(asset: Asset) -> Pieces:
    """The pieces of an asset: its glTF nodes or OBJ groups; in a file of one part, its
    closed pieces (a box's walls, its lid), the open ones joined to what they share a
    position with (a surface cut along its texture seams is one piece)."""
    keys = [(p.node if p.node is not None else i) for i, p in enumerate(asset.parts)]
    groups = list(dict.fromkeys(keys))
    if len(groups) > 1:
        group = np.concatenate([np.full(len(p.vertices), groups.index(k))
                                for p, k in zip(asset.parts, keys)])
        names = [asset.parts[keys.index(k)].name or f"part{g + 1}"
                 for g, k in enumerate(groups)]
    else:
        group = _closed_pieces(asset)
        names = [f"piece{k + 1}" for k in range(int(group.max()) + 1)]
    verts, faces, piece, m = [], [], [], 0
    index = np.empty(int(asset.offsets[-1]), np.int64)
    all_faces = asset.faces
    for g in range(int(group.max()) + 1):
        members = np.flatnonzero(group == g)
        local = np.full(len(group), -1)
        local[members] = np.arange(len(members))
        w = weld(asset.vertices[members], local[all_faces[group[all_faces[:, 0]] == g]])
        index[members] = w.index + m
        verts.append(w.vertices)
        faces.append(w.faces + m)
        piece.append(np.full(len(w.vertices), g))
        m += len(w.vertices)
    return Pieces(np.concatenate(verts), np.concatenate(faces), index,
                  np.concatenate(piece), _unique(names))


def _closed_pieces(asset: Asset) -> np.ndarray:
    """Each file vertex's piece: the file's connected pieces, those without a boundary kept
    apart, the others joined to every piece they share a position with."""
    from ..scenario.joints import closed_surface

    faces = asset.faces
    comp = connected_pieces(asset.vertices, faces)
    n = int(comp.max()) + 1
    face_comp = comp[faces[:, 0]]
    closed = [closed_surface(faces[face_comp == c]) for c in range(n)]
    welded = asset.welded().index
    pairs = np.unique(np.stack([welded, comp], axis=1), axis=0)  # (position, piece)
    joins = []
    for w in np.flatnonzero(np.bincount(pairs[:, 0]) > 1):
        shared = pairs[pairs[:, 0] == w, 1]
        joins += [(shared[0], c) for c in shared[1:] if not (closed[shared[0]] and closed[c])]
    return merged(n, joins)[comp]


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}.{seen[name]}")
    return out


@dataclass
class Placed:
    """An articulated asset in the physical frame: its pieces standing on y = 0, how high
    the preset starts it, and how to get its frames back to the file."""

    pieces: Pieces
    start: np.ndarray  # (M, 3) metres, +Y up, lowest point on y = 0
    drop_m: float
    lift: float  # file's canonical metres + lift = physics (before the drop)
    back: float  # physics - back = the file's canonical metres
    ground: Ground


def place(asset: Asset, frame: CanonicalFrame, *, preset: str, drop: float | None,
          ground_at: float | None) -> Placed:
    """The pieces of ``asset`` on the ground (scenario/placement.py), ``drop`` sizes above it
    (default: half a size for the drop preset, else none)."""
    from ..scenario.placement import physics_offsets, place_ground

    pieces = asset_pieces(asset)
    surface = frame.to_canonical(pieces.vertices) * frame.size_m
    height = drop if drop is not None else (0.5 if preset == "drop" else 0.0)
    drop_m = height * frame.size_m
    ground = place_ground(frame, surface, ground_at)
    lift, back = physics_offsets(surface, ground, drop_m, True)
    return Placed(pieces, surface + np.array([0.0, lift - drop_m, 0.0]), drop_m,
                  lift - drop_m, back, ground)


MAX_LISTED = 64  # pieces: an asset of more is not looked at for joints by neurok info


def found_rig(at: Placed) -> Rig | None:
    """The rig of an asset that looks articulated with no one saying so: 2 to MAX_LISTED
    pieces, every one a closed solid (a rigid part; a flag on its pole is a cloth), and a
    joint found between them; None otherwise."""
    from ..scenario.joints import closed_surface

    p = at.pieces
    n = int(p.piece.max()) + 1
    if not 2 <= n <= MAX_LISTED:
        return None
    face_piece = p.piece[p.faces[:, 0]]
    if not all(closed_surface(p.faces[face_piece == k]) for k in range(n)):
        return None
    rig = infer_rig(at.start, p.faces, p.piece, p.names)
    return rig if rig.jointed else None


def file_rig(asset: Asset) -> list[dict] | None:
    """The parts and inferred joints of an asset of 2 to MAX_LISTED pieces, axes and
    anchors in the file's frame and units (as ``--joint`` takes them); None otherwise."""
    from ..io.mesh import canonical_frame

    pieces = asset_pieces(asset)
    if not 2 <= int(pieces.piece.max()) + 1 <= MAX_LISTED:
        return None
    frame = canonical_frame(asset, size=1.0)
    pts = frame.to_canonical(pieces.vertices)
    floor = float(pts[:, 1].min())
    rig = infer_rig(pts - np.array([0.0, floor, 0.0]), pieces.faces, pieces.piece,
                    pieces.names)
    rows = rig.rows()
    for row in rows:
        j = row.get("joint")
        if j is None:
            continue
        anchor = frame.from_canonical(np.array([j["anchor"]]) + np.array([0.0, floor, 0.0]))[0]
        axis = frame.from_canonical(np.array([j["axis"], [0.0, 0.0, 0.0]]))
        axis = (axis[0] - axis[1]) / np.linalg.norm(axis[0] - axis[1])
        j["anchor"] = [round(float(x), 6) for x in anchor]
        j["axis"] = [round(float(x), 4) for x in axis]
        if j["kind"] == "slide":  # a slider's run in the file's units, as its anchor
            j["limits"] = [round(float(x) * frame.extent, 6) for x in j["limits"]]
    return rows


def to_physical(spec: JointSpec, frame: CanonicalFrame, lift: float) -> JointSpec:
    """A joint given in the file's frame -> the physical one (metres, +Y up, lifted)."""
    axis = frame.vector_to_canonical(np.asarray(spec.axis, float))
    axis = axis / np.linalg.norm(axis)
    point = None
    if spec.point is not None:
        point = frame.to_canonical(np.asarray(spec.point, float)[None])[0] * frame.size_m
        point = tuple(float(x) for x in point + np.array([0.0, lift, 0.0]))
    return replace(spec, axis=tuple(float(x) for x in axis), point=point)


def throw_speeds(link: Linkage, preset: str) -> np.ndarray:
    """Each joint's start speed for a preset: ``open`` throws it towards its upper limit,
    ``close`` towards its lower one, fast enough to climb what gravity puts in the way and
    to get there in about THROW_TIME against its damping; ``swing`` throws it open to rise
    part way and swing back: at SWING of the speed that climbs or, where gravity does not
    hold it back (a door), at the speed its damping stops SWING of the way open."""
    C = len(link.coords)
    qd = np.zeros(C)
    if preset not in ("open", "close", "swing"):
        return qd
    M = link.mass_matrix(np.zeros(C))
    _, v0 = link.energy(np.zeros(C), np.zeros(C))
    for c, co in enumerate(link.coords):
        if co.parent < 0:
            continue
        target = co.limits[0] if preset == "close" else co.limits[1]
        if abs(target) < 1e-9:
            continue
        path = np.zeros((24, C))
        path[:, c] = np.linspace(0.0, target, 24)
        climb = max(max(link.energy(q, np.zeros(C))[1] for q in path) - v0, 0.0)
        m = float(M[c, c])
        lifts = THROW_MARGIN * np.sqrt(2 * climb / m)
        pushes = abs(target) * (1 / THROW_TIME + co.damping / m)
        if preset != "swing":
            speed = max(lifts, pushes)
        elif lifts > pushes:  # gravity brings it back
            speed = SWING * lifts
        else:  # its damping stops it, SWING of the way open
            speed = SWING * abs(target) * co.damping / m
        qd[c] = np.sign(target) * speed
    return qd


@dataclass
class RigMotion:
    rig: Rig
    link: Linkage
    run: Run
    frames: np.ndarray  # (T, M, 3) metres
    speeds: np.ndarray  # (C,) the start's joint speeds
    seconds: dict


@dataclass
class RigStart:
    rig: Rig
    link: Linkage
    q0: np.ndarray  # (C,) the base's height when dropped, the joints at 0
    speeds: np.ndarray  # (C,) the preset's joint speeds
    seconds: float  # taken to find the rig
    kicks: list = field(default_factory=list)  # (time, vertex indices, velocity change)


def rig_start(vertices: np.ndarray, faces: np.ndarray, piece: np.ndarray, names: list[str],
              *, joints: list[JointSpec], preset: str, density: float | None, gravity,
              drop_m: float, rig: Rig | None = None, pushes=(), base: str = "free"
              ) -> RigStart:
    """The rig of an object standing on y = 0 (metres, +Y up) (``rig``, where it was found
    already) and the start of a preset, ``drop_m`` above the ground, with ``pushes``
    (sim.conditions.Impulse: a push on a region). The base is free on the ground
    (rig/linkage.py), or ``base="held"`` where it stands; dropped, it falls straight down."""
    from ..scenario.conditions import select_region

    if preset not in PRESETS:
        raise UsageError(f"«preset» {preset} is not for an articulated object; choose one "
                         f"of {', '.join(PRESETS)}")
    t0 = time.perf_counter()
    rig = rig or infer_rig(vertices, faces, piece, names, joints)
    if not rig.jointed:
        raise UsageError("found no joints: the parts touch over patches, or there is one "
                         "part (neurok info lists them); give one with «joint» "
                         "PART:hinge:AXIS@POINT or PART:slide:AXIS")
    link = Linkage(rig, vertices, faces, density=density or DENSITY, gravity=gravity,
                   base="drop" if drop_m > 0 else base)
    q0 = np.zeros(len(link.coords))
    if drop_m > 0:
        q0[0] = drop_m  # the base's height
    kicks = [(p.time, np.flatnonzero(select_region(p.region, vertices)), p.velocity)
             for p in pushes]
    return RigStart(rig, link, q0, throw_speeds(link, preset), time.perf_counter() - t0,
                    kicks)


def engine_bodies(start: RigStart, vertices: np.ndarray, faces: np.ndarray) -> list:
    """The rig as the engine takes it (sim.articulated.RigBody): each part's surface, its
    parent and its joint with the damping the linkage gave it."""
    from ..scenario.joints import RigBody

    rig, joints = start.rig, iter(start.link.joints())
    bodies = []
    for p, name in enumerate(rig.names):
        sel = np.flatnonzero(rig.owner == p)
        remap = np.full(len(vertices), -1)
        remap[sel] = np.arange(len(sel))
        bodies.append(RigBody(name, vertices[sel],
                              remap[faces[(rig.owner[faces] == p).all(axis=1)]],
                              rig.parent[p], next(joints) if rig.joints[p] else None))
    return bodies


def rig_motion(start: RigStart, *, seconds: float, fps: float, on_frame=None) -> RigMotion:
    """Integrate a rig's start (rig/linkage.py) and pose its vertices in every frame."""
    t1 = time.perf_counter()
    run = integrate(start.link, start.q0, start.speeds, seconds=seconds, fps=fps,
                    kicks=start.kicks, on_frame=on_frame)
    t2 = time.perf_counter()
    return RigMotion(start.rig, start.link, run, start.link.frames(run), start.speeds,
                     {"rig": start.seconds, "integrate": t2 - t1,
                      "frames": time.perf_counter() - t2})


def joint_rows(link: Linkage, q: np.ndarray, speeds: np.ndarray) -> list[dict]:
    """The rig's parts with their joints, each joint's damping, start speed and the range
    it went; ``q`` (T, J) and ``speeds`` (J,) the joints' own, in the rig's part order
    (linkage's or the engine's)."""
    rows = link.rig.rows()
    joints = [co for co in link.coords if co.parent >= 0]
    for k, co in enumerate(joints):
        rows[co.part]["joint"].update(
            damping=round(co.damping, 6), start_speed=float(speeds[k]),
            moved=[float(q[:, k].min()), float(q[:, k].max())], end=float(q[-1, k]))
    return rows


def part_rows(rig: list[dict]) -> list[tuple[str, str]]:
    """A summary's rows of an articulated object (joint_rows, or the engine's likewise): each
    part, its joint, its range and the range it went; the pieces one with another part."""
    rows = []
    for part in rig:
        j = part.get("joint")
        if j is None:
            rows.append((f"part '{part['part']}'", "the base" if part["parent"] is None else
                         f"rides on '{part['parent']}' ({part['found']})"))
            continue
        unit, scale = ("°", 180 / np.pi) if j["kind"] == "hinge" else (" m", 1.0)
        lo, hi = (x * scale for x in j["limits"])
        a, b = (x * scale for x in j["moved"])
        rows.append((f"part '{part['part']}'",
                     f"{j['kind']} on '{part['parent']}' ({part['found']}), "
                     f"{lo:.3g}..{hi:.3g}{unit}; went {a:.3g}..{b:.3g}{unit}"))
    return rows


def part_count(rig: list[dict]) -> int:
    """The rigid parts of a rig's rows (the base and the jointed ones)."""
    return sum(1 for part in rig if part["parent"] is None or part.get("joint"))
