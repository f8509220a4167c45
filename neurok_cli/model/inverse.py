"""Inverse kinematics: the latent state (and rigid pose) of an object from its deformed shape,
known either at corresponding points (displacements) or only as points (a point cloud, or a
mesh of another topology).

The deformed surface is x(z, R, t) = R (p + decode(z, p)) + t over surface samples p of the
rest shape, all in the rest's canonical frame. Both fits are Levenberg-Marquardt on z (and
the rotation vector of R and t): the latent has k ~ 16 dimensions, so the normal equations
are tiny. A decoder Jacobian (a forward and 3 backward passes, :meth:`QueryField.jacobian`)
costs ~6 decodes, so between true ones it is carried along by secant (Broyden) updates from
the decodes the trial steps make anyway. The Chamfer fit is iteratively reweighted least
squares around the nearest pairs both ways, re-matched at every trial step. (Adam on the same
losses took 150 steps of a decode and a backward pass each, ~30x the time, for the same
or a worse Chamfer-L1 on the pairs of benchmarks/bench_fit.py, in commit 8bb475c.)"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import torch
from torch import Tensor

from ..errors import UsageError
from .encoder import Prior
from .neurok import NeurokModel

CHUNK = 4096  # rows of the distance matrix, and query points per decoder call, at a time
LAMBDA0, LAMBDA_MIN, LAMBDA_MAX = 1e-3, 1e-7, 1e6  # Levenberg-Marquardt damping
DAMP_FLOOR = 0.01  # the damping of a direction at least this x the mean: with Marquardt's
# diag(A) alone, latent directions the data barely sees took huge steps, far outside the
# prior, into worse minima (cloth pairs of bench_fit: Chamfer-L1 +10-20 %)
TOLERANCE = 1e-4  # stop once a step lowers the loss by less than this fraction
TANGENTIAL = 0.1  # weight of a Chamfer pair's offset along the goal's surface (normal: 1)


class SurfaceFit(NamedTuple):
    z: Tensor  # (k,) latent of the deformed state
    rotation: Tensor  # (3, 3) deformed = rotation @ (rest + displacement) + translation
    translation: Tensor  # (3,)
    loss: float  # symmetric Chamfer-L1 at the fitting samples, canonical units


def nearest_distance(a: Tensor, b: Tensor) -> Tensor:
    """For each point of a (B, M, 3), the distance to its nearest point of b (B, N, 3)
    -> (B, M); differentiable in both (through the nearest pair)."""
    out = []
    for rows in a.split(CHUNK, dim=1):
        idx = torch.cdist(rows.detach(), b.detach()).argmin(dim=-1)  # (B, m)
        near = torch.gather(b, 1, idx[..., None].expand(*idx.shape, 3))
        out.append((rows - near).norm(dim=-1))
    return torch.cat(out, dim=1)


def chamfer_l1(a: Tensor, b: Tensor) -> Tensor:
    """½(mean nearest distance a→b + b→a) per object: a (B, M, 3), b (B, N, 3) -> (B,)."""
    return 0.5 * (nearest_distance(a, b).mean(dim=1) + nearest_distance(b, a).mean(dim=1))


def rotation_matrix(w: Tensor) -> Tensor:
    """Rodrigues: rotation vectors (B, 3) -> (B, 3, 3), smooth at 0."""
    theta2 = (w * w).sum(-1, keepdim=True)[..., None]  # (B, 1, 1)
    theta = theta2.clamp_min(1e-24).sqrt()
    small = theta2 < 1e-8
    a = torch.where(small, 1.0 - theta2 / 6.0, torch.sin(theta) / theta)
    b = torch.where(small, 0.5 - theta2 / 24.0, (1.0 - torch.cos(theta)) / theta2.clamp_min(1e-24))
    zero = torch.zeros_like(w[:, 0])
    K = torch.stack([zero, -w[:, 2], w[:, 1], w[:, 2], zero, -w[:, 0],
                     -w[:, 1], w[:, 0], zero], dim=-1).reshape(-1, 3, 3)
    eye = torch.eye(3, dtype=w.dtype, device=w.device).expand_as(K)
    return eye + a * K + b * (K @ K)


class QueryField:
    """``model.decode`` of one object at fixed query points, F(prior.mu) there evaluated once
    (decode(z) = F(z) - F(mu): half of every evaluation otherwise).

    Args:
        prior: the object's prior (B = 1).
        query: (P, 3) points, canonical units.
    """

    def __init__(self, model: NeurokModel, prior: Prior, query: Tensor) -> None:
        if prior.batch_size != 1 or query.dim() != 2:
            raise UsageError(f"QueryField: one object (B = 1) and query (P, 3); got a prior "
                             f"of {prior.batch_size} and query {tuple(query.shape)}")
        self.model, self.prior, self.query = model, prior.detach(), query
        with torch.no_grad():
            self.base = torch.cat([model.field(self.prior.mu, self.prior, q[None])[0]
                                   for q in query.split(CHUNK)])  # (P, 3)

    @property
    def mu(self) -> Tensor:
        """(k,) the prior mean, where the displacement is 0."""
        return self.prior.mu[0]

    def __call__(self, z: Tensor) -> Tensor:
        """Displacements (S, P, 3) for latents z (S, k), without gradients; exactly 0 for
        z == mu."""
        out = torch.zeros(len(z), *self.base.shape, dtype=self.base.dtype,
                          device=self.base.device)
        live = (z != self.mu).any(dim=-1).nonzero()[:, 0]  # rows at mu are not decoded
        if len(live):
            with torch.no_grad():
                zl = z[live]  # the prior and queries of the one object serve every row
                out[live] = torch.cat([self.model.field(zl, self.prior, q[None])
                                       for q in self.query.split(CHUNK)], dim=1) - self.base
        return out

    def jacobian(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """At one latent z (k,): the displacements (P, 3) and d displacement / d z (P, 3, k).
        Queries do not interact in the decoder, so each point gets its own copy of z and one
        backward pass per axis gives every point's rows."""
        values, rows = [], []
        with torch.enable_grad():
            for q in self.query.split(CHUNK):
                zq = z.detach()[None, None].expand(1, len(q), -1).clone().requires_grad_(True)
                out = self.model.field(zq, self.prior, q[None])[0]  # (p, 3)
                rows.append(torch.stack([torch.autograd.grad(out[:, c].sum(), zq,
                                                             retain_graph=c < 2)[0][0]
                                         for c in range(3)], dim=1))  # (p, 3, k)
                values.append(out.detach())
        value = torch.cat(values) - self.base
        if bool((z == self.mu).all()):
            value = torch.zeros_like(value)
        return value, torch.cat(rows)


