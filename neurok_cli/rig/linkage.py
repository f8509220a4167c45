"""Motion of an articulated object in its joint coordinates (Lagrangian mechanics).

For a rig of rigid parts (rig/articulation.py) the generalised coordinates are known exactly:
the joints' positions and, for a base free on the ground, its position and turn. Each
part's mass is carried by six points that have its mass, centre and second moments (so its
kinetic energy is the rigid body's, exactly); a point's velocity is J(q) q'; the
Euler-Lagrange equations are

    M(q) q'' = sum_i J_i^T (f_i - m_i J'_i q')  + joint forces,   M = sum_i m_i J_i^T J_i,

with gravity f_i = m_i g, the joints' damping and the ground (a stiff, critically damped
spring on each part's hull points, with Coulomb friction). A joint reaching a limit stops
there, inelastically: its position is held at the limit and its speed taken away by the
impulse that leaves the other joints' momentum as it was.

The base is ``held`` where it stands, or ``drop``: free to fall straight down, landing as
on a limit, or ``free``: six more coordinates, its position and a turn about each world
axis, whose rates are its velocity and angular velocity; the turn is folded into the
base's orientation after every step, so it never meets a singular angle. A held or dropped
base is integrated with RK4, in short steps while a part is near the ground (its spring is
stiff), longer off it; a free one by semi-implicit Euler at 1/600 s, as the engine steps
it. Frames are each part's vertices moved by its pose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..scenario.joints import SHEET, Joint, axis_rotation, closed_surface
from .articulation import Rig

DENSITY = 600.0  # kg/m^3: wood, for a rig given no material
DAMPING_RATE = 0.5  # 1/s: a joint's damping over its inertia about it
GROUND_RATE = 300.0  # rad/s: the ground's stiffness, as a natural frequency
STEP_RATE = 1.0  # step x GROUND_RATE on the ground (RK4 is stable to 2.8)
FREE_STEP = 1 / 60  # s: the longest step off the ground (a swing is ~1 Hz)
HULL_POINTS = 64  # most ground points a part keeps
FRICTION = 0.8  # the ground's Coulomb friction (the engine's)
SLIP = 0.01  # m/s: below this sliding speed friction grows from zero (regularised)
FREE_TIMESTEP = 1 / 600  # s: a free base's step, the engine's
BASES = ("held", "drop", "free")


@dataclass
class Coordinate:
    """One generalised coordinate: a part's joint, or one of the base's (``part`` 0,
    ``parent`` -1: a slide along a world axis, or a turn about one through its centre)."""

    part: int
    parent: int
    kind: str
    axis: np.ndarray  # as given, in the parent's given pose
    anchor: np.ndarray
    limits: tuple[float, float]
    damping: float


@dataclass
class Pose:
    R: np.ndarray  # (P, 3, 3)
    t: np.ndarray  # (P, 3)
    axis: np.ndarray  # (C, 3) each coordinate's axis now
    anchor: np.ndarray  # (C, 3)


def mass_properties(vertices: np.ndarray, faces: np.ndarray, density: float
                    ) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre and second moment (3, 3) about it of a part: the solid its surface
    bounds or, where it bounds none, a sheet of SHEET metres of the material (as the engine
    takes it)."""
    import trimesh

    mesh = trimesh.Trimesh(vertices, faces, process=False)
    if not (closed_surface(faces) and mesh.volume > 0):  # a sheet of SHEET metres
        return _sheet(vertices, faces, density * SHEET)
    props = mesh.mass_properties
    inertia = np.asarray(props["inertia"]) * density
    return (float(props["mass"]) * density, np.asarray(props["center_mass"]),
            0.5 * np.trace(inertia) * np.eye(3) - inertia)


