"""Articulated objects for the data engine: rigid parts joined by hinges and sliders.

A chest whose lid swings shut, a cabinet's door, drawers that slide, a laptop's screen, a
desk lamp's two arms. Each object is designed closed, of axis-aligned boxes (metres, +Y
up, standing on y = 0), part by part; every part but the base hangs from its parent by one
joint with limits and damping, whose position is 0 in the design pose. A sequence starts
from a drawn opening (``q0``: a lid at 20-110 degrees, a drawer part way out; gravity alone
shuts a lid or a laptop's screen and lowers a lamp), lifted so that no part starts in the
ground, and its first frame is the dataset's rest shape.

The engine moves the parts as rigid bodies (MuJoCo hinge and slide joints; the base free,
on the ground), and a frame's vertices are each part's design vertices moved by its body's
pose. Families: ``chest``, ``cabinet`` and ``drawers`` for training; ``laptop`` (a hinge at
a slab's edge) and ``lamp`` (a chain of two hinges) are kept for the test split.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import UsageError
from ..extras import require
from ..scenario.joints import SHEET, Joint, RigBody, closed_surface
from .scene import from_mj, to_mj

FAMILIES = ("chest", "cabinet", "drawers", "laptop", "lamp")
TEST_FAMILIES = ("laptop", "lamp")
TIMESTEP = 1 / 600  # s: rigid parts need no finer step; 20 steps to a 30 fps frame
SUBDIVIDE = 2  # each box's 12 triangles split in four this many times (98 vertices a box)
PUSH_TIME = 0.02  # s a push's force acts over
FRICTION = 0.8
LIMIT_STIFFNESS = 2 * TIMESTEP  # s: a limit's time constant, the stiffest the step allows (a
# lid slammed shut went 3-4 degrees past it at MuJoCo's default 0.02 s)


@dataclass
class Part:
    name: str
    boxes: list[tuple[tuple[float, float, float], tuple[float, float, float]]]  # lo, hi
    parent: int = -1  # index of the parent part; -1 for the base
    joint: Joint | None = None


@dataclass
class Articulated:
    family: str
    parts: list[Part]
    density: float  # kg/m^3
    q0: list[float]  # the start's joint positions, one per jointed part, in part order
    params: dict = field(default_factory=dict)

    def mesh(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The design surface: vertices (N, 3), faces (F, 3) and each vertex's part (N,)."""
        import trimesh

        verts, faces, owner, n = [], [], [], 0
        for p, part in enumerate(self.parts):
            for lo, hi in part.boxes:
                lo, hi = np.asarray(lo), np.asarray(hi)
                box = trimesh.creation.box(extents=hi - lo)
                v, f = np.asarray(box.vertices), np.asarray(box.faces)
                for _ in range(SUBDIVIDE):
                    v, f = trimesh.remesh.subdivide(v, f)
                verts.append(v + (lo + hi) / 2)
                faces.append(f + n)
                owner.append(np.full(len(v), p))
                n += len(v)
        return np.concatenate(verts), np.concatenate(faces), np.concatenate(owner)

    def layout(self) -> list[dict]:
        """The joints as a sequence's meta records them: one per jointed part, with the
        start's position ``q0``."""
        jointed = [part for part in self.parts if part.joint is not None]
        return [{"part": part.name, "parent": self.parts[part.parent].name,
                 **asdict(part.joint), "q0": q}
                for part, q in zip(jointed, self.q0, strict=True)]


def _box(lo, hi) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return tuple(float(x) for x in lo), tuple(float(x) for x in hi)


def _open_box(w: float, h: float, d: float, t: float, open_face: str = "top") -> list:
    """A box of outer size w x h x d (x across, y up, z to the front) standing on y = 0,
    with walls t thick and one face (top or front) left open."""
    boxes = [_box((-w / 2, 0, -d / 2), (w / 2, t, d / 2)),  # floor
             _box((-w / 2, t, -d / 2), (-w / 2 + t, h, d / 2)),  # left
             _box((w / 2 - t, t, -d / 2), (w / 2, h, d / 2)),  # right
             _box((-w / 2 + t, t, -d / 2), (w / 2 - t, h, -d / 2 + t))]  # back
    if open_face == "top":
        boxes.append(_box((-w / 2 + t, t, d / 2 - t), (w / 2 - t, h, d / 2)))  # front
    else:
        boxes.append(_box((-w / 2 + t, h - t, -d / 2 + t), (w / 2 - t, h, d / 2)))  # top
    return boxes