def _lm_step(A: Tensor, g: Tensor, lam: float) -> Tensor:
    """Solve (A + lam D) d = -g in float64; A (n, n), g (n,); D is diag(A), raised to
    DAMP_FLOOR x its mean where smaller."""
    A64, g64 = A.double(), g.double()
    scale = A64.diagonal()
    damp = lam * torch.maximum(scale, DAMP_FLOOR * scale.mean())
    return torch.linalg.solve(A64 + torch.diag(damp), -g64)


class _Decoded:
    """A latent z (k,), its displacement d (P, 3) at a field's points and J ≈ dd/dz
    (P, 3, k): exact after ``refresh``, else carried along by secant (Broyden) updates from
    the trial decodes the solver makes anyway (a Jacobian costs ~6 decodes)."""

    def __init__(self, field: QueryField, z: Tensor) -> None:
        self.field, self.z = field, z.detach().clone()
        self.refresh()

    def refresh(self) -> None:
        self.d, self.J = self.field.jacobian(self.z)
        self.exact = True

    def move(self, z: Tensor, d: Tensor) -> None:
        """To z (k,), which decodes to d (P, 3): J then reproduces that change (a rank-one
        update)."""
        dz = z - self.z
        nn = float(dz @ dz)
        if nn > 0:
            miss = d - self.d - self.J @ dz  # (P, 3)
            self.J = self.J + miss[..., None] * (dz / nn)
            self.exact = False
        self.z, self.d = z, d


class _Problem(Protocol):
    """What _solve works on: the loss at the current point, a quadratic model of its change
    there, the loss after a step, and keeping that step."""

    loss: float

    def system(self) -> tuple[Tensor, Tensor]:
        """(A (n, n), g (n,)): the loss changes by ~ g.d + d.A.d / 2 for a step d (n,)."""
        ...

    def __call__(self, step: Tensor) -> float:
        """The loss after ``step`` (n,) from the current point (not taken yet)."""
        ...

    def accept(self) -> None:
        """Move to where the last call went."""
        ...


