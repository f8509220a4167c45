"""Running a scene in MuJoCo: start state, forces over time, frames, energy, stability checks."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import UsageError
from ..extras import require
from ..meshing.lattice import carry_weights
from ..scenario.conditions import select_region
from ..scenario.mass import AIR_DENSITY, DRAG, closed_volume
from .scene import SceneSpec, build_xml, from_mj, to_mj

ENGINE_WARNINGS: list[str] = []  # what MuJoCo warned about in this process (kept short)


def _keep_warning(text: str) -> None:
    if len(ENGINE_WARNINGS) < 100:
        ENGINE_WARNINGS.append(" ".join(text.split()))


def _mujoco():
    mujoco = require("mujoco", "sim")
    # collect warnings instead of letting MuJoCo print them and write MUJOCO_LOG.TXT here
    mujoco.set_mju_user_warning(_keep_warning)
    return mujoco


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    """MuJoCo's fatal errors (out of memory, bad model) as one-line user errors."""
    mujoco = require("mujoco", "sim")

    try:
        yield
    except mujoco.FatalError as e:
        raise UsageError(f"the physics engine failed: {' '.join(str(e).split())[:300]}; "
                         "simulate fewer vertices («max vertices»)") from e


@dataclass
class SimResult:
    """Surface trajectories of one run (metres, +Y up) and what the run measured."""

    frames: np.ndarray  # (T, N, 3) vertex positions at times
    times: np.ndarray  # (T,) seconds
    kinetic: np.ndarray  # (T,) J
    potential: np.ndarray  # (T,) gravitational potential, J
    work: np.ndarray  # (T,) work done by wind and pushes so far, J
    rejected: str | None = None  # why the run is unusable, or None
    stats: dict = field(default_factory=dict)