def _damping(rng: np.random.Generator, mass_scale: float) -> float:
    return float(rng.uniform(0.002, 0.05) * mass_scale)


def chest(rng: np.random.Generator) -> Articulated:
    """A box with a lid hinged where its back edge meets the back wall's top; the lid opens
    up to 120 degrees."""
    w, h, d = rng.uniform(0.3, 0.8), rng.uniform(0.2, 0.5), rng.uniform(0.25, 0.6)
    t = float(rng.uniform(0.015, 0.04))
    rho = float(rng.uniform(300, 900))
    lid = Part("lid", [_box((-w / 2, h, -d / 2), (w / 2, h + t, d / 2))], 0,
               Joint("hinge", (-1.0, 0.0, 0.0), (0.0, h, -d / 2),
                     (0.0, float(np.radians(120))), _damping(rng, rho * w * d * t * d)))
    q0 = [float(rng.uniform(np.radians(20), np.radians(110)))]
    return Articulated("chest", [Part("box", _open_box(w, h, d, t)), lid], rho, q0,
                       {"width": w, "height": h, "depth": d, "wall": t})


def cabinet(rng: np.random.Generator) -> Articulated:
    """A tall carcass open at the front with a door hinged on its left or right edge."""
    w, h, d = rng.uniform(0.3, 0.7), rng.uniform(0.5, 1.2), rng.uniform(0.25, 0.5)
    t = float(rng.uniform(0.015, 0.03))
    rho = float(rng.uniform(300, 900))
    side = float(rng.choice([-1.0, 1.0]))  # the hinge on the left (-1) or right edge
    # the door clears the floor by 1 cm: one that scraped it stopped dead when thrown
    door = Part("door", [_box((-w / 2, 0.01, d / 2), (w / 2, h, d / 2 + t))], 0,
                Joint("hinge", (0.0, side, 0.0), (side * w / 2, 0.0, d / 2),
                      (0.0, float(np.radians(110))), _damping(rng, rho * w * h * t * w)))
    q0 = [float(rng.uniform(np.radians(15), np.radians(100)))]
    return Articulated("cabinet", [Part("carcass", _open_box(w, h, d, t, "front")), door],
                       rho, q0, {"width": w, "height": h, "depth": d, "wall": t, "side": side})


def drawers(rng: np.random.Generator) -> Articulated:
    """A carcass open at the front holding 1-3 drawers that slide out along +z."""
    n = int(rng.integers(1, 4))
    w, d = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.6)
    t = float(rng.uniform(0.012, 0.025))
    slot = rng.uniform(0.1, 0.25)
    h = n * slot + 2 * t
    rho = float(rng.uniform(300, 900))
    parts, q0 = [Part("carcass", _open_box(w, h, d, t, "front"))], []
    for i in range(n):
        y0 = t + i * slot + 0.004
        inner = _open_box(w - 2 * t - 0.008, slot - 0.008, d - t - 0.004, t * 0.7)
        boxes = [(tuple(np.add(lo, (0.0, y0, t / 2))), tuple(np.add(hi, (0.0, y0, t / 2))))
                 for lo, hi in inner]
        parts.append(Part(f"drawer{i + 1}", [_box(lo, hi) for lo, hi in boxes], 0,
                          Joint("slide", (0.0, 0.0, 1.0), (0.0, y0, d / 2),
                                (0.0, float(0.8 * d)), _damping(rng, 20 * rho * w * slot * d))))
        q0.append(float(rng.uniform(0.0, 0.6 * d)))
    return Articulated("drawers", parts, rho, q0,
                       {"width": w, "height": h, "depth": d, "wall": t, "drawers": n})


