"""Latent motion of one object from arrays: the part of ``neurok animate`` between loading and
exporting, shared with calibration and evaluation (docs/design.md, "Data flow").

encode (prior, active subspace) -> fit the decoder at the dynamics points (ReducedShape)
-> masses, springs, pins, forces -> integrate the latent ODE -> decode every frame at the
driving points -> keep their edge strain within the material's limit -> vertices, in the
physical frame (metres, +Y up, ground at y = 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...data.geometry import face_normals, sample_surface, vertex_areas
from ...errors import UsageError
from ...model import (
    NeurokModel,
    Prior,
    Subspace,
    active_subspace,
    drive,
    farthest_point_sample,
    knn_weights,
)
from ...model.bending import bending_derivatives, bending_modes
from ...model.dynamics.bodies import Body, Environment
from ...model.dynamics.equations import LatentDynamics
from ...model.dynamics.rollout import Event, Rollout, rollout
from ...model.reduced import Fit, ReducedShape, fit_quadratic, linear_modes
from ...model.rigid import infinitesimal_rotations
from ...model.skinning import point_neighbours, smooth_weights
from ...model.threads import CpuWindow, one_thread_on, torch_threads
from ...model.volume import VolumeTerm
from ...scenario.conditions import pinned_by
from ...scenario.mass import AIR_DENSITY, DRAG, total_mass
from ...scenario.spec import Motion, MotionConfig
from .body import (
    beam_centreline,
    holds_frame,
    knn_edges,
    nearest_index,
    pin_joint,
    region_points,
    rigid_part,
    vertex_normals,
)
from .decode import decode_frames

PENETRATION = 0.003  # contact and pin springs: sag of a point carrying 16x its share, x size
SPRING_NEIGHBOURS = 8  # elastic graph: each dynamics point to its nearest ones
PIN_POINTS = 16  # dynamics points added inside pinned regions and along the underside
BOTTOM = 0.05  # the underside: vertices within this fraction of the height of the lowest
DECODE_CHUNK = 64  # latents per decoder call
WEAK_MODE = 0.05  # reduced directions keep singular values >= this x the largest


def reduced_subspace(model: NeurokModel, prior, query: torch.Tensor, k: int) -> Subspace:
    """The directions the dynamics integrate for one object: the decoder Jacobian's leading
    ``k`` singular directions at the prior mean over ``query`` (1, Q, 3), less those that
    barely move the surface (they carry little mass and no shape)."""
    sub = active_subspace(model, prior, query, min(k, model.cfg.latent_dim))
    sv = sub.singular_values
    k_q = max(1, int((sv >= WEAK_MODE * sv[0]).sum()))
    return Subspace(sub.basis[:, :k_q], sub.origin, sv[:k_q])


def encode_object(model: NeurokModel, vc: np.ndarray, faces: np.ndarray, seed: int
                  ) -> tuple[Prior, np.ndarray, np.ndarray, np.ndarray]:
    """The instance prior of a surface in canonical units (vc (N, 3), faces (F, 3)) from
    ``model.cfg.n_points`` samples drawn with ``seed``: animate and fit share it, so that
    the same asset and seed give the same latent space. Returns the prior and the samples'
    points (P, 3), faces (P,) and barycentric weights (P, 3)."""
    dev = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    rng = np.random.default_rng(seed)
    pts, fidx, bary = sample_surface(vc, faces, model.cfg.n_points, rng)
    nrm = face_normals(vc, faces)[fidx]
    as_t = lambda a: torch.as_tensor(np.asarray(a), dtype=dtype, device=dev)[None]  # noqa: E731
    with torch.no_grad():
        prior = model.encode_prior(as_t(pts), as_t(nrm))
    return prior, pts, fidx, bary


@dataclass
class _Object:
    """One object as the stages of :func:`latent_motion` share it (metres, +Y up)."""

    v: np.ndarray  # (N, 3) vertices where the motion starts
    faces: np.ndarray  # (F, 3)
    vc: np.ndarray  # (N, 3) canonical: centred on the bounding box, largest extent 1
    size: float  # largest extent, m
    pinned: np.ndarray  # (N,) bool: vertices the pins hold
    dyn_idx: np.ndarray  # (Q,) vertices that are dynamics points
    query_idx: np.ndarray  # (Qall,) vertices the decoder is asked at (dynamics points too)
    dyn_in_query: np.ndarray  # (Q,) where each dynamics point is among the query points
    mass: np.ndarray | None = None  # (Q,) lumped masses, kg (see _weigh)
    share: np.ndarray | None = None  # (Q,) surface area each point stands for, m^2
    owner: np.ndarray | None = None  # (N,) each vertex's nearest dynamics point
    mass_total: float = 0.0
    com: np.ndarray | None = None  # (3,) centre of mass at rest, m
    rest_body: np.ndarray | None = None  # (Q, 3) dynamics points about the centre of mass
    normals: np.ndarray | None = None  # (Q, 3) outward unit normals at the dynamics points
    clamped: bool = False  # the pins hold the frame (see holds_frame)


def latent_motion(model: NeurokModel, vertices: np.ndarray, faces: np.ndarray,
                  cfg: MotionConfig, *,
                  progress: Callable[[int, int], None] | None = None,
                  decoded: Callable[[int, int], None] | None = None) -> Motion:
    """Move ``vertices`` (N, 3) (metres, +Y up, where they start; the ground is y = 0);
    ``progress(done, total)`` is called after each integrated frame, ``decoded(done,
    total)`` after each block of decoded frames."""
    if cfg.category not in ("soft", "cloth", "beam"):
        raise UsageError(f"unknown material category {cfg.category!r}")
    if not (cfg.seconds > 0 and cfg.fps > 0 and cfg.samples >= 1):
        raise UsageError("seconds, fps and samples must be positive")
    clock = {"start": time.perf_counter()}
    window = CpuWindow()  # what other processes leave of the cores, up to the decoding
    device = next(model.parameters()).device
    obj = _sample(np.asarray(vertices, np.float64), np.asarray(faces, np.int64), cfg,
                  model.cfg.n_query)
    with one_thread_on(device):  # ~1k points a call:
        # threads gain little, and lose much where another process holds a core
        prior, sub = _encode(model, obj, cfg)
        clock["encode"] = time.perf_counter()
        _weigh(obj, cfg)
        gen = torch.Generator().manual_seed(cfg.seed)  # the fit's samples, then the draws
        fit, decode, edges, k_edge = _shape_map(model, prior, sub, obj, cfg, gen)
    clock["fit"] = time.perf_counter()
    body, pins = _body(obj, fit, edges, k_edge, cfg)
    dyn = LatentDynamics(body, _environment(obj.size, cfg), samples=cfg.samples)
    roll = _integrate(dyn, obj, sub, model.cfg.latent_dim, cfg, gen, progress)
    clock["integrate"] = time.perf_counter()
    with torch_threads(window.spare_threads() if device.type == "cpu"
                       else torch.get_num_threads()):
        frames, residual, sweeps, lowest = decode_frames(
            roll, decode, fit.shape, obj, cfg.strain_limit, decoded,
            ground=cfg.conditions.ground)
    sunk = max(-lowest, 0.0) / obj.size if cfg.conditions.ground else 0.0
    clock["decode"] = time.perf_counter()
    stats = {"vertices": len(obj.v), "driving_points": len(obj.query_idx),
             "dynamics_points": len(obj.dyn_idx), "latent_dims": model.cfg.latent_dim,
             "reduced_dims": fit.shape.dims, "springs": len(edges),
             "mass_kg": obj.mass_total, "size_m": obj.size, "fit_residual": fit.residual,
             "run_residual": residual, "strain_limit": cfg.strain_limit,
             "strain_sweeps": sweeps, "steps": roll.steps,
             "step_s": cfg.seconds / max(roll.steps, 1),
             # how close the motion came to the edge of the fitted latent region (1 = on it)
             "latent_peak": float(roll.q.abs().max()) / body.q_radius,
             "lifted": sunk,  # deepest vertex lifted onto the ground, fraction of the size
             # pinned vertices, dynamics points, and how they hold: clamp, or Joint.hold
             "pins": pins,
             "singular_values": sub.singular_values.tolist(),
             "time": {name: clock[name] - clock[prev] for prev, name in
                      zip(["start", "encode", "fit", "integrate"],
                          ["encode", "fit", "integrate", "decode"])}}
    energy = {k: t.numpy() for k, t in roll.energy.items()}
    return Motion(frames=frames, energy=energy, stats=stats)


def _sample(v: np.ndarray, faces: np.ndarray, cfg: MotionConfig, n_query: int) -> _Object:
    """Where the object is sampled: the decoder's query points (farthest-point samples of
    the surface), the dynamics points among them, and extra points where forces
    concentrate: inside pinned regions, and along the underside (the spread-out samples
    can sit a few % above the lowest vertices, and the object would rest on them with its
    true bottom in the ground)."""
    cond = cfg.conditions
    lo, hi = v.min(axis=0), v.max(axis=0)
    size = float((hi - lo).max())
    vc = (v - (lo + hi) / 2.0) / size
    pinned = pinned_by(cond.pins, v)
    drive_idx = farthest_point_sample(vc, min(n_query, len(v)), generator=cfg.seed).numpy()
    special = []
    if pinned.any():
        special.append(np.flatnonzero(pinned))
    if cond.ground:
        height = v[:, 1] - v[:, 1].min()
        special.append(np.flatnonzero(height <= BOTTOM * np.ptp(v[:, 1])))
    extra = np.zeros(0, np.int64)
    for idx in special:
        pick = farthest_point_sample(vc[idx], min(PIN_POINTS, len(idx)),
                                     generator=cfg.seed).numpy()
        extra = np.union1d(extra, idx[pick])
    extra = np.setdiff1d(extra, drive_idx[: cfg.dynamics_points])
    dyn_idx = np.concatenate([drive_idx[: cfg.dynamics_points], extra])
    query_idx = np.concatenate([drive_idx, np.setdiff1d(extra, drive_idx)])
    pos_in_query = {int(j): i for i, j in enumerate(query_idx)}
    return _Object(v=v, faces=faces, vc=vc, size=size, pinned=pinned, dyn_idx=dyn_idx,
                   query_idx=query_idx,
                   dyn_in_query=np.array([pos_in_query[int(j)] for j in dyn_idx]))


def _encode(model: NeurokModel, obj: _Object, cfg: MotionConfig) -> tuple[Prior, Subspace]:
    """The instance prior and the reduced directions at the query points."""
    prior, *_ = encode_object(model, obj.vc, obj.faces, cfg.seed)
    with torch.no_grad():
        sub = reduced_subspace(model, prior, _query(model, obj), cfg.subspace)
    return prior, sub


def _query(model: NeurokModel, obj: _Object) -> torch.Tensor:
    """The query points (1, Qall, 3), canonical, in the model's dtype and device."""
    p = next(model.parameters())
    return torch.as_tensor(obj.vc[obj.query_idx], dtype=p.dtype, device=p.device)[None]


