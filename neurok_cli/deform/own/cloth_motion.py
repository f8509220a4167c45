"""Cloth in the object's own space (docs/design.md, "Cloth on its own simulation mesh"): a
thin sheet moves on a simulation mesh of its own, per-vertex coordinates, with fabric's
energy, implicit projective-dynamics steps and intersection-free contact.

The simulation mesh is the cloth's own triangles up to SIM_VERTICES, else a clustered copy
(``meshing/proxy.py``) whose motion is carried to every vertex, each turning with it. Closed
parts held entirely by pins (a flag's pole) are fixed obstacles the cloth meets, not cloth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ...meshing.proxy import Proxy, make_proxy
from ...scenario.conditions import SimMaterial, pinned_by, select_region
from ...scenario.mass import total_mass
from ...scenario.spec import Motion, MotionConfig
from .air import AIR
from .cloth_contact import ClothContact
from .cloth_model import describe_cloth
from .cloth_step import ClothStep
from .fabric import build_fabric, cotangent_laplacian
from .handles import mesh_edges

SIM_VERTICES = 2500  # a denser cloth moves on a clustered copy of about this many vertices
CLOTH_STEP = 1 / 30  # s: the longest step
STRAIN_LIMIT = (0.985, 1.01)  # a triangle's principal stretches stay within these
IN_PLANE = 200.0  # a fabric's in-plane stiffness over E t (when its material names none):
# woven cloth is hundreds of times stiffer in its plane than in bending's E t^3 / 12
DHAT = 0.1  # contact's reach: this x the simulation mesh's median edge
PUSH_WEIGHTS = 30.0  # the barrier's push at half its reach: this many vertices' weights
SAMPLE_ENERGY = 0.02  # --samples: each further start's kinetic energy, x weight x size
SAMPLE_MODES = 8  # ... over this many of the sheet's smoothest shapes, across it


def fabric_constants(material: SimMaterial, stiffness: float = 1.0) -> tuple[float, float]:
    """(in-plane stiffness N/m, bending rigidity N m) of a cloth material, scaled by
    ``stiffness``: its own ``stretch`` where it names one, else IN_PLANE x E t."""
    e, t = material.young * stiffness, material.thickness
    stretch = getattr(material, "stretch", None)
    stretch = IN_PLANE * e * t if stretch is None else stretch * stiffness
    return stretch, e * t ** 3 / (12 * (1 - material.poisson ** 2))


class _Sheet:
    """The cloth's part of a welded surface and the mesh it moves on."""

    def __init__(self, v: np.ndarray, f: np.ndarray, pinned: np.ndarray):
        n = len(v)
        label = connected_components(sp.coo_matrix(
            (np.ones(3 * len(f)), (np.repeat(f[:, 0], 3), f.reshape(-1))), shape=(n, n)),
            directed=False)[1]
        edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, count = np.unique(edges, axis=0, return_counts=True)
        uniq = np.unique(edges, axis=0)
        open_vertex = np.zeros(n, bool)
        open_vertex[uniq[count == 1].reshape(-1)] = True
        fixed = np.zeros(n, bool)  # closed parts a pin holds: fixed obstacles
        for c in np.unique(label):
            part = label == c
            if not open_vertex[part].any() and pinned[part].any():
                fixed |= part
        if fixed.all():
            fixed[:] = False
        pinned = pinned | (~fixed & _attached(v, f, fixed))
        self.cloth = np.flatnonzero(~fixed)
        self.fixed = np.flatnonzero(fixed)
        keep = ~fixed[f].any(axis=1)
        remap = np.full(n, -1)
        remap[self.cloth] = np.arange(len(self.cloth))
        self.faces = remap[f[keep]]
        cloth_v = v[self.cloth]
        self.obstacle = None
        if len(self.fixed):
            back = np.full(n, -1)
            back[self.fixed] = np.arange(len(self.fixed))
            self.obstacle = (v[self.fixed], back[f[~keep]])
        self.proxy: Proxy | None = None
        if len(cloth_v) > SIM_VERTICES:
            self.proxy = make_proxy(cloth_v, self.faces, SIM_VERTICES, collapse=True)
            self.rest, self.sim_faces = self.proxy.vertices, self.proxy.faces
            held = np.zeros(len(self.rest), bool)
            held[self.proxy.neighbours[pinned[self.cloth], 0]] = True
            self.pinned = held
        else:
            self.rest, self.sim_faces = cloth_v, self.faces
            self.pinned = pinned[self.cloth]
        self.cloth_rest = cloth_v

    def to_sim(self, mask: np.ndarray) -> np.ndarray:
        """A mask over the welded surface's vertices (N,) -> over the simulation mesh's."""
        inside = mask[self.cloth]
        if self.proxy is None:
            return inside
        out = np.zeros(len(self.rest), bool)
        out[self.proxy.neighbours[inside, 0]] = True
        return out

    def start(self, positions: np.ndarray, velocities: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """A fitted start on the welded surface ((N, 3) positions and velocities) -> the
        simulation mesh's: a clustered copy's vertex takes its cluster's mean motion."""
        x, v = positions[self.cloth], velocities[self.cloth]
        if self.proxy is None:
            return x.copy(), v.copy()
        near = self.proxy.neighbours[:, 0]
        count = np.maximum(np.bincount(near, minlength=len(self.rest)), 1)[:, None]
        out = []
        for field in (x - self.cloth_rest, v):
            total = np.zeros_like(self.rest)
            np.add.at(total, near, field)
            out.append(total / count)
        return self.rest + out[0], out[1]

    def frames(self, sim: np.ndarray, v: np.ndarray) -> np.ndarray:
        """(T, M, 3) simulation frames -> (T, N, 3) the welded surface's."""
        out = np.broadcast_to(v, (len(sim), *v.shape)).copy()
        out[:, self.cloth] = sim if self.proxy is None else self.proxy.carry(sim,
                                                                             self.cloth_rest)
        return out


def _attached(v: np.ndarray, f: np.ndarray, fixed: np.ndarray, reach: float = 0.5
              ) -> np.ndarray:
    """(N,) the vertices inside the fixed parts or within ``reach`` x the cloth's median
    edge of them: where the cloth is attached (a flag's edge on its pole)."""
    if not fixed.any():
        return np.zeros(len(v), bool)
    import igl

    ob = f[fixed[f].all(axis=1)]
    edges = mesh_edges(f[~fixed[f].any(axis=1)])
    step = float(np.median(np.linalg.norm(v[edges[:, 0]] - v[edges[:, 1]], axis=1))) \
        if len(edges) else 0.0
    V, F = np.ascontiguousarray(v, np.float64), np.ascontiguousarray(ob, np.int64)
    dist = np.sqrt(igl.point_mesh_squared_distance(V, V, F)[0])
    inside = igl.fast_winding_number(V, F, V) > 0.5
    return inside | (dist < reach * step)


def cloth_motion(vertices: np.ndarray, faces: np.ndarray, cfg: MotionConfig, *,
                 progress: Callable[[int, int], None] | None = None) -> Motion:
    """Move the sheet ``vertices`` (N, 3) (metres, +Y up, where they start; the ground is
    y = 0) as fabric; ``progress(done, total)`` after each frame."""
    clock = {"start": time.perf_counter()}
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    cond = cfg.conditions
    pinned = pinned_by(cond.pins, v) if cond.pins else np.zeros(len(v), bool)
    sheet = _Sheet(v, f, pinned)
    mass_total = total_mass(v[sheet.cloth], sheet.faces, "cloth", cfg.material)
    stretch, rigidity = fabric_constants(cfg.material, cfg.stiffness)
    fabric = build_fabric(sheet.rest, sheet.sim_faces, stretch, rigidity, STRAIN_LIMIT)
    _, area = cotangent_laplacian(sheet.rest, fabric.faces)
    mass = mass_total * np.maximum(area, 1e-12 * area.max()) / area.sum()
    sub = max(1, math.ceil(1.0 / (cfg.fps * CLOTH_STEP)))
    h = 1.0 / (cfg.fps * sub)
    size = float(np.ptp(v, axis=0).max())
    edge = mesh_edges(fabric.faces)
    edge_len = float(np.median(np.linalg.norm(sheet.rest[edge[:, 0]] - sheet.rest[edge[:, 1]],
                                              axis=1)))
    reach = DHAT * edge_len
    g = np.asarray(cond.gravity, np.float64)
    contact = ClothContact(sheet.rest, fabric.faces, dhat=reach, obstacles=sheet.obstacle,
                           attached=sheet.pinned, ground=cond.ground,
                           push=PUSH_WEIGHTS * float(mass.mean()) * max(
                               float(np.linalg.norm(g)), 9.81))
    stepper = ClothStep(fabric, mass, sheet.pinned, h, gravity=g, wind=cond.wind,
                        gust=cond.gust, air=AIR if cfg.still_air or any(cond.wind) else 0.0,
                        friction=cond.friction if cond.ground else 0.0, contact=contact)
    clock["fit"] = time.perf_counter()
    x0, fitted = sheet.rest.copy(), 0.0
    if cond.ground:  # a sheet lying on the ground starts half the contact's reach above it
        x0[:, 1] += max(0.0, 0.5 * contact.dhat - float(x0[:, 1].min()))
    if cfg.begin is not None:  # a fitted start: its shape and velocities, conditions added
        x0, fitted = sheet.start(*cfg.begin)
    com = mass @ x0 / mass.sum()
    v0 = fitted + np.asarray(cond.velocity, np.float64)[None, :] + np.cross(
        np.asarray(cond.spin, np.float64)[None, :], x0 - com)
    v0[sheet.pinned] = 0.0
    pushes = [(p.time, sheet.to_sim(_region(p.region, v)), np.asarray(p.velocity, np.float64))
              for p in sorted(cond.impulses, key=lambda i: i.time)]
    n_frames = int(np.floor(cfg.seconds * cfg.fps + 1e-9)) + 1
    samples = max(int(cfg.samples), 1)
    starts = [v0] + [v0 + dv for dv in _sample_velocities(fabric, mass, sheet.pinned,
                                                          samples - 1, cfg.seed, size, g)]
    sim = np.empty((samples, n_frames, len(x0), 3))
    speeds = np.empty((n_frames, len(x0), 3))  # the first sample's velocities (the page's)
    energy = {k: np.zeros((n_frames, samples)) for k in
              ("kinetic", "potential", "dissipated", "work", "total")}
    for s, vs in enumerate(starts):
        done = None if progress is None else (
            lambda i, n, s=s: progress(s * n + i, samples * n))
        _integrate(stepper, x0.copy(), vs, sim[s], {k: e[:, s] for k, e in energy.items()},
                   list(pushes), sub, done, speeds if s == 0 else None)
    clock["integrate"] = time.perf_counter()
    frames = np.stack([sheet.frames(sim[s], v) for s in range(samples)])
    lowest = float(frames[:, :, :, 1].min()) if cond.ground else 0.0
    coords = 3 * len(stepper.free)
    stats = {"vertices": len(v), "driving_points": len(x0), "dynamics_points": len(x0),
             "latent_dims": coords, "reduced_dims": coords, "handles": 0,
             "coordinates": coords, "elements": len(fabric.faces), "solid": False,
             "springs": 0, "mass_kg": mass_total, "size_m": size, "fit_residual": 0.0,
             "run_residual": 0.0, "strain_limit": None, "strain_sweeps": 0,
             "steps": sub * (n_frames - 1) * samples, "step_s": h,
             "iterations": float(stepper.iterations), "latent_peak": 0.0,
             "lifted": max(-lowest, 0.0) / size, "simulation_vertices": len(x0),
             "pins": ({"vertices": int(pinned.sum()), "points": int(sheet.pinned.sum()),
                       "hold": "fixed"} if cond.pins else None),
             "singular_values": [],
             "time": {"encode": 0.0, "fit": clock["fit"] - clock["start"],
                      "integrate": clock["integrate"] - clock["fit"], "decode": 0.0}}
    model = describe_cloth(stepper, sheet, v, (sim[0], speeds), cfg.fps, sub, cond.ground)
    return Motion(frames=frames, energy=energy, stats=stats, model=model)


def _region(region: str, v: np.ndarray) -> np.ndarray:
    from ...errors import UsageError

    mask = select_region(region, v)
    if not mask.any():
        raise UsageError(f"region '{region}' selects no vertex of the mesh")
    return mask


def _integrate(stepper: ClothStep, x: np.ndarray, v: np.ndarray, frames: np.ndarray,
               energy: dict[str, np.ndarray], pushes: list, sub: int, progress,
               speeds: np.ndarray | None = None) -> None:
    """Step from ``x``, ``v`` (M, 3) through ``frames`` (T, M, 3), ``sub`` steps a frame,
    the ``pushes`` [(time, simulation vertices, velocity)] as they come; fills the frames,
    ``energy`` (each (T,)) and the velocities ``speeds`` (T, M, 3; None: not kept)."""
    h, work = stepper.h, 0.0
    stepper.restart()
    frames[0] = x
    if speeds is not None:
        speeds[0] = v
    _energies(stepper, x, v, energy, 0, work)
    for fi in range(1, frames.shape[0]):
        for s in range(sub):
            t = ((fi - 1) * sub + s) * h
            while pushes and pushes[0][0] <= t + 1e-12:
                _, where, dv = pushes.pop(0)
                v = v.copy()
                v[where & ~stepper.pinned] += dv
                stepper.restart()  # (the jump is no history: Euler again)
            x, v, fig = stepper.step(x, v, t)
            if not np.isfinite(x).all():
                raise FloatingPointError(f"the motion diverged at {t:.3f} s")
            work += fig["air_work"]
        frames[fi] = x
        if speeds is not None:
            speeds[fi] = v
        _energies(stepper, x, v, energy, fi, work)
        if progress is not None:
            progress(fi, frames.shape[0] - 1)


def _energies(stepper: ClothStep, x, v, energy, fi: int, work: float) -> None:
    """Frame ``fi``'s kinetic and potential energy (fabric, gravity) and the air's work; the
    total's fall is what the implicit steps and friction took."""
    kin = 0.5 * float(stepper.mass @ np.sum(v * v, axis=1))
    stretch, bend = stepper.fabric.energy(x)
    pot = stretch + bend - float(stepper.mass @ (x @ stepper.g))
    energy["kinetic"][fi] = kin
    energy["potential"][fi] = pot
    energy["work"][fi] = work
    energy["total"][fi] = kin + pot - work


def _sample_velocities(fabric, mass: np.ndarray, pinned: np.ndarray, count: int, seed: int,
                       size: float, g: np.ndarray) -> list[np.ndarray]:
    """``count`` velocity fields (M, 3) for ``--samples``: random mixes of the sheet's
    SAMPLE_MODES smoothest shapes (the Laplacian's lowest modes), across it, each holding
    SAMPLE_ENERGY x its weight's work over its size as kinetic energy."""
    if count <= 0:
        return []
    from scipy.linalg import eigh

    from .fabric import vertex_normals

    free = np.flatnonzero(~pinned)
    L = fabric.L[free][:, free].toarray()
    _, modes = eigh(L, np.diag(mass[free]))
    modes = modes[:, :SAMPLE_MODES + 1]
    normals = vertex_normals(fabric.rest, fabric.faces)[free]
    budget = SAMPLE_ENERGY * mass.sum() * max(float(np.linalg.norm(g)), 9.81) * size
    out = []
    for s in range(1, count + 1):
        a = np.random.default_rng([seed, 7, s]).standard_normal(modes.shape[1])
        dv = np.zeros((len(mass), 3))
        dv[free] = (modes @ a)[:, None] * normals
        kin = 0.5 * float(mass @ np.sum(dv * dv, axis=1))
        out.append(dv * math.sqrt(budget / max(kin, 1e-300)))
    return out