def laptop(rng: np.random.Generator) -> Articulated:
    """A thin base with a screen hinged along its back edge (test family)."""
    w, d = rng.uniform(0.25, 0.4), rng.uniform(0.18, 0.28)
    tb, ts = float(rng.uniform(0.01, 0.02)), float(rng.uniform(0.005, 0.012))
    rho = float(rng.uniform(800, 2000))
    screen = Part("screen", [_box((-w / 2, tb, -d / 2), (w / 2, tb + ts, d / 2))], 0,
                  Joint("hinge", (-1.0, 0.0, 0.0), (0.0, tb, -d / 2),
                        (0.0, float(np.radians(135))), _damping(rng, rho * w * d * ts * d)))
    q0 = [float(rng.uniform(np.radians(30), np.radians(125)))]
    return Articulated("laptop", [Part("base", [_box((-w / 2, 0, -d / 2), (w / 2, tb, d / 2))]),
                                  screen], rho, q0, {"width": w, "depth": d})


def lamp(rng: np.random.Generator) -> Articulated:
    """A foot, an upper arm hinged on it and a forearm hinged on the arm's end, both
    turning about x along their bottom edges (test family): designed lying straight along
    +z, started raised."""
    foot, a1, a2 = rng.uniform(0.12, 0.2), rng.uniform(0.2, 0.4), rng.uniform(0.15, 0.35)
    r, tf = float(rng.uniform(0.012, 0.025)), float(rng.uniform(0.02, 0.04))
    rho = float(rng.uniform(500, 1500))
    y = tf  # the arms lie along +z on the foot, hinged at z = 0 and z = a1 by their bottoms
    arm = Part("arm", [_box((-r, tf, 0.0), (r, tf + 2 * r, a1))], 0,
               Joint("hinge", (-1.0, 0.0, 0.0), (0.0, y, 0.0),
                     (0.0, float(np.radians(150))), _damping(rng, rho * r * r * a1 ** 3)))
    fore = Part("forearm", [_box((-r, tf, a1), (r, tf + 2 * r, a1 + a2))], 1,
                Joint("hinge", (1.0, 0.0, 0.0), (0.0, y, a1),
                      (0.0, float(np.radians(150))), _damping(rng, rho * r * r * a2 ** 3)))
    base = Part("foot", [_box((-foot / 2, 0, -foot / 2), (foot / 2, tf, foot / 2))])
    q0 = [float(rng.uniform(np.radians(40), np.radians(90))),
          float(rng.uniform(np.radians(30), np.radians(120)))]
    return Articulated("lamp", [base, arm, fore], rho, q0,
                       {"foot": foot, "arm": a1, "forearm": a2, "radius": r})


MAKERS: dict[str, Callable[[np.random.Generator], Articulated]] = {
    "chest": chest, "cabinet": cabinet, "drawers": drawers, "laptop": laptop, "lamp": lamp}


def make_articulated(family: str, rng: np.random.Generator) -> Articulated:
    if family not in MAKERS:
        raise UsageError(f"unknown articulated family {family!r}; choose one of "
                         f"{', '.join(FAMILIES)}")
    return MAKERS[family](rng)


@dataclass
class Motion:
    """What moves an articulated object: a drop, its joints' start speeds and pushes on
    its parts (a push: the part's index, a velocity change in m/s, and when)."""

    drop: float = 0.0  # m the base starts above the ground
    joint_speeds: list[float] = field(default_factory=list)  # rad/s or m/s, one per joint
    pushes: list[tuple[int, tuple[float, float, float], float]] = field(default_factory=list)
    # kicks: (time, vertex indices, velocity change): a push, the impulse that would change
    # those vertices' own mass's velocity by it, taken by the whole
    kicks: list[tuple[float, np.ndarray, tuple[float, float, float]]] = field(
        default_factory=list)
    gravity: tuple[float, float, float] = (0.0, -9.81, 0.0)


