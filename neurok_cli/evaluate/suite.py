"""What ``neurok eval`` measures over a dataset split (docs/design.md, "Model"), and the
calibration of the latent physics against the engine.

- inverse kinematics: fit z to a held-out deformed frame, decode, Chamfer-L1 over 10k surface
  samples each way (unit: the target's bounding-box diagonal), against the rest pose;
- reconstruction: posterior mean decoded at every vertex, mean vertex error (same unit);
- plausibility of prior samples: edge strain and volume change of decoded draws next to those
  of the split's own frames, as decoded and within the bundle's strain limit (as animated);
- rollout: the latent motion from a sequence's first frame under its own conditions, mean
  vertex error over time against the engine (unit: the rest shape's diagonal), against the
  rest pose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..data.dataset import PairDataset, SamplingConfig, canonical_transform
from ..data.format import load_sequence
from ..data.geometry import barycentric_points, face_normals, kabsch, sample_surface
from ..data.metrics import bbox_diagonal, chamfer_l1, mean_vertex_error, rigid_residual
from ..deform.learned.motion import latent_motion
from ..deform.own.fit import coordinates_fit
from ..deform.own.mechanics import build_mechanics
from ..deform.own.motion import own_motion
from ..errors import UsageError
from ..model import NeurokModel, farthest_point_sample
from ..model.bundle import prior_spread, strain_limit
from ..model.skinning import Driven
from ..model.strain import mesh_edges
from ..scenario.conditions import CATEGORIES
from ..scenario.mass import closed_volume
from ..scenario.presets import DEFAULT_BEAM_PIN
from ..scenario.spec import MotionConfig
from ..sim.generate import scene_of
from .plausibility import crumple
from .strain import edge_strain

Progress = Callable[[int, int], None]


IK_STARTS = ("posterior", "prior")
SPACES = ("learned", "handles")


@dataclass
class EvalConfig:
    pairs: int = 48  # inverse-kinematics / reconstruction pairs (stratified by category)
    samples: int = 10_000  # surface samples each way for Chamfer-L1
    ik_steps: int = 200
    ik_start: str = "posterior"  # inverse kinematics from the deformation encoder, or "prior"
    draws: int = 4  # prior samples per object for plausibility
    objects: int = 24  # objects for plausibility
    rollouts: int = 24  # sequences rolled out (stratified); 0 = skip
    seconds: float = 2.0
    seed: int = 0
    basis: str = "decoder"  # rollouts: the learned map, or "linear-modes" (the baseline)
    strain_limit: bool = True  # the bundle's strain limit on decoded frames, where it has one
    space: str = "handles"  # fits and rollouts: each object's own space, as animate moves it
    # (docs/design.md, "The object's own shape space"; no bundle loaded), or the bundle's
    # latent space ("learned")

    def __post_init__(self) -> None:
        if self.ik_start not in IK_STARTS:
            raise UsageError(f"ik_start («ik start») must be {' or '.join(IK_STARTS)}, not "
                             f"{self.ik_start!r}")
        if self.space not in SPACES:
            raise UsageError(f"«space» must be {' or '.join(SPACES)}, not {self.space!r}")


def _group(rows: list[tuple[str, dict]], keys: list[str]) -> dict[str, dict[str, float]]:
    cats = sorted({c for c, _ in rows})
    out: dict[str, dict[str, float]] = {}
    for key in keys:
        out[key] = {c: float(np.mean([r[key] for cc, r in rows if cc == c])) for c in cats}
        out[key]["all"] = float(np.mean([r[key] for _, r in rows])) if rows else float("nan")
    out["count"] = {c: float(sum(1 for cc, _ in rows if cc == c)) for c in cats}
    out["count"]["all"] = float(len(rows))
    return out


def stratified(ds: PairDataset, count: int, seed: int,
                only: tuple[str, ...] | None = None) -> list[int]:
    """``count`` sequences taken from each category in turn (of ``only`` where given)."""
    rng = np.random.default_rng([seed, 7])
    members = [np.flatnonzero(np.array(ds.category_of) == c) for c in ds.categories
               if only is None or c in only]
    if not members:
        return []
    picks = [rng.permutation(m) for m in members]
    out = []
    for j in range(count):
        m = picks[j % len(picks)]
        i = j // len(picks)
        if i < len(m):
            out.append(int(m[i]))
    return out


def pair_frames(frames: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Frames a and b of a sequence (T, N, 3) as a pair is measured: b moved rigidly onto a
    (Kabsch), both in a's canonical frame, float64."""
    va, vb = frames[a].astype(np.float64), frames[b].astype(np.float64)
    rot, shift = kabsch(vb, va)
    vb = vb @ rot.T + shift
    centre, scale = canonical_transform(va)
    return (va - centre) * scale, (vb - centre) * scale