def _solve(problem: _Problem, dec: _Decoded | None, steps: int,
           tolerance: float = TOLERANCE, extrapolate: bool = False) -> float:
    """Levenberg-Marquardt with Nielsen's damping update. With a secant Jacobian (``dec``
    not exact), a step that fails or gains too little gets a true Jacobian before anything
    else. At most ``steps`` trial steps, fewer once a step gains less than ``tolerance`` (a
    fraction of the loss); with ``extrapolate``, an accepted step is tried again, twice as
    long, while that pays. Returns the final loss."""
    system, trial = problem.system, problem
    loss, lam, grow = problem.loss, LAMBDA0, 2.0
    A, g = system()
    trials = 0
    while trials < steps:
        step = _lm_step(A, g, lam).to(g.dtype)
        expect = -float(g @ step + 0.5 * step @ (A @ step))  # the model's gain
        if expect <= tolerance * loss:  # nothing worth a trial
            if dec is None or dec.exact:
                break
            dec.refresh()
            A, g = system()
            continue
        e, trials = trial(step), trials + 1
        if e < loss:
            rho, gain, loss = (loss - e) / expect, (loss - e) / loss, e
            trial.accept()
            while extrapolate and trials < steps:
                step = 2 * step
                e, trials = trial(step), trials + 1
                if e >= loss:
                    break
                gain, loss = (loss - e) / loss, e
                trial.accept()
            lam, grow = max(lam * max(1 / 3, 1 - (2 * rho - 1) ** 3), LAMBDA_MIN), 2.0
            if gain <= tolerance:
                if dec is None or dec.exact:
                    break
                dec.refresh()
        elif dec is not None and not dec.exact:
            dec.refresh()  # the secant Jacobian misled: first a true one, same damping
        else:
            lam, grow = lam * grow, grow * 2
            if lam >= LAMBDA_MAX:
                break
        A, g = system()
    return loss


class _DisplacementTrial:
    """fit_displacement's problem for _solve: r = (d(z) - target) / s, |r|^2 / 3P + prior."""

    def __init__(self, dec: _Decoded, target: Tensor, prior_weight: float) -> None:
        self.dec, self.target = dec, target
        self.scale = dec.field.model.cfg.delta_scale ** 2 * target.numel()
        self.reg = prior_weight / (2 * target.numel())
        self.loss = self.error(dec.d, dec.z)
        self.pending: tuple[Tensor, Tensor] | None = None

    def error(self, d: Tensor, z: Tensor) -> float:
        return float((d - self.target).pow(2).sum() / self.scale
                     + self.reg * (z - self.dec.field.mu).pow(2).sum())

    def system(self) -> tuple[Tensor, Tensor]:
        dec = self.dec
        J, r = dec.J.reshape(-1, dec.J.shape[-1]), (dec.d - self.target).reshape(-1)
        eye = torch.eye(len(dec.z), dtype=J.dtype, device=J.device)
        return (2 * (J.T @ J / self.scale + self.reg * eye),
                2 * (J.T @ r / self.scale + self.reg * (dec.z - dec.field.mu)))

    def __call__(self, step: Tensor) -> float:
        z = self.dec.z + step
        d = self.dec.field(z[None])[0]
        self.pending = (z, d)
        return self.error(d, z)

    def accept(self) -> None:
        self.dec.move(*self.pending)


def fit_displacement(field: QueryField, target: Tensor, starts: Tensor, *, steps: int = 60,
                     prior_weight: float = 0.0) -> tuple[Tensor, float]:
    """The z (k,) whose displacement at the field's points best matches target (P, 3):
    mean squared error / delta_scale² + prior_weight |z - mu|² / (6P), by Levenberg-Marquardt
    from the best of starts (S, k), at most ``steps`` trial steps. Returns z and its error."""
    errs = (field(starts) - target).pow(2).sum(dim=(1, 2)) \
        + prior_weight / 2 * (starts - field.mu).pow(2).sum(-1) * field.model.cfg.delta_scale ** 2
    dec = _Decoded(field, starts[int(errs.argmin())])
    problem = _DisplacementTrial(dec, target, prior_weight)
    err = _solve(problem, dec, steps)
    return dec.z, err


def _nearest(a: Tensor, b: Tensor, tree=None) -> tuple[Tensor, Tensor]:
    """Distance (M,) and index (M,) of the nearest point of b (N, 3) to each of a (M, 3).

    On the CPU from a k-d tree over b (``tree``, from :func:`_tree`, where one is kept),
    with exact distances (a cloud fit's ~300 searches both ways between 1k and 2k points:
    1.2 s -> ~0.3-0.4 s against all pairwise distances, whose matrix-product form errs by
    ~1e-7 of the size in float32)."""
    if a.device.type != "cpu":
        pairs = [torch.cdist(rows, b).min(dim=1) for rows in a.split(CHUNK)]
        return torch.cat([d for d, _ in pairs]), torch.cat([n for _, n in pairs])
    dist, idx = (tree or _tree(b)).query(a.detach().double().numpy())
    return torch.from_numpy(dist).to(a.dtype), torch.from_numpy(idx).long()


