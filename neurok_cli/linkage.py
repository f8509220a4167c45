"""Motion of an articulated object in its joint coordinates (Lagrangian mechanics).

For a rig of rigid parts (articulation.py) the generalised coordinates are known exactly:
the joints' positions, and the base's height when it is dropped. Each part's mass is carried
by six points that have its mass, centre and second moments (so its kinetic energy is the
rigid body's, exactly); a point's velocity is J(q) q'; the Euler-Lagrange equations are

    M(q) q'' = sum_i J_i^T (f_i - m_i J'_i q')  + joint forces,   M = sum_i m_i J_i^T J_i,

with gravity f_i = m_i g, the joints' damping and the ground (a stiff, critically damped
spring on each part's hull points), integrated with RK4. A joint reaching a limit stops
there, inelastically: its position is held at the limit and its speed taken away by the
impulse that leaves the other joints' momentum as it was. Steps are short while a part is
near the ground (its spring is stiff), longer off it. Frames are each part's vertices moved
by its pose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .articulation import Rig
from .sim.articulated import SHEET, Joint, axis_rotation, closed_surface

DENSITY = 600.0  # kg/m^3: wood, for a rig given no material
DAMPING_RATE = 0.5  # 1/s: a joint's damping over its inertia about it
GROUND_RATE = 300.0  # rad/s: the ground's stiffness, as a natural frequency
STEP_RATE = 1.0  # step x GROUND_RATE on the ground (RK4 is stable to 2.8)
FREE_STEP = 1 / 60  # s: the longest step off the ground (a swing is ~1 Hz)
HULL_POINTS = 64  # most ground points a part keeps


@dataclass
class Coordinate:
    """One generalised coordinate: a part's joint, or the base's height above where it
    stands (``part`` 0, ``parent`` -1, a slide along +Y, limited below by the ground)."""

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
                 density: float = DENSITY, free_base: bool = False,
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
        self.coords = self._coordinates(free_base)
        self.moves = np.array([[self._above(co.part, p) for co in self.coords]
                               for p in range(P)]).reshape(P, len(self.coords))
        # the base meets the ground as it stands (or as on a limit, dropped): the other
        # parts' hulls touch it
        joint = np.array([co.parent >= 0 for co in self.coords], bool)
        keep = (self.moves[self.hull_part] & joint).any(axis=1)
        self.hull, self.hull_part, self.hull_k = (self.hull[keep], self.hull_part[keep],
                                                  self.hull_k[keep])
        self._set_damping()

    def _coordinates(self, free_base: bool) -> list[Coordinate]:
        coords = []
        if free_base:
            # the base lands as on a limit: stopped dead where it stands on the ground
            coords.append(Coordinate(0, -1, "slide", np.array([0.0, 1.0, 0.0]), np.zeros(3),
                                     (0.0, np.inf), 0.0))
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
        P = len(self.rig.names)
        R, t = np.empty((P, 3, 3)), np.zeros((P, 3))
        axis, anchor = np.empty((len(self.coords), 3)), np.empty((len(self.coords), 3))
        R[0] = np.eye(3)
        by_part = {co.part: c for c, co in enumerate(self.coords) if co.parent >= 0}
        if self.coords and self.coords[0].parent < 0:
            t[0] = q[0] * self.coords[0].axis
            axis[0], anchor[0] = self.coords[0].axis, t[0]
        for p in range(1, P):
            u = self.rig.parent[p]
            c = by_part.get(p)
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

    def place(self, pose: Pose, local: np.ndarray, part: np.ndarray) -> np.ndarray:
        """Points given as the rest has them, each on its ``part``, moved by ``pose``."""
        return np.einsum("nij,nj->ni", pose.R[part], local) + pose.t[part]

    def _jacobian(self, pose: Pose, x: np.ndarray, part: np.ndarray) -> np.ndarray:
        """(n, 3, C): each point's velocity per coordinate's rate."""
        J = np.zeros((len(x), 3, len(self.coords)))
        for c, co in enumerate(self.coords):
            on = self.moves[part, c]
            if not on.any():
                continue
            if co.kind == "hinge":
                J[on, :, c] = _cross(pose.axis[c], x[on] - pose.anchor[c])
            else:
                J[on, :, c] = pose.axis[c]
        return J

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
        """The joint speeds after the rest's vertices ``idx`` get the velocity change ``dv``:
        the change the joints can give them nearest to it (least squares)."""
        pose = self.pose(q)
        part = self.rig.owner[idx]
        J = self._jacobian(pose, self.place(pose, self.rest[idx], part), part)
        A = J.reshape(-1, len(self.coords))  # rows: (vertex, axis)
        return qd + np.linalg.lstsq(A, np.tile(np.asarray(dv, float), len(idx)),
                                    rcond=None)[0]

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
        x = self.place(pose, self.hull, self.hull_part)
        low = x[:, 1] < 0.0
        if not low.any():
            return np.zeros(len(self.coords))
        J = self._jacobian(pose, x[low], self.hull_part[low])
        vy = (J @ qd)[:, 1]
        k = self.hull_k[low]
        fy = np.maximum(k * GROUND_RATE ** 2 * -x[low, 1] - 2 * k * GROUND_RATE * vy, 0.0)
        return J[:, 1, :].T @ fy

    def energy(self, q: np.ndarray, qd: np.ndarray) -> tuple[float, float]:
        """Kinetic and gravitational potential energy (J)."""
        pose, J = self._mass_jacobian(q)
        x = self.place(pose, self.points, self.point_part)
        v = J @ qd
        return (0.5 * float(self.point_mass @ (v * v).sum(axis=1)),
                -float(self.point_mass @ (x @ self.gravity)))

    def tips(self, qs: np.ndarray) -> int | None:
        """The first state of ``qs`` (T, C) in which the object's centre of mass stands
        outside the base's footprint (its points on the ground, seen from above): a free
        object would tip over there, where the base is held. None: it never does."""
        from scipy.spatial import Delaunay, QhullError

        base = self.rest[self.rig.owner == 0]
        foot = base[base[:, 1] <= base[:, 1].min() + 1e-3 * np.ptp(self.rest, axis=0).max()]
        try:
            region = Delaunay(foot[:, [0, 2]])
        except (QhullError, ValueError):  # standing on a line or a point: it tips at once
            return 0
        for k, q in enumerate(qs):
            x = self.place(self.pose(q), self.points, self.point_part)
            com = self.point_mass @ x / self.point_mass.sum()
            if region.find_simplex(com[[0, 2]]) < 0:
                return k
        return None

    def frames(self, qs: np.ndarray) -> np.ndarray:
        """(T, N, 3) the rig's vertices in each state of ``qs`` (T, C)."""
        out = np.empty((len(qs), *self.rest.shape))
        for k, q in enumerate(qs):
            pose = self.pose(q)
            out[k] = self.place(pose, self.rest, self.rig.owner)
        return out

    def part_angles(self, qs: np.ndarray) -> np.ndarray:
        """(T, P) each part's turn (rad) from the given pose."""
        out = np.empty((len(qs), len(self.rig.names)))
        for k, q in enumerate(qs):
            R = self.pose(q).R
            out[k] = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1) / 2, -1, 1))
        return out


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (3,) x b (n, 3), without np.cross's axis shuffling (its cost, at these sizes)."""
    out = np.empty_like(b)
    out[:, 0] = a[1] * b[:, 2] - a[2] * b[:, 1]
    out[:, 1] = a[2] * b[:, 0] - a[0] * b[:, 2]
    out[:, 2] = a[0] * b[:, 1] - a[1] * b[:, 0]
    return out