def _weigh(obj: _Object, cfg: MotionConfig) -> None:
    """Lumped masses (each dynamics point carries the surface nearest it), the centre of
    mass and the body frame, and whether the pins clamp the frame."""
    v, faces = obj.v, obj.faces
    dyn_rest = v[obj.dyn_idx]
    obj.owner = nearest_index(v, dyn_rest)
    share = np.bincount(obj.owner, weights=vertex_areas(v, faces), minlength=len(dyn_rest))
    obj.share = np.maximum(share, 1e-6 * share.sum() / len(share))
    obj.mass_total = total_mass(v, faces, cfg.category, cfg.material)
    obj.mass = obj.mass_total * obj.share / obj.share.sum()
    obj.com = (obj.mass[:, None] * dyn_rest).sum(0) / obj.mass_total
    obj.rest_body = dyn_rest - obj.com
    obj.normals = vertex_normals(v, faces)[obj.dyn_idx]
    obj.clamped = holds_frame(cfg.category, obj.rest_body[obj.pinned[obj.dyn_idx]])


def _decoder(model: NeurokModel, prior: Prior, sub: Subspace, obj: _Object
             ) -> Callable[[torch.Tensor, np.ndarray], torch.Tensor]:
    """displacement(q, at): reduced coordinates q (S, k_q) -> decoded displacement
    (S, len(at), 3) in metres at the query points ``at`` (indices into the query points;
    they must include the dynamics points), with the rigid part (measured at the dynamics
    points, or at the clamped ones; see rigid_part) removed. With a rigid head, followed
    by each point's rotation vector, that part's turn taken off too: (S, len(at), 6)."""
    p = next(model.parameters())
    query = _query(model, obj)
    rest_t = torch.as_tensor(obj.rest_body)
    mass_t = torch.as_tensor(obj.mass)
    ref = np.flatnonzero(obj.pinned[obj.dyn_idx]) if obj.clamped else \
        np.arange(len(obj.dyn_idx))

    def displacement(q: torch.Tensor, at: np.ndarray) -> torch.Tensor:
        outs = []
        pts = query[:, torch.as_tensor(at, device=p.device)]
        for chunk in q.split(DECODE_CHUNK):
            z = sub.to_latent(chunk.to(dtype=p.dtype, device=p.device))
            with torch.no_grad():
                d = model.relative_samples(z, prior, pts).to(torch.float64).cpu()
            outs.append(torch.cat([d[..., :3] * obj.size, d[..., 3:]], -1))
        out = torch.cat(outs)
        d = out[..., :3]
        where = {int(j): i for i, j in enumerate(at)}
        ref_at = [where[int(j)] for j in obj.dyn_in_query[ref]]
        t, w, centre = rigid_part(d[:, ref_at], rest_t[ref], mass_t[ref])
        arm = torch.as_tensor(obj.v[obj.query_idx[at]] - obj.com) - centre
        d = d - t[:, None] - torch.cross(w[:, None].expand(-1, len(at), 3),
                                         arm.expand(len(d), -1, -1), dim=-1)
        if out.shape[-1] == 3:
            return d
        return torch.cat([d, out[..., 3:] - w[:, None]], -1)

    return displacement