def _tree(points: Tensor):
    """A k-d tree over points (N, 3) for :func:`_nearest`; None off the CPU."""
    if points.device.type != "cpu":
        return None
    from scipy.spatial import cKDTree

    return cKDTree(points.detach().double().numpy())


def point_normals(points: Tensor, neighbours: int = 12) -> Tensor:
    """Unit normals (N, 3), sign arbitrary, of points (N, 3) sampled from a surface: the
    least-variance direction of each point's nearest neighbours."""
    k = min(neighbours, len(points))
    idx = torch.cat([torch.cdist(rows, points).topk(k, largest=False).indices
                     for rows in points.split(CHUNK)])  # (N, k)
    near = points[idx] - points[idx].mean(dim=1, keepdim=True)  # (N, k, 3)
    _, vecs = torch.linalg.eigh((near.transpose(1, 2) @ near).double())
    return vecs[..., 0].to(points.dtype)


class _ChamferTrial:
    """fit_surface's problem for _solve: the Chamfer-L1 of x = R (p + d(z)) + t to the goal,
    in reweighted least-squares form around each point's nearest pairs (both ways): weight
    1 / distance, the goal's normal direction in full and the tangential ones at TANGENTIAL
    (the surfaces may slide along each other: point-to-plane ICP's faster convergence)."""

    def __init__(self, field: QueryField, dec: _Decoded | None, z: Tensor, d: Tensor,
                 R: Tensor, t: Tensor, goal: Tensor, normals: Tensor, rigid: bool,
                 prior_weight: float) -> None:
        self.field, self.dec, self.goal, self.normals = field, dec, goal, normals
        self.rigid, self.reg = rigid, prior_weight / len(field.query)
        self.z, self.d, self.R, self.t = z, d, R, t
        self.goal_tree = _tree(goal)  # the goal stays; the fitted points move
        self.state = self.measure(self.d, z, self.R, self.t)
        self.loss = self.state[0]

    def measure(self, d: Tensor, z: Tensor, R: Tensor, t: Tensor) -> tuple:
        """Loss and the per-point weights (P, 3, 3) and weighted residuals (P, 3) at a pose."""
        x = (self.field.query + d) @ R.T + t
        d1, n1 = _nearest(x, self.goal, self.goal_tree)
        d2, n2 = _nearest(self.goal, x)
        loss = 0.5 * float(d1.mean() + d2.mean()) + 0.5 * self.reg * float(
            (z - self.field.mu).pow(2).sum())
        floor = 0.1 * loss + 1e-9  # weights 1 / distance, bounded where pairs nearly touch
        w1 = 0.5 / len(x) / d1.clamp_min(floor)  # (P,)
        w2 = 0.5 / len(self.goal) / d2.clamp_min(floor)  # (N,)
        nn = self.normals[..., None] * self.normals[:, None]  # (N, 3, 3)
        eye = torch.eye(3, dtype=x.dtype, device=x.device)
        metric = nn + TANGENTIAL * (eye - nn)
        m1, m2 = w1[:, None, None] * metric[n1], w2[:, None, None] * metric  # (., 3, 3)
        C = m1.index_add(0, n2, m2)  # (P, 3, 3)
        r = (m1 @ (x - self.goal[n1])[..., None])[..., 0].index_add(
            0, n2, (m2 @ (x[n2] - self.goal)[..., None])[..., 0])  # (P, 3)
        return loss, x, C, r

    def system(self) -> tuple[Tensor, Tensor]:
        _, x, C, r = self.state
        blocks = [torch.einsum("ab,pbk->pak", self.R, self.dec.J)] if self.dec else []
        if self.rigid:
            y = x - self.t  # d(exp(w) y)/dw = -[y]x at w = 0
            zero = torch.zeros_like(y[:, 0])
            blocks += [torch.stack([zero, y[:, 2], -y[:, 1], -y[:, 2], zero, y[:, 0],
                                    y[:, 1], -y[:, 0], zero], dim=-1).reshape(-1, 3, 3),
                       torch.eye(3, dtype=x.dtype, device=x.device).expand(len(x), 3, 3)]
        J = torch.cat(blocks, dim=2)  # (P, 3, n)
        A = torch.einsum("pan,pab,pbm->nm", J, C, J)
        g = torch.einsum("pan,pa->n", J, r)
        if self.dec is not None and self.reg > 0:
            k = len(self.z)
            A[:k, :k] += self.reg * torch.eye(k, dtype=A.dtype, device=A.device)
            g[:k] += self.reg * (self.z - self.field.mu)
        return A, g

    def __call__(self, step: Tensor) -> float:
        k = len(self.z) if self.dec is not None else 0
        z = self.z + step[:k] if k else self.z
        d = self.field(z[None])[0] if k else self.d
        R, t = self.R, self.t
        if self.rigid:
            R, t = rotation_matrix(step[None, k:k + 3])[0] @ R, t + step[k + 3:]
        self.pending = (z, d, R, t, self.measure(d, z, R, t))
        return self.pending[-1][0]

    def accept(self) -> None:
        self.z, self.d, self.R, self.t, self.state = self.pending
        if self.dec is not None:
            self.dec.move(self.z, self.d)