@dataclass
class Run:
    times: np.ndarray  # (T,)
    q: np.ndarray  # (T, C)
    qd: np.ndarray  # (T, C)
    steps: int
    kinetic: np.ndarray  # (T,)
    potential: np.ndarray  # (T,)


def integrate(link: Linkage, q0: np.ndarray, qd0: np.ndarray, *, seconds: float, fps: float,
              kicks=(), on_frame=None) -> Run:
    """RK4 from (q0, qd0), recording each frame: steps of STEP_RATE / GROUND_RATE in a frame
    near the ground, of FREE_STEP or less away from it; limits after every step; each of
    ``kicks`` (time, vertex indices, velocity change; Linkage.kick) at the first step from
    its time on."""
    n = int(np.floor(seconds * fps + 1e-9)) + 1
    fine = max(1, int(np.ceil(GROUND_RATE / (STEP_RATE * fps))))
    coarse = max(1, int(np.ceil(1 / (FREE_STEP * fps))))
    q, qd = link.limit(np.asarray(q0, float).copy(), np.asarray(qd0, float).copy())
    Q, QD = np.empty((n, len(q))), np.empty((n, len(q)))
    kin, pot = np.empty(n), np.empty(n)
    steps = 0
    kicks = sorted(kicks, key=lambda kick: kick[0])

    def f(q, qd):
        return qd, link.accel(q, qd)

    for k in range(n):
        if k:
            sub = fine if link.near_ground(q, qd, 1 / fps) else coarse
            h = 1.0 / (fps * sub)
            for i in range(sub):
                while kicks and kicks[0][0] <= (k - 1) / fps + i * h + 1e-9:
                    _, idx, dv = kicks.pop(0)
                    qd = link.kick(q, qd, idx, dv)
                k1 = f(q, qd)
                k2 = f(q + 0.5 * h * k1[0], qd + 0.5 * h * k1[1])
                k3 = f(q + 0.5 * h * k2[0], qd + 0.5 * h * k2[1])
                k4 = f(q + h * k3[0], qd + h * k3[1])
                q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
                qd = qd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
                q, qd = link.limit(q, qd)
            steps += sub
            if not (np.isfinite(q).all() and np.isfinite(qd).all()):
                raise FloatingPointError("the articulated motion blew up")
        Q[k], QD[k] = q, qd
        kin[k], pot[k] = link.energy(q, qd)
        if on_frame is not None:
            on_frame(k + 1, n)
    return Run(np.arange(n) / fps, Q, QD, steps, kin, pot)