def sample_motion(art: Articulated, rng: np.random.Generator) -> Motion:
    """A drawn start: dropped (a third of the time), joints thrown (half), a part pushed
    (half); with none of these, gravity alone closes what it can."""
    n = len(art.q0)
    corners = np.array([c for part in art.parts for box in part.boxes for c in box])
    size = float(np.ptp(corners, axis=0).max())
    m = Motion()
    if rng.random() < 1 / 3:
        m.drop = float(rng.uniform(0.05, 0.3) * size)
    if rng.random() < 0.5:
        m.joint_speeds = [float(v) for v in rng.normal(0.0, 1.5, n)]
    if rng.random() < 0.5:
        part = int(rng.integers(1, len(art.parts)))
        v = rng.normal(0.0, 1.0, 3) * np.array([1.0, 0.5, 1.0])
        m.pushes = [(part, tuple(float(x) for x in v), float(rng.uniform(0.0, 1.0)))]
    return m


def build_xml(art: Articulated, motion: Motion, *, timestep: float = TIMESTEP) -> str:
    """The MJCF model: the ground, the base free on it, each part a body at its parent in
    the design pose (all frames at the origin, so the geoms sit at design coordinates) with
    its joint, limited and damped. Contacts between a part and its parent are left out
    (MuJoCo's default), so a lid rests on its hinge's limit, not on the walls."""
    geoms = []
    for part in art.parts:
        geoms.append([])
        for lo, hi in part.boxes:
            lo, hi = np.asarray(lo), np.asarray(hi)
            geoms[-1].append(f'<geom type="box" pos="{_f(to_mj((lo + hi) / 2))}" '
                             f'size="{_f(np.abs(to_mj((hi - lo) / 2)))}" '
                             f'density="{art.density:.6g}"/>')
    return _mjcf([p.name for p in art.parts], [p.parent for p in art.parts],
                 [p.joint for p in art.parts], geoms, "", motion.gravity, timestep)


def rig_xml(bodies: list[RigBody], density: float, *, gravity=(0.0, -9.81, 0.0),
            timestep: float = TIMESTEP) -> str:
    """The MJCF model of parts given as meshes (a rig read from an asset): each closed
    piece of a part a mesh geom of its solid; an open part a shell of SHEET metres of the
    material (collisions: each geom's convex hull)."""
    assets, geoms = [], []
    for b, body in enumerate(bodies):
        geoms.append([])
        for k, (v, f, closed) in enumerate(_pieces(body.vertices, body.faces)):
            name = f"m{b}_{k}"
            assets.append(f'<mesh name="{name}" vertex="{_f(to_mj(v))}" '
                          f'face="{" ".join(str(int(i)) for i in f.reshape(-1))}" '
                          f'inertia="{"exact" if closed else "shell"}"/>')
            rho = density if closed else density * SHEET  # a shell's density is per area
            geoms[-1].append(f'<geom type="mesh" mesh="{name}" density="{rho:.6g}"/>')
    return _mjcf([b.name for b in bodies], [b.parent for b in bodies],
                 [b.joint for b in bodies], geoms, "<asset>\n" + "\n".join(assets) +
                 "\n</asset>\n", gravity, timestep)


def _f(a) -> str:
    return " ".join(f"{x:.7g}" for x in np.asarray(a, float).reshape(-1))


def _pieces(vertices: np.ndarray, faces: np.ndarray):
    """A part as MuJoCo takes it -> (vertices, faces, closed): its surface, and whether it
    bounds a solid (else it is a sheet). A closed part is handed over
    piece by piece, its faces split where more than two meet at an edge (boxes welded at
    their corners), each piece closed and consistently wound, as MuJoCo asks."""
    import trimesh

    closed = closed_surface(faces)
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    pieces = mesh.split(only_watertight=False) if closed else [mesh]
    if closed and not all(p.is_volume for p in pieces):
        soup = trimesh.Trimesh(vertices[faces].reshape(-1, 3),
                               np.arange(3 * len(faces)).reshape(-1, 3), process=False)
        soup.merge_vertices(merge_tex=True, merge_norm=True)
        pieces = soup.split(only_watertight=False)
        closed = all(p.is_volume for p in pieces)
        if not closed:
            pieces = [mesh]
    for p in pieces:
        used = np.unique(p.faces)
        remap = np.full(len(p.vertices), -1)
        remap[used] = np.arange(len(used))
        yield np.asarray(p.vertices)[used], remap[np.asarray(p.faces)], closed