def _sheet(vertices: np.ndarray, faces: np.ndarray, areal: float
           ) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre and second moment of a surface of ``areal`` kg/m² (its triangles' own
    second moments; a single line or point of vertices has a tiny one, so no part is
    without inertia)."""
    tri = vertices[faces]
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    m = areal * max(float(area.sum()), 1e-12)
    w = area / max(float(area.sum()), 1e-12) if area.sum() > 0 else np.full(len(tri), 1 / len(tri))
    centre = np.einsum("f,fij->j", w, tri) / 3
    d = tri - centre
    # a triangle's second moment: (sum of the vertices' outer products + the outer product of
    # their sum) / 12, per unit area
    S = np.einsum("f,fki,fkj->ij", w, d, d) / 12 + np.einsum(
        "f,fi,fj->ij", w, d.sum(1), d.sum(1)) / 12
    return m, centre, m * S + 1e-12 * np.eye(3)


def mass_points(m: float, c: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Six points (6, 3) of m/6 each with mass m, centre c and second moment S."""
    s, E = np.linalg.eigh(0.5 * (S + S.T))
    a = np.sqrt(np.maximum(3.0 * s / m, 0.0))
    return c + np.concatenate([(E * a).T, -(E * a).T])


class Linkage:
    """A rig's parts with their masses, its coordinates, and their equations of motion."""

    def __init__(self, rig: Rig, vertices: np.ndarray, faces: np.ndarray, *,
                 density: float = DENSITY, base: str = "held",
                 gravity=(0.0, -9.81, 0.0), ground: bool = True):
        from scipy.spatial import ConvexHull, QhullError

        self.rig, self.rest, self.density = rig, vertices, density
        self.gravity, self.ground = np.asarray(gravity, float), ground
        P = len(rig.names)
        owner_f = rig.owner[faces[:, 0]]
        self.mass = np.zeros(P)
        pts, hull = [], []
        for p in range(P):
            m, c, S = mass_properties(vertices, faces[owner_f == p], density)
            self.mass[p] = m
            pts.append(mass_points(m, c, S))
            v = vertices[rig.owner == p]
            try:
                h = v[ConvexHull(v).vertices]
            except (QhullError, ValueError):
                h = v
            hull.append(h[np.linspace(0, len(h) - 1, min(len(h), HULL_POINTS)).astype(int)])
        self.points = np.concatenate(pts)
        self.point_part = np.repeat(np.arange(P), 6)
        self.point_mass = np.repeat(self.mass / 6, 6)
        self.hull = np.concatenate(hull)
        self.hull_part = np.concatenate([np.full(len(h), p) for p, h in enumerate(hull)])
        self.hull_k = (self.mass / np.bincount(self.hull_part, minlength=P))[self.hull_part]
        if base not in BASES:
            raise ValueError(f"base must be one of {BASES}, not {base!r}")
        self.base, self.free = base, base == "free"
        self.centre = self.points[:6].mean(axis=0)  # the base's: a free base turns about it
        self.turn = np.eye(3)  # a free base's orientation, the turns folded in so far
        self.coords = self._coordinates()
        self.moves = np.array([[self._above(co.part, p) for co in self.coords]
                               for p in range(P)]).reshape(P, len(self.coords))
        self.hinge = np.array([co.kind == "hinge" for co in self.coords], bool)
        self.by_part = {co.part: c for c, co in enumerate(self.coords) if co.parent >= 0}
        if not self.free:  # a held base meets the ground as it stands (a dropped one as on
            # a limit): the other parts' hulls touch it
            joint = np.array([co.parent >= 0 for co in self.coords], bool)
            keep = (self.moves[self.hull_part] & joint).any(axis=1)
            self.hull, self.hull_part, self.hull_k = (self.hull[keep], self.hull_part[keep],
                                                      self.hull_k[keep])
        self._set_damping()

    def _coordinates(self) -> list[Coordinate]:
        coords = []
        if self.base == "drop":  # lands as on a limit: stopped dead where it stands
            coords.append(Coordinate(0, -1, "slide", np.array([0.0, 1.0, 0.0]), self.centre,
                                     (0.0, np.inf), 0.0))
        if self.free:
            for kind in ("slide", "hinge"):
                coords += [Coordinate(0, -1, kind, axis, self.centre, (-np.inf, np.inf), 0.0)
                           for axis in np.eye(3)]
        for p in self.rig.jointed:
            j = self.rig.joints[p]
            coords.append(Coordinate(p, self.rig.parent[p], j.kind, np.asarray(j.axis, float),
                                     np.asarray(j.anchor, float), tuple(j.limits),
                                     float(j.damping)))
        return coords

    def _above(self, q: int, p: int) -> bool:
        """Whether part ``q`` is ``p`` or one of its ancestors."""
        while p >= 0:
            if p == q:
                return True
            p = self.rig.parent[p]
        return False

    def _set_damping(self) -> None:
        """Joints given no damping get DAMPING_RATE x their inertia about the joint."""
        M = self.mass_matrix(np.zeros(len(self.coords)))
        for c, co in enumerate(self.coords):
            if co.damping == 0.0 and co.parent >= 0:
                co.damping = DAMPING_RATE * float(M[c, c])

    def joints(self) -> list[Joint]:
        """The rig's joints as moved here (with the damping used), in part order."""
        return [replace(self.rig.joints[co.part], damping=co.damping)
                for co in self.coords if co.parent >= 0]

    def pose(self, q: np.ndarray) -> Pose:
        P, C = len(self.rig.names), len(self.coords)
        R, t = np.empty((P, 3, 3)), np.zeros((P, 3))
        axis, anchor = np.empty((C, 3)), np.empty((C, 3))
        R[0] = np.eye(3)
        if self.base == "drop":
            t[0] = q[0] * self.coords[0].axis
            axis[0], anchor[0] = self.coords[0].axis, self.centre + t[0]
        elif self.free:  # turned about its centre by the folded turn, then by q[3:6]; moved
            R[0] = _rotation(q[3:6]) @ self.turn
            centre = self.centre + q[0:3]
            t[0] = centre - R[0] @ self.centre
            axis[:6], anchor[:6] = np.tile(np.eye(3), (2, 1)), centre
        for p in range(1, P):
            u = self.rig.parent[p]
            c = self.by_part.get(p)
            if c is None:
                R[p], t[p] = R[u], t[u]
                continue
            co = self.coords[c]
            axis[c], anchor[c] = R[u] @ co.axis, R[u] @ co.anchor + t[u]
            if co.kind == "hinge":
                Rj = axis_rotation(co.axis, q[c])
                R[p], t[p] = R[u] @ Rj, R[u] @ (co.anchor - Rj @ co.anchor) + t[u]
            else:
                R[p], t[p] = R[u], t[u] + axis[c] * q[c]
        return Pose(R, t, axis, anchor)

    def fold(self, q: np.ndarray) -> np.ndarray:
        """A free base's turn q[3:6] folded into its orientation: the same pose, q[3:6] 0.
        Its rates stay as they are: they are its angular velocity either way."""
        if not self.free:
            return q
        self.turn = _rotation(q[3:6]) @ self.turn
        q = q.copy()
        q[3:6] = 0.0
        return q

    def place(self, pose: Pose, local: np.ndarray, part: np.ndarray) -> np.ndarray:
        """Points given as the rest has them, each on its ``part``, moved by ``pose``."""
        return np.einsum("nij,nj->ni", pose.R[part], local) + pose.t[part]

    def _jacobian(self, pose: Pose, x: np.ndarray, part: np.ndarray) -> np.ndarray:
        """(n, 3, C): each point's velocity per coordinate's rate."""
        a = pose.axis[None]  # (1, C, 3)
        d = x[:, None, :] - pose.anchor[None]  # (n, C, 3)
        turn = np.stack([a[..., 1] * d[..., 2] - a[..., 2] * d[..., 1],
                         a[..., 2] * d[..., 0] - a[..., 0] * d[..., 2],
                         a[..., 0] * d[..., 1] - a[..., 1] * d[..., 0]], axis=-1)
        J = np.where(self.hinge[None, :, None], turn, a)  # (n, C, 3)
        J *= self.moves[part][:, :, None]
        return J.transpose(0, 2, 1)

    def _mass_jacobian(self, q: np.ndarray) -> tuple[Pose, np.ndarray]:
        """The pose at ``q`` and the mass points' Jacobians there (n, 3, C)."""
        pose = self.pose(q)
        return pose, self._jacobian(pose, self.place(pose, self.points, self.point_part),
                                    self.point_part)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        J = self._mass_jacobian(q)[1]
        return np.einsum("n,nic,nid->cd", self.point_mass, J, J)

    def accel(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        pose, J = self._mass_jacobian(q)
        M = np.einsum("n,nic,nid->cd", self.point_mass, J, J)
        eps = 1e-6 / max(float(np.abs(qd).max()), 1e-6)  # J' q' by a centred difference
        Jdqd = (self._mass_jacobian(q + eps * qd)[1] @ qd
                - self._mass_jacobian(q - eps * qd)[1] @ qd) / (2 * eps)
        f = self.point_mass[:, None] * (self.gravity - Jdqd)
        Q = np.einsum("nic,ni->c", J, f) - np.array([co.damping for co in self.coords]) * qd
        if self.ground:
            Q += self._ground(pose, qd)
        return np.linalg.solve(M, Q)

    def limit(self, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A joint past a limit is put back on it and stopped there, by the impulse along
        it that keeps the other joints' momentum (an inelastic stop)."""
        for c, co in enumerate(self.coords):
            lo, hi = co.limits
            if lo <= q[c] <= hi:
                continue
            q = q.copy()
            q[c] = min(max(q[c], lo), hi)
            if (q[c] == hi and qd[c] > 0) or (q[c] == lo and qd[c] < 0):
                Minv = np.linalg.inv(self.mass_matrix(q))
                qd = qd - qd[c] * Minv[:, c] / Minv[c, c]
        return q, qd

    def kick(self, q: np.ndarray, qd: np.ndarray, idx: np.ndarray, dv) -> np.ndarray:
        """The speeds after a push on the rest's vertices ``idx``: the impulse that would
        change their own mass's velocity by ``dv`` (each vertex its part's mass over its
        vertices), taken by the whole (M^-1 J^T p)."""
        pose = self.pose(q)
        part = self.rig.owner[idx]
        J = self._jacobian(pose, self.place(pose, self.rest[idx], part), part)
        share = self.mass[part] / np.bincount(self.rig.owner)[part]
        impulse = np.einsum("nic,n,i->c", J, share, np.asarray(dv, float))
        return qd + np.linalg.solve(self.mass_matrix(q), impulse)

    def near_ground(self, q: np.ndarray, qd: np.ndarray, within: float) -> bool:
        """Whether a hull point is on the ground or may reach it in ``within`` seconds."""
        if not self.ground:
            return False
        pose = self.pose(q)
        x = self.place(pose, self.hull, self.hull_part)
        v = self._jacobian(pose, x, self.hull_part) @ qd
        return bool((x[:, 1] + np.minimum(v[:, 1], 0.0) * 2 * within < 1e-3).any()
                    or (x[:, 1] < 1e-3).any())

    def _ground(self, pose: Pose, qd: np.ndarray) -> np.ndarray:
        """The ground's push on the hull points below it (a critically damped spring) and
        its friction (Coulomb, FRICTION times the push, grown from zero below SLIP)."""
        x = self.place(pose, self.hull, self.hull_part)
        low = x[:, 1] < 0.0
        if not low.any():
            return np.zeros(len(self.coords))
        J = self._jacobian(pose, x[low], self.hull_part[low])
        v = J @ qd
        k = self.hull_k[low]
        push = np.maximum(k * GROUND_RATE ** 2 * -x[low, 1] - 2 * k * GROUND_RATE * v[:, 1],
                          0.0)
        slide = v * np.array([1.0, 0.0, 1.0])
        f = -FRICTION * push[:, None] * slide / np.maximum(
            np.linalg.norm(slide, axis=1), SLIP)[:, None]
        f[:, 1] = push
        return np.einsum("nic,ni->c", J, f)

    def energy(self, q: np.ndarray, qd: np.ndarray) -> tuple[float, float]:
        """Kinetic and gravitational potential energy (J)."""
        pose, J = self._mass_jacobian(q)
        x = self.place(pose, self.points, self.point_part)
        v = J @ qd
        return (0.5 * float(self.point_mass @ (v * v).sum(axis=1)),
                -float(self.point_mass @ (x @ self.gravity)))

    def frames(self, run: Run) -> np.ndarray:
        """(T, N, 3) the rig's vertices in each state of a run."""
        turn = self.turn
        out = np.empty((len(run.q), *self.rest.shape))
        for k, q in enumerate(run.q):
            if run.turns is not None:
                self.turn = run.turns[k]
            out[k] = self.place(self.pose(q), self.rest, self.rig.owner)
        self.turn = turn
        return out


def _rotation(v: np.ndarray) -> np.ndarray:
    """The rotation (3, 3) by the rotation vector ``v`` (its length the angle)."""
    angle = float(np.linalg.norm(v))
    return np.eye(3) if angle == 0.0 else axis_rotation(v / angle, angle)


@dataclass
class Run:
    times: np.ndarray  # (T,)
    q: np.ndarray  # (T, C)
    qd: np.ndarray  # (T, C)
    steps: int
    kinetic: np.ndarray  # (T,)
    potential: np.ndarray  # (T,)
    turns: np.ndarray | None = None  # (T, 3, 3) a free base's orientation


def integrate(link: Linkage, q0: np.ndarray, qd0: np.ndarray, *, seconds: float, fps: float,
              kicks=(), on_frame=None) -> Run:
    """The motion from (q0, qd0), recording each frame; limits after every step; each of
    ``kicks`` (time, vertex indices, velocity change; Linkage.kick) at the first step from
    its time on. A held or dropped base: RK4, steps of STEP_RATE / GROUND_RATE in a frame
    near the ground, of FREE_STEP or less away from it. A free base: semi-implicit Euler
    at FREE_TIMESTEP, its turn folded in after every step."""
    n = int(np.floor(seconds * fps + 1e-9)) + 1
    fine = max(1, int(np.ceil(GROUND_RATE / (STEP_RATE * fps))))
    coarse = max(1, int(np.ceil(1 / (FREE_STEP * fps))))
    free = max(1, int(np.ceil(1 / (FREE_TIMESTEP * fps))))
    q, qd = link.limit(np.asarray(q0, float).copy(), np.asarray(qd0, float).copy())
    Q, QD = np.empty((n, len(q))), np.empty((n, len(q)))
    kin, pot, turns = np.empty(n), np.empty(n), np.empty((n, 3, 3))
    steps = 0
    kicks = sorted(kicks, key=lambda kick: kick[0])

    def f(q, qd):
        return qd, link.accel(q, qd)

    for k in range(n):
        if k:
            sub = free if link.free else fine if link.near_ground(q, qd, 1 / fps) else coarse
            h = 1.0 / (fps * sub)
            for i in range(sub):
                while kicks and kicks[0][0] <= (k - 1) / fps + i * h + 1e-9:
                    _, idx, dv = kicks.pop(0)
                    qd = link.kick(q, qd, idx, dv)
                if link.free:
                    qd = qd + h * link.accel(q, qd)
                    q = q + h * qd
                else:
                    k1 = f(q, qd)
                    k2 = f(q + 0.5 * h * k1[0], qd + 0.5 * h * k1[1])
                    k3 = f(q + 0.5 * h * k2[0], qd + 0.5 * h * k2[1])
                    k4 = f(q + h * k3[0], qd + h * k3[1])
                    q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
                    qd = qd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
                q, qd = link.limit(link.fold(q), qd)
            steps += sub
            if not (np.isfinite(q).all() and np.isfinite(qd).all()):
                raise FloatingPointError("the articulated motion blew up")
        Q[k], QD[k], turns[k] = q, qd, link.turn
        kin[k], pot[k] = link.energy(q, qd)
        if on_frame is not None:
            on_frame(k + 1, n)
    return Run(np.arange(n) / fps, Q, QD, steps, kin, pot, turns if link.free else None)