def _shape_map(model: NeurokModel, prior: Prior, sub: Subspace, obj: _Object,
               cfg: MotionConfig, gen: torch.Generator):
    """The dynamics points' positions as a quadratic map of the reduced coordinates
    (ReducedShape), the decoded displacement at every query point, and the spring graph
    (edges (E, 2), one stiffness, N/m) sized so that it stores the material's energy."""
    rest, k_q = obj.rest_body, sub.basis.shape[1]
    edges = knn_edges(rest, SPRING_NEIGHBOURS)
    length = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)
    volume = obj.mass_total / cfg.material.density
    k_edge = cfg.stiffness * cfg.material.young * volume / float((length**2).sum())
    if cfg.basis == "decoder":
        displacement = _decoder(model, prior, sub, obj)
        fit = fit_quadratic(lambda q: displacement(q, obj.dyn_in_query)[..., :3],
                            torch.as_tensor(rest), k_q, radius=cfg.fit_radius, generator=gen)
        everywhere = np.arange(len(obj.query_idx))
        decode = lambda q: displacement(q, everywhere)  # noqa: E731
    elif cfg.basis == "linear-modes":
        fit, decode = _modes_fit(torch.as_tensor(rest), torch.as_tensor(obj.mass), edges,
                                 k_edge, k_q, obj.pinned[obj.dyn_idx], obj.clamped, obj.vc,
                                 obj.dyn_idx, obj.query_idx)
    else:
        raise UsageError(f"unknown basis {cfg.basis!r}; choose decoder or linear-modes")
    if cfg.category == "cloth" and cfg.bends:
        fit, decode = _with_bends(fit, decode, cfg.bends, obj, edges)
    return fit, decode, edges, k_edge