class Simulation:
    """A compiled scene, ready to run."""

    def __init__(self, spec: SceneSpec):
        mj = _mujoco()
        self.mj, self.spec = mj, spec
        self.xml = build_xml(spec)
        try:
            self.model = mj.MjModel.from_xml_string(self.xml)
        except ValueError as e:
            raise UsageError(f"the physics engine refused the scene: {' '.join(str(e).split())}"
                             ) from e
        self.model.opt.enableflags |= mj.mjtEnableBit.mjENBL_ENERGY
        self.data = mj.MjData(self.model)
        with engine_errors():
            mj.mj_forward(self.model, self.data)
        self.n = len(spec.vertices)
        self._carry: sp.csr_matrix | None = None  # lattice: the surface from the flex's nodes
        if spec.dof == "lattice":
            self._carry = carry_weights(to_mj(spec.vertices), to_mj(spec.lattice_nodes),
                                        spec.lattice_spacing)
        self.jac = self._vertex_jacobian()  # (3N, nv): vertex velocity = jac @ qvel
        self.vertex_mass = spec.mass / self.n
        self._spread: sp.csr_matrix | None = None

    def vertices(self) -> np.ndarray:
        """(N, 3) current surface positions, +Y up (tet scenes drop their centre point)."""
        if self._carry is not None:
            return from_mj(self._carry @ self.data.flexvert_xpos[: self._carry.shape[1]])
        return from_mj(self.data.flexvert_xpos[: self.n])

    def _surface_mj(self) -> np.ndarray:
        """(N, 3) current surface positions in MuJoCo's frame."""
        if self._carry is None:
            return self.data.flexvert_xpos[: self.n]
        return to_mj(self.vertices())

    def _vertex_jacobian(self) -> sp.csr_matrix:
        """Vertex positions are linear in the joint positions for every dof type."""
        if self._carry is not None:  # the surface's velocity is the carried nodes' velocity
            nodes = self._direct_jacobian(self._carry.shape[1])
            return (sp.kron(self._carry, sp.identity(3)) @ nodes).tocsr()
        if self.spec.dof in ("full", "tet"):
            return self._direct_jacobian(self.n)
        return self._probed_jacobian()

    def _direct_jacobian(self, n: int) -> sp.csr_matrix:
        """One body per free flex vertex (the first ``n``), slide joints along the world axes."""
        m = self.model
        body = m.flex_vertbodyid[:n]
        free = np.flatnonzero(body > 0)
        adr = m.body_dofadr[body[free]]
        axes = m.jnt_axis[m.dof_jntid[adr[:, None] + np.arange(3)]]  # (k, 3, 3)
        rows = (3 * free[:, None, None] + np.arange(3)[None, None, :]).repeat(3, axis=1)
        cols = (adr[:, None, None] + np.arange(3)[None, :, None]).repeat(3, axis=2)
        return sp.csr_matrix((axes.reshape(-1), (rows.reshape(-1), cols.reshape(-1))),
                             shape=(3 * n, m.nv))

    def _probed_jacobian(self) -> sp.csr_matrix:
        """Interpolated dofs: probe each joint once (positions are linear in them)."""
        m, d, mj = self.model, self.data, self.mj
        base = d.flexvert_xpos[: self.n].reshape(-1).copy()
        qpos0 = d.qpos.copy()
        cols, rows, vals = [], [], []
        for k in range(m.nv):  # slide joints only: qpos and qvel share indices
            d.qpos[:] = qpos0
            d.qpos[k] += 1.0
            mj.mj_kinematics(m, d)
            mj.mj_flex(m, d)
            diff = d.flexvert_xpos[: self.n].reshape(-1) - base
            nz = np.flatnonzero(np.abs(diff) > 1e-9)
            rows.append(nz)
            cols.append(np.full(len(nz), k))
            vals.append(diff[nz])
        d.qpos[:] = qpos0
        mj.mj_forward(m, d)
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(3 * self.n, m.nv))

    def body_velocity_field(self, velocity: np.ndarray, spin: np.ndarray) -> None:
        """Start every moving point with the rigid velocity v + w x (p - c) (+Y up inputs)."""
        m, d = self.model, self.data
        v, w = to_mj(velocity), to_mj(spin)
        centre = self._surface_mj().mean(axis=0)
        for b in range(1, m.nbody):
            if m.body_jntnum[b] != 3:
                continue
            adr = m.body_dofadr[b]
            d.qvel[adr: adr + 3] = v + np.cross(w, d.xpos[b] - centre)
        self.mj.mj_forward(m, d)

    def kick(self, mask: np.ndarray, dv: np.ndarray) -> float:
        """Change the velocity of the vertices in ``mask`` by ``dv`` (+Y up, m/s) as an
        impulse through the generalized coordinates; returns the kinetic energy added (J)."""
        m, d = self.model, self.data
        f = np.zeros((self.n, 3))
        f[mask] = to_mj(dv) * self.vertex_mass
        p = self.jac.T @ f.reshape(-1)  # generalized impulse
        dq = np.zeros((1, m.nv))
        self.mj.mj_solveM(m, d, dq, p.reshape(1, -1))
        before = float(d.energy[1])
        d.qvel[:] += dq[0]
        self.mj.mj_forward(m, d)
        return float(d.energy[1]) - before

    def wind_force(self, wind_mj: np.ndarray, faces: np.ndarray, closed: bool) -> np.ndarray:
        """Generalized force (nv,) of air pressure on every triangle of the surface."""
        x = self._surface_mj()
        vel = (self.jac @ self.data.qvel).reshape(-1, 3)
        a, b, c = x[faces[:, 0]], x[faces[:, 1]], x[faces[:, 2]]
        cross = np.cross(b - a, c - a)
        area2 = np.linalg.norm(cross, axis=1, keepdims=True)
        normal = cross / np.maximum(area2, 1e-12)
        rel = wind_mj - vel[faces].mean(axis=1)
        vn = np.sum(rel * normal, axis=1, keepdims=True)
        if closed:  # only windward faces (normal against the wind) are pushed, inwards
            press = -np.minimum(vn, 0.0) ** 2
        else:  # a two-sided sheet is pushed along its normal either way
            press = vn * np.abs(vn)
        f_tri = 0.5 * AIR_DENSITY * DRAG * press * (0.5 * area2) * normal  # (F, 3)
        if self._spread is None or self._spread.shape[1] != len(faces):
            rows = faces.reshape(-1)
            cols = np.repeat(np.arange(len(faces)), 3)
            self._spread = sp.csr_matrix((np.full(len(rows), 1 / 3), (rows, cols)),
                                         shape=(self.n, len(faces)))  # triangle -> corners
        return self.jac.T @ (self._spread @ f_tri).reshape(-1)