def fit_surface(model: NeurokModel, prior: Prior, surface: Tensor, target: Tensor,
                starts: Tensor, *, steps: int = 60, rigid: bool = True, latent: bool = True,
                prior_weight: float = 0.0, pose_first: bool = True,
                poses: tuple[Tensor, Tensor] | None = None,
                field: QueryField | None = None) -> SurfaceFit:
    """The z, R, t of ONE object whose decoded surface best matches ``target`` (Chamfer-L1).

    Args:
        prior: the object's prior (B = 1), from ``model.encode_prior``.
        surface: (P, 3) samples of the rest surface, canonical units.
        target: (N, 3) observed points in the same frame (roughly centred on the rest).
        starts: (S, k) latents to start from; each is fitted and the best is returned.
        steps: Levenberg-Marquardt trial steps at most per start (each one decode, plus a
            decoder Jacobian now and then).
        rigid: also fit a rotation and translation (else they stay identity and 0).
        latent: fit z (else it stays at the start: a rigid fit of that shape).
        prior_weight: weight of |z - mu|² / 2 per start (0 = maximum likelihood).
        pose_first: with rigid and latent, fit R and t alone first (roughly): for a target
            that may sit anywhere; False when the shape is already aligned with it.
        poses: rotations (S, 3, 3) and translations (S, 3) each start begins at (default:
            identity and 0).
        field: the decoder at ``surface`` if already built (its F(mu) is reused).
    """
    if prior.batch_size != 1 or surface.dim() != 2 or target.dim() != 2 or starts.dim() != 2:
        raise UsageError("fit_surface: one object (B = 1), surface (P, 3), target (N, 3) and "
                         f"starts (S, k); got {tuple(surface.shape)}, {tuple(target.shape)}, "
                         f"{tuple(starts.shape)}")
    if not (rigid or latent):
        raise UsageError("fit_surface: nothing to fit (latent and rigid both off)")
    was_training = model.training
    model.eval()
    try:
        field = field or QueryField(model, prior, surface)
        normals = point_normals(target)
        problems = []
        if poses is None:
            eye = torch.eye(3, dtype=target.dtype, device=target.device)
            poses = (eye.expand(len(starts), 3, 3), target.new_zeros(len(starts), 3))
        for start, R, t in zip(starts, *poses):
            z = start.detach().clone()
            d = field(z[None])[0]
            if rigid and (pose_first or not latent):
                # the pose first: latent steps from a misplaced shape go astray
                problem = _ChamferTrial(field, None, z, d, R, t, target, normals, True,
                                        prior_weight)
                # a rigid fit on its own: nearest pairs hold a sliding pose back, so an
                # accepted step is extended (ICP's extrapolation; no decode to pay for)
                _solve(problem, None, steps, TOLERANCE if not latent else 10 * TOLERANCE,
                       extrapolate=not latent)
                R, t = problem.R, problem.t
            if latent:
                dec = _Decoded(field, z)
                problem = _ChamferTrial(field, dec, z, dec.d, R, t, target, normals, rigid,
                                        prior_weight)
            problems.append(problem)
        if latent:  # every start a quarter of the steps, then the best of them the rest
            scout = steps if len(problems) == 1 else max(steps // 4, 1)
            for problem in problems:
                problem.loss = _solve(problem, problem.dec, scout)
            best = min(problems, key=lambda p: p.loss)
            _solve(best, best.dec, steps - scout)
        fits = []
        for problem in problems:
            _, x, _, _ = problem.state
            fits.append(SurfaceFit(problem.z, problem.R, problem.t,
                                   float(chamfer_l1(x[None], target[None])[0])))
        return min(fits, key=lambda f: f.loss)
    finally:
        model.train(was_training)