def _body(obj: _Object, fit: Fit, edges: np.ndarray, k_edge: float, cfg: MotionConfig
          ) -> tuple[Body, dict | None]:
    """The body the dynamics move, and how its pins hold (None without pins)."""
    f64 = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64)  # noqa: E731
    pinned = obj.pinned[obj.dyn_idx]
    joint = pin_joint(obj.rest_body[pinned], obj.size) \
        if cfg.category == "cloth" and not obj.clamped else None
    pins = {"vertices": int(obj.pinned.sum()), "points": int(pinned.sum()),
            "hold": "clamp" if obj.clamped else joint.hold if joint else "springs"} \
        if cfg.conditions.pins else None
    young = cfg.stiffness * cfg.material.young
    body = Body(shape=fit.shape, mass=f64(obj.mass),
                normals=f64(obj.normals),
                areas=f64(obj.share), edges=torch.as_tensor(edges),
                stiffness=torch.full((len(edges),), k_edge, dtype=torch.float64),
                pinned=torch.as_tensor(pinned), centre=f64(obj.com),
                closed=cfg.category != "cloth", clamped=obj.clamped,
                centreline=beam_centreline(obj.rest_body, obj.mass, young,
                                           obj.mass_total / cfg.material.density, edges,
                                           k_edge) if cfg.category == "beam" else None,
                pin_offset=f64(joint.offset) if joint else None,
                # a soft solid's bulk; a beam's slender proxy volume would turn every bend
                # into a stiff, unstable volume change (a rubber rod blew up at 0.3 s)
                volume=_volume_term(obj.owner, obj.faces, obj.rest_body, cfg)
                if cfg.category == "soft" else None)
    return body, pins