def _mjcf(names, parents, joints, geoms, assets, gravity, timestep) -> str:
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parents):
        children.setdefault(p, []).append(i)
    if children.get(-1) != [0]:
        raise UsageError("an articulated object needs exactly one base, its first part")

    def body(i: int, depth: int) -> str:
        pad = "  " * depth
        lines = [f'{pad}<body name="{names[i]}">']
        j = joints[i]
        if j is None:  # the base: free on the ground
            lines.append(f'{pad}  <freejoint name="{names[i]}_free"/>')
        elif j is not None:
            lines.append(f'{pad}  <joint name="{names[i]}_joint" type="{j.kind}" '
                         f'axis="{_f(to_mj(j.axis))}" pos="{_f(to_mj(j.anchor))}" '
                         f'range="{_f(j.limits)}" limited="true" damping="{j.damping:.6g}" '
                         f'solreflimit="{LIMIT_STIFFNESS:g} 1"/>')
        lines += [pad + "  " + g for g in geoms[i]]
        lines += [body(c, depth + 1) for c in children.get(i, [])]
        lines.append(f"{pad}</body>")
        return "\n".join(lines)

    return ('<mujoco model="neurok-articulated">\n'
            '<compiler angle="radian"/>\n'
            f'<option timestep="{timestep:.9g}" gravity="{_f(to_mj(gravity))}"/>\n'
            f'<default><geom friction="{FRICTION:g} 0.005 0.0001" solref="0.005 1"/></default>\n'
            f'{assets}<worldbody>\n<geom name="ground" type="plane" size="0 0 1"/>\n'
            f'{body(0, 0)}\n</worldbody>\n</mujoco>\n')


@dataclass
class ArticulatedRun:
    frames: np.ndarray  # (T, N, 3) vertices, metres, +Y up
    joints: np.ndarray  # (T, J) joint positions, rad or m
    times: np.ndarray  # (T,)
    faces: np.ndarray
    owner: np.ndarray  # (N,) each vertex's part
    mass: float  # kg
    rejected: str | None = None
    wall_s: float = 0.0  # the engine's time


def run_articulated(art: Articulated, motion: Motion, *, seconds: float, fps: float
                    ) -> ArticulatedRun:
    """Move the object from its start (joints at q0, their speeds, the drop) under gravity,
    pushes and the ground, and record every frame's vertices and joint positions."""
    verts, faces, owner = art.mesh()
    return _run(build_xml(art, motion), [p.name for p in art.parts],
                [p.joint is not None for p in art.parts], verts, faces, owner, art.q0,
                motion, seconds=seconds, fps=fps, lift=True)


def run_rig(bodies: list[RigBody], density: float, motion: Motion, *, seconds: float,
            fps: float) -> ArticulatedRun:
    """Move a rig read from an asset from its given pose (every joint at 0), as
    :func:`run_articulated` moves a designed object."""
    verts = np.concatenate([b.vertices for b in bodies])
    offs = np.cumsum([0] + [len(b.vertices) for b in bodies])
    faces = np.concatenate([b.faces + o for b, o in zip(bodies, offs[:-1])])
    owner = np.concatenate([np.full(len(b.vertices), i) for i, b in enumerate(bodies)])
    xml = rig_xml(bodies, density, gravity=motion.gravity)
    jointed = [b.joint is not None for b in bodies]
    return _run(xml, [b.name for b in bodies], jointed, verts, faces, owner,
                [0.0] * sum(jointed), motion, seconds=seconds, fps=fps, lift=False)