def inverse_kinematics(model: NeurokModel, folder, split: str, cfg: EvalConfig,
                       progress: Progress | None = None) -> dict:
    """IK Chamfer-L1 and reconstruction vertex error per category, with rest baselines."""
    mc = model.cfg
    ds = PairDataset(folder, split, SamplingConfig(n_points=mc.n_points, n_query=mc.n_query,
                                                   seed=cfg.seed).without_augmentation())
    dev = next(model.parameters()).device
    t = lambda x: torch.as_tensor(np.asarray(x, np.float32), device=dev)[None]  # noqa

    def fit(it, entry, va, pts, fidx, bary):
        with torch.no_grad():
            prior = model.encode_prior(t(it["points"]), t(it["normals"]))
            mu_q, _ = model.encode_posterior(t(it["points"]), t(it["normals"]),
                                             t(it["delta_points"]), prior)
        # the deformation encoder's guess, refined by Adam (as ``neurok fit`` does), or the
        # prior mean refined alone
        guess = dict(points=t(it["points"]), normals=t(it["normals"]),
                     delta=t(it["delta_points"])) if cfg.ik_start == "posterior" else {}
        z = model.fit_latent(prior, t(it["query"]), t(it["delta_query"]), steps=cfg.ik_steps,
                             **guess)
        with torch.no_grad():
            dense = torch.cat([model.decode(z, prior, chunk) for chunk in
                               t(pts).split(4096, dim=1)], dim=1)[0].cpu().numpy()
            verts = torch.cat([model.decode(mu_q, prior, chunk) for chunk in
                               t(va).split(4096, dim=1)], dim=1)[0].cpu().numpy()
        return pts + dense, va + verts

    return _pair_rows(ds, cfg, fit, progress)


def _pair_rows(ds: PairDataset, cfg: EvalConfig, fit, progress: Progress | None) -> dict:
    """IK Chamfer-L1 and reconstruction vertex error per category, with rest baselines,
    over ``ds``'s fixed pairs: ``fit(item, entry, va, pts, fidx, bary)`` gives the fitted
    surface at frame a's Chamfer samples ``pts`` (on faces ``fidx`` at ``bary``) and the
    reconstructed vertices."""
    pairs = ds.fixed_pairs(cfg.pairs)
    rows = []
    for j, it in enumerate(pairs):
        entry = ds.sequence(int(it["seq"]))
        va, vb = pair_frames(entry.frames, int(it["frame_a"]), int(it["frame_b"]))
        rng = np.random.default_rng([cfg.seed, 11, j])
        pts, fidx, bary = sample_surface(va, entry.faces, cfg.samples, rng)
        target = barycentric_points(vb, entry.faces, fidx, bary)
        moved, verts = fit(it, entry, va, pts, fidx, bary)
        diag = bbox_diagonal(vb)
        rows.append((ds.category_of[int(it["seq"])], {
            "chamfer": chamfer_l1(moved, target),
            "rest_chamfer": chamfer_l1(pts, target),
            "vertex_error": mean_vertex_error(verts, vb, diag),
            "rest_vertex_error": mean_vertex_error(va, vb, diag)}))
        if progress:
            progress(j + 1, len(pairs))
    return _group(rows, ["chamfer", "rest_chamfer", "vertex_error", "rest_vertex_error"])


