"""A cloth's contact with itself, the ground and the asset's fixed parts, kept free of
intersections (docs/design.md, "Cloth on its own simulation mesh"): Incremental Potential
Contact's barrier (Li et al. 2020) with the IPC Toolkit (``ipctk``). Pairs of elements closer
than ``dhat`` add the barrier to the step's potential, its gradient and (positive
semi-definite) Hessian to the global step's solve; a move that would meet something is cut
short of the time of impact continuous collision detection finds, so no element passes
through another. The ground is
one of the collision mesh's planes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...errors import UsageError

MIN_GAP = 0.01  # no two elements come closer than this x dhat
REST_SHARE = 0.5  # dhat is at most this x the rest's closest two elements' distance
ROOM = 4.0  # a step's pairs are found once for moves up to this x dhat (a larger room
# holds too many pairs: the mountain's first steps took 2.4 s a check)


class ClothContact:
    """The collision mesh of a cloth's ``n`` simulation vertices, the fixed ``obstacles``
    (vertices (K, 3), faces) after them less the faces where the cloth is ``attached`` (N,)
    bool, and the ground (y = 0) where there is one; ``push``: the barrier's force at half
    its reach, N."""

    def __init__(self, rest: np.ndarray, faces: np.ndarray, *, dhat: float, push: float,
                 obstacles: tuple[np.ndarray, np.ndarray] | None = None,
                 attached: np.ndarray | None = None, ground: bool = True):
        try:
            import ipctk
        except ImportError as exc:  # a dependency of the core: a broken install
            raise UsageError("cloth's contact needs ipctk (pip install ipctk)") from exc
        self.ipctk = ipctk
        ipctk.set_logger_level(ipctk.LoggerLevel.error)  # (its notes went to stdout)
        self.n = len(rest)
        verts, tris = np.asarray(rest, np.float64), np.asarray(faces, np.int64)
        if obstacles is not None and len(obstacles[0]):
            ob_faces = _apart(obstacles[0], obstacles[1], verts[attached] if attached is not
                              None else verts[:0])
            tris = np.concatenate([tris, ob_faces + len(verts)])
            verts = np.concatenate([verts, obstacles[0]])
        self.fixed = verts[self.n:]
        tris = np.asfortranarray(tris, np.int32)
        self.mesh = ipctk.CollisionMesh(np.asfortranarray(verts),
                                        np.asfortranarray(ipctk.edges(tris), np.int32), tris)
        full = self._full(verts[:self.n])
        near = ipctk.NormalCollisions()  # the rest's closest pair sets the reach: nothing
        near.build(self.mesh, full, float(dhat))  # touches at rest
        if not near.empty():  # (ipctk's distances are squared)
            dhat = min(float(dhat), REST_SHARE * float(near.compute_minimum_distance(
                self.mesh, full)) ** 0.5)
        self.dhat = max(float(dhat), 1e-7)  # (a pair touching at rest: a floor on the reach)
        self.ground = bool(ground)
        if ground:  # (after the rest's closest pair: a sheet may lie on the ground)
            self.mesh.planes = [ipctk.Hyperplane(np.array([0.0, 1.0, 0.0]), np.zeros(3))]
        self.collisions = ipctk.NormalCollisions()
        self.psd = ipctk.PSDProjectionMethod.CLAMP
        # the force of a unit-stiffness barrier on a vertex at half the reach, as ipctk
        # computes it (on squared distances: the derivative at (dhat / 2, dhat) overstated it
        # by 10^4-10^6 at these reaches, and the barrier pushed next to nothing)
        slope = ipctk.BarrierPotential(self.dhat, 1.0).force_magnitude((0.5 * self.dhat) ** 2,
                                                                      0.0)
        self.barrier = ipctk.BarrierPotential(self.dhat, push / max(float(slope), 1e-300))
        self.broad = ipctk.LBVH()
        self.candidates, self.origin, self.room = ipctk.Candidates(), None, 0.0

    def _full(self, x: np.ndarray) -> np.ndarray:
        return np.asfortranarray(np.concatenate([x, self.fixed]) if len(self.fixed) else x)

    def begin(self, x: np.ndarray, room: float) -> None:
        """A step from ``x`` (N, 3) whose positions stay within ``room`` of it: the pairs that
        may come within ``dhat`` on the way, found once (a broad phase a step, not one an
        iteration). Two elements apart by more than 2 room + dhat at ``x`` stay more than
        dhat apart while no vertex moves more than ``room`` (at most ROOM x dhat: moves past
        it are checked by a broad phase of their own)."""
        self.origin = np.array(x, np.float64)
        self.room = min(max(float(room), self.dhat), ROOM * self.dhat)
        self.candidates.build(self.mesh, self._full(self.origin), self.room + 0.5 * self.dhat,
                              broad_phase=self.broad)

    def _covers(self, *xs: np.ndarray) -> bool:
        """Whether every vertex of each ``xs`` (N, 3) lies within the room the step's pairs
        were found for (and so every straight move between them)."""
        if self.origin is None:
            return False
        reach = self.room * self.room
        return all(float(np.max(np.sum((z - self.origin) ** 2, axis=1))) <= reach for z in xs)

    def active(self, x: np.ndarray) -> bool:
        """Find the pairs closer than ``dhat`` at ``x`` (N, 3); whether there are any."""
        if not self._covers(x):  # (moved out of the step's room: found again around x)
            self.begin(x, self.room)
        self.collisions.build(self.candidates, self.mesh, self._full(x), self.dhat)
        return not self.collisions.empty()

    def barrier_terms(self, x: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """The barrier's gradient (N, 3) and Hessian (3N, 3N; projected to be positive
        semi-definite) over the cloth's vertices at ``x``, for the pairs ``active`` found."""
        full = self._full(x)
        g = np.asarray(self.barrier.gradient(self.collisions, self.mesh, full)).reshape(-1, 3)
        H = self.barrier.hessian(self.collisions, self.mesh, full, self.psd)
        k = 3 * self.n
        return g[:self.n], sp.csr_matrix(H)[:k, :k]

    def stepsize(self, x: np.ndarray, z: np.ndarray) -> float:
        """The largest share of the straight move from ``x`` to ``z`` (N, 3) that keeps every
        two elements at least MIN_GAP x ``dhat`` apart (continuous collision detection)."""
        if self._covers(x, z):
            return float(self.candidates.compute_collision_free_stepsize(
                self.mesh, self._full(x), self._full(z), min_distance=MIN_GAP * self.dhat))
        return float(self.ipctk.compute_collision_free_stepsize(
            self.mesh, self._full(x), self._full(z), min_distance=MIN_GAP * self.dhat,
            broad_phase=self.broad))

    def intersecting(self, x: np.ndarray) -> bool:
        """Whether any two of the mesh's elements intersect at ``x`` (N, 3)."""
        return bool(self.ipctk.has_intersections(self.mesh, self._full(x)))


def _apart(v: np.ndarray, f: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The obstacle's faces ``f`` less those nearest the cloth's attached ``points`` (P, 3):
    the cloth is held there, lying on them, not meeting them."""
    if not len(points):
        return f
    import igl

    _, near, _ = igl.point_mesh_squared_distance(np.ascontiguousarray(points, np.float64),
                                                 np.ascontiguousarray(v, np.float64),
                                                 np.ascontiguousarray(f, np.int64))
    keep = np.ones(len(f), bool)
    keep[np.asarray(near, np.int64)] = False
    return f[keep]