def _run(xml: str, names: list[str], jointed: list[bool], verts, faces, owner, q0,
         motion: Motion, *, seconds: float, fps: float, lift: bool
         ) -> ArticulatedRun:
    import time

    mujoco = require("mujoco", "sim")

    t0 = time.perf_counter()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    local = to_mj(verts)
    idx = [i for i, j in enumerate(jointed) if j]
    adr = [model.jnt_qposadr[model.joint(f"{names[i]}_joint").id] for i in idx]
    vadr = [model.jnt_dofadr[model.joint(f"{names[i]}_joint").id] for i in idx]
    data.qpos[2] += motion.drop  # the free base: x, y, z (MuJoCo's z up), then a quaternion
    for a, q in zip(adr, q0, strict=True):
        data.qpos[a] = q
    for a, v in zip(vadr, motion.joint_speeds or [0.0] * len(vadr), strict=True):
        data.qvel[a] = v
    mujoco.mj_forward(model, data)
    if lift:
        # a start pose with a part below the ground (a lamp's forearm folded down) is
        # lifted onto it; the design pose stands on it
        data.qpos[2] += max(0.0, -float((data.geom_xpos[1:, 2]
                                         - _half_height(model, data)).min()))
        mujoco.mj_forward(model, data)
    bodies = [model.body(n).id for n in names]
    mass = float(sum(model.body_mass[b] for b in bodies))
    n = int(np.floor(seconds * fps + 1e-9)) + 1
    times = np.arange(n) / fps
    frames = np.empty((n, len(verts), 3))
    joints = np.empty((n, len(idx)))
    kicks = sorted(motion.kicks, key=lambda kick: kick[0])
    for k, t in enumerate(times):
        while data.time < t - 1e-9:
            while kicks and kicks[0][0] <= data.time + 1e-9:
                _kick(model, data, kicks.pop(0), local, owner, bodies)
            data.xfrc_applied[:] = 0.0
            for part, dv, at in motion.pushes:
                if at <= data.time < at + PUSH_TIME:  # the velocity change as a force
                    b = bodies[part]
                    data.xfrc_applied[b, :3] = model.body_subtreemass[b] * to_mj(dv) / PUSH_TIME
            mujoco.mj_step(model, data)
        mujoco.mj_kinematics(model, data)  # the poses of the state reached, not the last one
        for p, b in enumerate(bodies):
            sel = owner == p
            frames[k, sel] = local[sel] @ data.xmat[b].reshape(3, 3).T + data.xpos[b]
        joints[k] = [data.qpos[a] for a in adr]
        if not np.isfinite(frames[k]).all():
            return ArticulatedRun(from_mj(frames[:k]), joints[:k], times[:k], faces, owner,
                                  mass, "blow-up", time.perf_counter() - t0)
    return ArticulatedRun(from_mj(frames), joints, times, faces, owner, mass, None,
                          time.perf_counter() - t0)


def _kick(model, data, kick, local: np.ndarray, owner: np.ndarray, bodies: list[int]
          ) -> None:
    """A push on some vertices: the impulse that would change their own mass's velocity by
    the kick's (each vertex its part's mass over its vertices), taken by the whole (as
    linkage.Linkage.kick)."""
    mujoco = require("mujoco", "sim")

    mujoco.mj_forward(model, data)  # poses and the mass matrix of the state reached
    _, idx, dv = kick
    count = np.bincount(owner)
    impulse, jacp = np.zeros(model.nv), np.zeros((3, model.nv))
    for i in idx:
        b = bodies[owner[i]]
        x = local[i] @ data.xmat[b].reshape(3, 3).T + data.xpos[b]
        mujoco.mj_jac(model, data, jacp, None, x, b)
        impulse += jacp.T @ to_mj(dv) * model.body_mass[b] / count[owner[i]]
    change = np.zeros((1, model.nv))
    mujoco.mj_solveM(model, data, change, impulse[None])  # M^-1 impulse, M factored
    data.qvel[:] += change[0]


def _half_height(model, data) -> np.ndarray:
    """Each non-ground geom's (boxes) half extent along MuJoCo's z as it is turned now."""
    R = data.geom_xmat[1:].reshape(-1, 3, 3)
    return (np.abs(R[:, 2, :]) * model.geom_size[1:]).sum(axis=1)