def handle_fits(folder, split: str, cfg: EvalConfig, n_points: int, n_query: int,
                progress: Progress | None = None) -> dict:
    """:func:`inverse_kinematics`'s pairs fitted in frame a's own handle space instead: the
    coordinates whose motion of the query vertices is the observed one in the least-squares
    sense, with a little of the rest elastic energy (deform/own/fit.py) for handles that
    few query vertices see. The same pairs (``n_points``, ``n_query``: the
    bundle's sampling) and the same Chamfer samples; no bundle is read."""
    from scipy.spatial import cKDTree

    from ..scenario.materials import resolve_material

    ds = PairDataset(folder, split, SamplingConfig(n_points=n_points, n_query=n_query,
                                                   seed=cfg.seed).without_augmentation())

    def fit(it, entry, va, pts, fidx, bary):
        faces = np.asarray(entry.faces)
        category = ds.category_of[int(it["seq"])]
        _, material = resolve_material(category, category)
        mech = build_mechanics(va, faces, category, material)
        idx = cKDTree(va).query(np.asarray(it["query"], np.float64))[1]
        Z = coordinates_fit(mech, idx)(np.asarray(it["delta_query"], np.float64))
        moved = va + mech.vertex_rows @ Z  # (N, 3)
        return barycentric_points(moved, faces, fidx, bary), moved

    return _pair_rows(ds, cfg, fit, progress)


def as_animated(shapes: np.ndarray, rest: np.ndarray, faces: np.ndarray, n_query: int,
                limit: float | None = None, seed: int = 0, turns: np.ndarray | None = None
                ) -> np.ndarray:
    """Decoded shapes (B, N, 3) as ``neurok animate`` makes a mesh of them: only the
    n_query farthest-point driving points' displacements are kept (the decoder treats
    every query point on its own, so these are what it gives there), kept within the strain
    ``limit`` on the driving points' graph where one is given, and carried to the vertices
    by locally affine skinning (model.skinning), or, given a rigid head's rotation vectors
    ``turns`` (B, N, 3), by blending the points' rigid transforms (model.rigid)."""
    q = farthest_point_sample(rest, min(n_query, len(rest)), generator=seed).numpy()
    rv = torch.as_tensor(rest, dtype=torch.float64)
    rq = rv[torch.as_tensor(q)]
    driven = Driven.of(rv, rq, faces)
    at = torch.as_tensor(shapes[:, q], dtype=torch.float64)
    if limit is not None:
        at, _ = driven.limited(at, limit)
    if turns is not None:
        return driven.blend(at, torch.as_tensor(turns[:, q], dtype=torch.float64)).numpy()
    return driven.skin(at).numpy()


RECON_FRAMES = 8  # frames per sequence whose posterior means plausibility decodes