def _check_frame(rest_extent: float, rest_volume: float | None, x: np.ndarray,
                 faces: np.ndarray, ground: bool) -> str | None:
    if not np.isfinite(x).all():
        return "nan"
    if np.ptp(x, axis=0).max() > 4.0 * rest_extent:
        return "blow-up"
    if ground and x[:, 1].min() < -0.25 * rest_extent:
        return "through-ground"
    if rest_volume:
        vol = closed_volume(x, faces)
        if not 0.2 * rest_volume < vol < 3.0 * rest_volume:
            return "volume-collapse"
    return None


def run(spec: SceneSpec, *, seconds: float, fps: float = 30.0, closed: bool = False,
        progress: Callable[[float], None] | None = None, still_air: bool = True) -> SimResult:
    """Simulate ``spec`` for ``seconds``; frames at ``fps``. Checks stability as it goes.

    ``closed`` marks a watertight solid (volume is watched, wind pushes its windward side).
    ``still_air``: air resists motion without wind too (the training corpus was made
    without it, and the data engine keeps it off so that the corpus rebuilds bit for bit).
    """
    if not (seconds > 0 and fps > 0):
        raise UsageError("«seconds» and «fps» must be positive")
    steps_per_frame = max(1, round(1.0 / (fps * spec.timestep)))
    spec.timestep = 1.0 / (fps * steps_per_frame)
    t0 = time.perf_counter()
    sim = Simulation(spec)
    cond, faces = spec.conditions, np.asarray(spec.faces, np.int64)
    d, mj, m = sim.data, sim.mj, sim.model
    sim.body_velocity_field(np.asarray(cond.velocity), np.asarray(cond.spin))
    rest = sim.vertices()
    rest_extent = float(np.ptp(rest, axis=0).max())
    rest_volume = closed_volume(rest, faces) if closed else None
    masks = [select_region(i.region, rest) for i in cond.impulses]
    pending = sorted(range(len(cond.impulses)), key=lambda i: cond.impulses[i].time)
    wind = to_mj(np.asarray(cond.wind, np.float64))
    air = still_air or bool(np.any(wind))
    n_frames = int(math.floor(seconds * fps + 1e-9)) + 1
    frames = np.empty((n_frames, sim.n, 3))
    kin, pot, work = (np.zeros(n_frames) for _ in range(3))
    frames[0], kin[0], pot[0] = rest, d.energy[1], d.energy[0]
    w_total, rejected, step = 0.0, None, 0
    for f in range(1, n_frames):
        for _ in range(steps_per_frame):
            t = step * spec.timestep
            while pending and cond.impulses[pending[0]].time <= t + 1e-12:
                i = pending.pop(0)
                w_total += sim.kick(masks[i], np.asarray(cond.impulses[i].velocity))
            if air:  # air resists the motion through it, with or without wind
                gust = 1.0 + cond.gust * math.sin(2 * math.pi * 0.7 * t)
                d.qfrc_applied[:] = sim.wind_force(wind * gust, faces, closed)
                w_total += float(d.qfrc_applied @ d.qvel) * spec.timestep
            with engine_errors():
                mj.mj_step(m, d)
            step += 1
        frames[f], kin[f], pot[f], work[f] = sim.vertices(), d.energy[1], d.energy[0], w_total
        rejected = _check_frame(rest_extent, rest_volume, frames[f], faces, cond.ground)
        if rejected:
            frames = frames[: f + 1]
            break
        if progress:
            progress(f / (n_frames - 1))
    t = len(frames)
    result = SimResult(frames=frames, times=np.arange(t) / fps, kinetic=kin[:t],
                       potential=pot[:t], work=work[:t], rejected=rejected,
                       stats={"wall_s": time.perf_counter() - t0, "steps": step, "nv": int(m.nv),
                              "timestep": spec.timestep, "vertices": sim.n})
    if result.rejected is None:
        result.rejected = energy_gain(result, spec.mass, rest_extent)
    return result


def energy_gain(result: SimResult, mass: float, extent: float) -> str | None:
    """'energy-gain' when kinetic + gravitational energy exceeds what the start and the
    external work can supply (elastic energy starts at zero: the run starts at rest shape)."""
    total = result.kinetic + result.potential
    budget = total[0] + result.work
    g = 9.81
    scale = mass * g * extent + abs(result.kinetic[0]) + np.abs(result.work).max() + 1e-9
    return "energy-gain" if (total - budget).max() > 0.25 * scale else None