def _environment(size: float, cfg: MotionConfig) -> Environment:
    """Forces and contact: contact and pin springs let a point carrying 16x its share sag
    PENETRATION x the size."""
    cond = cfg.conditions
    g = max(float(np.linalg.norm(cond.gravity)), 9.81)
    rate = float(np.sqrt(16.0 * g / (PENETRATION * size)))
    return Environment(gravity=tuple(cond.gravity), ground=cond.ground,
                       friction=cond.friction, wind=tuple(cond.wind), gust=cond.gust,
                       air_density=AIR_DENSITY, drag=DRAG, still_air=cfg.still_air,
                       contact_rate=rate, pin_rate=rate,
                       beta=cfg.material.damping * cfg.damping_scale)


def _integrate(dyn: LatentDynamics, obj: _Object, sub: Subspace, latent_dim: int,
               cfg: MotionConfig, gen: torch.Generator,
               progress: Callable[[int, int], None] | None = None) -> Rollout:
    """The start state (at rest, or the fitted one; further samples drawn around it) and
    the rollout through the frame times, pushes included."""
    f64 = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64)  # noqa: E731
    S, k_q, cond = cfg.samples, sub.basis.shape[1], cfg.conditions
    q0 = torch.zeros(S, dyn.k, dtype=torch.float64)  # the decoder's k_q first
    qd0 = torch.zeros(S, dyn.k, dtype=torch.float64)
    if S > 1:  # sample 0 is the motion of the conditions alone; the others vary around it
        draw = torch.randn(S - 1, 2, latent_dim, generator=gen, dtype=torch.float64)
        scale = cfg.diversity if cfg.diversity is not None else (
            0.5 if cfg.spread is None else 1.0)
        if cfg.spread is not None:
            draw = draw @ cfg.spread.to(torch.float64).cpu().T
        basis = sub.basis.to(torch.float64).cpu()
        q0[1:, :k_q] = scale * draw[:, 0] @ basis
        qd0[1:, :k_q] = scale * max(dyn.elastic_rate(), 1.0) * draw[:, 1] @ basis
    st = cfg.start
    if st is not None:  # every sample starts from the fitted state (and varies)
        q0[:, :k_q] += sub.to_reduced(f64(st.z).to(sub.origin)).to(torch.float64).cpu()
        qd0[:, :k_q] += (f64(st.z_dot).to(sub.basis) @ sub.basis).to(torch.float64).cpu()
        dyn.R_ref = f64(st.rotation).expand(S, 3, 3).clone()
    y0 = dyn.initial_state(q0, qd0, f64(cond.velocity), f64(cond.spin))
    if st is not None:  # com + r + R (x - com) = R x + translation
        y0[:, :3] = f64(st.rotation) @ f64(obj.com) + f64(st.translation) - f64(obj.com)
    events = [Event(time=imp.time, mask=torch.as_tensor(np.isin(
                  np.arange(len(obj.dyn_idx)), region_points(imp.region, obj.v,
                                                              obj.dyn_idx))),
                  dv=f64(imp.velocity)) for imp in cond.impulses]
    n_frames = int(np.floor(cfg.seconds * cfg.fps + 1e-9)) + 1
    times = torch.arange(n_frames, dtype=torch.float64) / cfg.fps
    return rollout(dyn, y0, times, events=events, method=cfg.method, progress=progress)