def _decode_all(model: NeurokModel, z: torch.Tensor, prior, query: torch.Tensor
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """n latents of one object decoded at query (1, N, 3): displacements (n, N, 3) and, with
    a rigid head, rotation vectors (n, N, 3) (else None), float64."""
    if not model.cfg.rigid:
        return model.decode_samples(z, prior, query).cpu().numpy().astype(np.float64), None
    d, turn = model.decode_samples_rigid(z, prior, query)
    return (d.cpu().numpy().astype(np.float64), turn.cpu().numpy().astype(np.float64))


def plausibility(model: NeurokModel, folder, split: str, cfg: EvalConfig,
                 progress: Progress | None = None, bundle_config: dict | None = None) -> dict:
    """Decoded prior samples vs the split's own frames: per-sequence mean and 99th percentile
    of edge strain |l / l0 - 1|, the crumple (95th percentile of the dihedral angles' change,
    evaluate.plausibility), and |V / V0 - 1| for closed solids; NaN count.

    ``bundle_config``: where the fitted prior is (``evaluate.prior``). "samples" are draws from the
    instance prior the bundle uses (the fitted one where it has the category, else N(mu, I),
    named in "prior"); with a fitted prior, "unit_samples" are the same draws' noise under
    N(mu, I), the prior training pulled the posteriors towards. "reconstructions" decode the
    posterior means of RECON_FRAMES of the data's own frames: the strain the decoder adds by
    itself, which no prior can remove. Where the bundle has a strain limit for the category,
    "limited_samples" are the samples within it, as ``neurok animate`` decodes frames
    (:func:`as_animated`). "skinned_samples" and "skinned_reconstructions" are the samples
    and reconstructions made into meshes as ``animate`` makes them, without the limit: the
    driving points' displacements carried to the vertices by locally affine skinning (with
    a rigid head: the points' rigid transforms blended), where the rest decode every vertex
    on its own."""
    ds = PairDataset(folder, split, SamplingConfig(seed=cfg.seed))
    gen = torch.Generator().manual_seed(cfg.seed)
    picks = stratified(ds, cfg.objects, cfg.seed)
    rows: dict[str, list[tuple[str, dict]]] = {k: [] for k in PLAUSIBILITY_ROWS}
    nans, used = 0, set()
    for j, idx in enumerate(picks):
        entry, cat = ds.sequence(idx), ds.category_of[idx]
        L = prior_spread(bundle_config or {}, cat)
        used.add("fitted" if L is not None else "unit")
        vc, frames, shapes, turns = _decoded_object(model, entry, cfg, j, gen, L)
        nans += int((~np.isfinite(shapes[0])).any(axis=(1, 2)).sum())
        limit = strain_limit(bundle_config or {}, cat)
        for key, row in _object_rows(vc, entry.faces, cat, frames, shapes, turns, limit,
                                     model.cfg.n_query, cfg.seed).items():
            rows[key].append((cat, row))
        if progress:
            progress(j + 1, len(picks))
    out = {"samples": _summary(rows["samples"]), "data": _summary(rows["data"]),
           "reconstructions": _summary(rows["reconstructions"]),
           "skinned_samples": _summary(rows["skinned_samples"]),
           "skinned_reconstructions": _summary(rows["skinned_reconstructions"]),
           "nan_samples": nans, "draws": cfg.draws * len(picks), "prior": "+".join(sorted(used))}
    for key in ("unit_samples", "limited_samples"):
        if rows[key]:
            out[key] = _summary(rows[key])
    return out


# what plausibility measures, each a set of shapes of every object
PLAUSIBILITY_ROWS = ("samples", "data", "reconstructions", "skinned_samples",
                     "skinned_reconstructions", "unit_samples", "limited_samples")


def _decoded_object(model: NeurokModel, entry, cfg: EvalConfig, j: int, gen: torch.Generator,
                    L: torch.Tensor | None) -> tuple[np.ndarray, np.ndarray, list, list]:
    """One object of plausibility in its canonical frame: its rest vc (N, 3), its frames
    (T, N, 3), and the shapes decoded at every vertex, each (n, N, 3): prior draws, then the
    same noise under the unit prior where ``L`` is a fitted spread, then the posterior means
    of RECON_FRAMES of its frames; beside them a rigid head's rotation vectors (else None)."""
    dev = next(model.parameters()).device
    rest = entry.frames[0].astype(np.float64)
    centre, scale = canonical_transform(rest)
    vc = (rest - centre) * scale
    rng = np.random.default_rng([cfg.seed, 13, j])
    pts, fidx, bary = sample_surface(vc, entry.faces, model.cfg.n_points, rng)
    nrm = face_normals(vc, entry.faces)[fidx]
    t = lambda x: torch.as_tensor(np.asarray(x, np.float32), device=dev)[None]  # noqa
    with torch.no_grad():
        prior = model.encode_prior(t(pts), t(nrm))
        state = gen.get_state()
        draws = [model.sample(prior, cfg.draws, gen, scale_tril=L)[:, 0]]  # (n, k)
        if L is not None:  # the same noise under the unit prior
            gen.set_state(state)
            draws.append(model.sample(prior, cfg.draws, gen)[:, 0])
        frames = (entry.frames.astype(np.float64) - centre) * scale
        seen = frames[np.linspace(1, len(frames) - 1, RECON_FRAMES).round().astype(int)]
        delta = []
        for f in seen:  # the engine's frame without its rigid motion, as in training
            rot, shift = kabsch(f, vc)
            delta.append(barycentric_points(f @ rot.T + shift, entry.faces, fidx, bary)
                         - pts)
        n = len(seen)
        z_seen, _ = model.encode_posterior(t(pts).repeat(n, 1, 1), t(nrm).repeat(n, 1, 1),
                                           torch.as_tensor(np.asarray(delta, np.float32),
                                                           device=dev), prior.repeat(n))
        draws.append(z_seen)
        shapes, turns = [], []  # turns: a rigid head's rotation vectors, else None
        for z in draws:
            d, turn = _decode_all(model, z, prior, t(vc))
            shapes.append(vc + d)
            turns.append(turn)
    return vc, frames, shapes, turns


def _object_rows(vc: np.ndarray, faces: np.ndarray, cat: str, frames: np.ndarray,
                 shapes: list, turns: list, limit: float | None, n_query: int, seed: int
                 ) -> dict[str, dict]:
    """Plausibility's measures of one object, by row: its decoded ``shapes`` and ``turns``
    (as :func:`_decoded_object` gives them), its frames, and those made into meshes as
    ``animate`` makes them (within the strain ``limit`` where there is one)."""
    shapes, turns = list(shapes), list(turns)
    recon, recon_turns = shapes.pop(), turns.pop()
    sets = {"samples": shapes[0], "data": frames[1:], "reconstructions": recon,
            "skinned_samples": as_animated(shapes[0], vc, faces, n_query, seed=seed,
                                           turns=turns[0]),
            "skinned_reconstructions": as_animated(recon, vc, faces, n_query, seed=seed,
                                                   turns=recon_turns)}
    if len(shapes) > 1:
        sets["unit_samples"] = shapes[1]
    if limit is not None:
        sets["limited_samples"] = as_animated(shapes[0], vc, faces, n_query, limit, seed,
                                              turns[0])
    edges = mesh_edges(faces)
    v0 = closed_volume(vc, faces)
    solid = cat in ("soft", "beam") and v0 > 0  # an articulated object's boxes overlap
    return {key: _shape_measures(vc, x, faces, edges, v0 if solid else None)
            for key, x in sets.items()}


def _shape_measures(vc: np.ndarray, x: np.ndarray, faces: np.ndarray, edges: np.ndarray,
                    v0: float | None) -> dict:
    """Edge strain (mean, 99th percentile) and crumple of shapes x (n, N, 3) against the
    rest vc (N, 3), and the mean volume change against the rest's volume ``v0`` (m^3 in the
    canonical frame; None: not a closed solid)."""
    s = edge_strain(vc, x, edges)
    row = {"strain_mean": float(s.mean()), "strain_p99": float(np.quantile(s, 0.99)),
           "crumple": float(crumple(vc, x, faces).mean())}
    if v0 is not None:
        row["volume_change"] = float(np.mean([abs(closed_volume(f, faces) / v0 - 1.0)
                                              for f in x]))
    return row


def _summary(rows: list[tuple[str, dict]]) -> dict:
    """Plausibility's rows grouped by category (volume change over the solids only)."""
    keys = ["strain_mean", "strain_p99", "crumple"]
    out = _group([(c, {k: r[k] for k in keys}) for c, r in rows], keys)
    vol = [(c, r) for c, r in rows if "volume_change" in r]
    if vol:
        out["volume_change"] = _group(vol, ["volume_change"])["volume_change"]
    return out


def sequence_motion_config(meta: dict, seconds: float, fps: float) -> MotionConfig:
    """The latent counterpart of a generated sequence: its category, material and
    conditions (beams pinned where the engine pins them by default; air drags only in
    wind, as in the data engine)."""
    material, cond = scene_of(meta)
    category = meta["category"]
    if category == "beam" and not cond.pins:
        cond.pins = [DEFAULT_BEAM_PIN]
    return MotionConfig(category=category, material=material, conditions=cond,
                        seconds=seconds, fps=fps, still_air=False)  # as the data engine


def rollout_errors(model: NeurokModel | None, folder, split: str, cfg: EvalConfig,
                   calibration: dict | None = None, progress: Progress | None = None,
                   picks: list[int] | None = None, strain_limits: dict | None = None) -> dict:
    """Latent rollouts of sequences from their first frame under their own conditions (with
    ``cfg.space`` "handles", in each object's own handle space: no ``model``, calibration
    or strain limit):
    mean vertex error over ``cfg.seconds`` and per frame, per category, against the rest
    pose; and the shape error, the same after rigid alignment of every frame (see
    :func:`rigid_residual`), against the rest pose aligned likewise (how far the engine's
    shape moved from rest at all). A pinned body (a clamped beam, a flag) has no path of its
    own to take out: its shape error is its vertex error. "strain" and "engine_strain": the
    mean edge strain |l / l0 - 1| of the rollout's frames and of the engine's (NaN for a run
    that failed). ``calibration``: {category:
    {"stiffness": s, "damping": d}}; ``strain_limits``: a bundle's {category: {"limit": l}}
    (frames as decoded where None). Besides the per-category figures, "sequences" lists
    every sequence's own (name, category, errors, latent peak, failed)."""
    ds = PairDataset(folder, split, SamplingConfig(seed=cfg.seed), cache=False)
    # the latent dynamics move the deformable categories; articulated objects' sequences
    # are data for the shape space, with no latent motion of their own yet
    picks = picks if picks is not None else stratified(ds, cfg.rollouts, cfg.seed,
                                                        only=CATEGORIES)
    rows, curves, each = [], {}, []
    for j, idx in enumerate(picks):
        seq = load_sequence(ds.files[idx])
        # no further than the engine went: a shorter sequence has nothing to compare beyond
        seconds = min(cfg.seconds, (len(seq.frames) - 1) / float(seq.fps))
        base = sequence_motion_config(seq.meta, seconds, float(seq.fps))  # (the own space's)
        cal = (calibration or {}).get(base.category, {})
        mcfg = replace(base, stiffness=float(cal.get("stiffness", 1.0)),
                       damping_scale=float(cal.get("damping", 1.0)), seed=cfg.seed,
                       basis=cfg.basis,
                       strain_limit=strain_limit({"strain_limit": strain_limits},
                                                 base.category))
        free = not mcfg.conditions.pins
        truth = np.asarray(seq.frames, np.float64)
        n = min(len(truth), int(round(cfg.seconds * seq.fps)) + 1)
        truth = truth[:n]
        diag = bbox_diagonal(truth[0])
        edges = mesh_edges(np.asarray(seq.faces))
        try:
            if cfg.space == "handles":
                motion = own_motion(truth[0], np.asarray(seq.faces), base)
            else:
                motion = latent_motion(model, truth[0], np.asarray(seq.faces), mcfg)
            pred = motion.frames[0][:n]
            err = np.linalg.norm(pred - truth, axis=-1).mean(axis=-1) / diag  # (T,)
            # a body held by pins has no free path: all of its error is shape error
            shape = float(rigid_residual(pred, truth).mean()) / diag if free else \
                float(err.mean())
            failed, peak = False, motion.stats["latent_peak"]
            strain = float(edge_strain(truth[0], pred, edges).mean())
        except FloatingPointError:
            err, failed, peak = np.full(n, np.nan), True, float("inf")
            shape, strain = 1.0, float("nan")
        rest = np.linalg.norm(truth[0][None] - truth, axis=-1).mean(axis=-1) / diag
        rest_shape = float(rigid_residual(np.broadcast_to(truth[0], truth.shape),
                                          truth).mean()) / diag if free else float(rest.mean())
        rows.append((mcfg.category, {"error": float(np.nanmean(err)) if not failed else 1.0,
                                     "rest_error": float(rest.mean()), "failed": float(failed),
                                     "shape_error": shape, "rest_shape_error": rest_shape,
                                     "latent_peak": peak, "strain": strain,
                                     "engine_strain": float(edge_strain(truth[0], truth,
                                                                        edges).mean())}))
        curves.setdefault(mcfg.category, []).append(err)
        each.append({"sequence": ds.files[idx].stem, "category": mcfg.category,
                     **rows[-1][1], "failed": failed})
        if progress:
            progress(j + 1, len(picks))
    out = _group(rows, ["error", "rest_error", "shape_error", "rest_shape_error", "failed",
                        "latent_peak", "strain", "engine_strain"])
    out["curve"] = {c: np.nanmean(np.stack(v), axis=0).tolist() for c, v in curves.items()}
    out["sequences"] = each
    return out