def _volume_term(owner: np.ndarray, faces: np.ndarray, rest: np.ndarray, cfg: MotionConfig
                 ) -> VolumeTerm | None:
    """The bulk resistance of a solid over its dynamics points (see model/volume.py): what
    the material's bulk modulus K = E / (3 (1 - 2ν)) asks beyond what the springs give.
    The springs store ½ E ε² per unit volume under a uniform stretch ε (see _shape_map),
    i.e. a dilation's ½ (E / 9) (3ε)²: a bulk modulus of E / 9."""
    mat = cfg.material
    young = cfg.stiffness * mat.young
    bulk = young / (3.0 * (1.0 - 2.0 * mat.poisson)) - young / 9.0
    return VolumeTerm.build(torch.as_tensor(owner), torch.as_tensor(faces),
                            torch.as_tensor(rest, dtype=torch.float64), bulk)


def _with_bends(fit: Fit, displacement_all, m: int, obj: _Object, edges: np.ndarray):
    """The decoder's fit and decoded displacements with ``m`` bending modes of the sheet
    appended as further coordinates (see model/bending.py), each pair with the second-order
    pull that keeps the spring graph's ``edges`` at their lengths: exact at the dynamics
    points, carried to the other driving points by smooth weights."""
    v, dyn_idx, query_idx = obj.v, obj.dyn_idx, obj.query_idx
    modes = bending_modes(obj.rest_body, obj.normals, obj.mass, m)  # (Q, 3, m)
    m = modes.shape[-1]
    if m == 0:
        return fit, displacement_all
    pull = bending_derivatives(obj.rest_body, modes, edges)  # (Q, 3, m, m)
    shape, k = fit.shape, fit.shape.dims
    Q = shape.rest.shape[0]
    quadratic = torch.zeros(Q, 3, k + m, k + m, dtype=torch.float64)
    quadratic[..., :k, :k] = shape.quadratic
    quadratic[..., k:, k:] = pull
    bent = ReducedShape(shape.rest, torch.cat([shape.linear, modes], -1), quadratic)
    idx, w = smooth_weights(torch.as_tensor(v[query_idx]), torch.as_tensor(v[dyn_idx]))
    fields = torch.cat([modes, pull.reshape(Q, 3, m * m)], -1).permute(2, 0, 1)
    carried = drive(fields, idx, w)  # (m + m m, Qall, 3)
    carried[:, torch.as_tensor(obj.dyn_in_query)] = fields

    rest_q = torch.as_tensor(v[query_idx])  # a rigid head's rotations: the modes' own,
    turned = infinitesimal_rotations(rest_q, carried[:m], point_neighbours(rest_q))  # 1st order

    def displacement(q: torch.Tensor) -> torch.Tensor:
        b = q[:, k:]
        terms = torch.cat([b, 0.5 * (b[:, :, None] * b[:, None, :]).reshape(len(q), m * m)],
                          -1)
        out = displacement_all(q[:, :k])
        bent = out[..., :3] + torch.einsum("sm,mpi->spi", terms, carried)
        if out.shape[-1] == 3:
            return bent
        return torch.cat([bent, out[..., 3:] + torch.einsum("sm,mpi->spi", b, turned)], -1)

    return Fit(bent, fit.residual), displacement


def _modes_fit(rest, mass, edges, k_edge, k_q, pinned, clamped, vc, dyn_idx, query_idx):
    """The linear-modes baseline in place of the decoder fit: modes of the spring network
    at the dynamics points, carried to the other driving points by their nearest ones."""
    shape = linear_modes(rest, mass, torch.as_tensor(edges), torch.full(
        (len(edges),), k_edge, dtype=torch.float64), k_q,
        fixed=torch.as_tensor(pinned) if clamped else None)
    idx, w = knn_weights(vc[query_idx], vc[dyn_idx], k=4)
    modes = drive(shape.linear.permute(2, 0, 1), idx, w.to(torch.float64))  # (k, Qall, 3)

    def displacement_all(q: torch.Tensor) -> torch.Tensor:
        return torch.einsum("sk,kpi->spi", q, modes)

    return Fit(shape, 0.0), displacement_all
