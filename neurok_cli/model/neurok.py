"""NeurokModel: the conditional VAE of the paper (kinematic prior, deformation encoder,
deformation decoder) and what is built on it: loss, reconstruction, sampling, latent fitting
and decoder Jacobians.

Everything is in the object's canonical frame (centred on its bounding box, largest extent 1,
+Y up); displacements δ are target minus rest positions in that frame.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import torch
from torch import Tensor, nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..errors import UsageError
from .config import ModelConfig
from .decoder import Decoder
from .encoder import PosteriorEncoder, Prior, PriorEncoder
from .layers import init_weights
from .rigid import nearest_points, offset_error

BATCH_KEYS = ("points", "normals", "delta_points", "query", "delta_query")


def kl_divergence(mu_q: Tensor, logvar_q: Tensor, mu_p: Tensor) -> Tensor:
    """KL(N(mu_q, diag(exp(logvar_q))) || N(mu_p, I)) in nats, (B, k) each -> (B,)."""
    return 0.5 * (logvar_q.exp() + (mu_q - mu_p) ** 2 - 1.0 - logvar_q).sum(dim=-1)


def edge_strain(rest: Tensor, delta_hat: Tensor, delta: Tensor, neighbours: int) -> Tensor:
    """Mean squared relative length error of the edges of each object's k-nearest-neighbour
    graph over its rest points (B, Q, 3), decoded displacements delta_hat against the target's
    delta (B, Q, 3) -> (B,): ((|x̂_i - x̂_j| - |x_i - x_j|) / |r_i - r_j|)^2 averaged over the
    Q k edges (i, j) with x = rest + delta. Rest lengths are floored at half the object's mean
    edge length, so near-coincident samples (which a fold or a random sampling brings
    together) do not turn a small displacement error into a huge strain."""
    near = nearest_points(rest, neighbours)  # (B, Q, k)
    B, Q = rest.shape[:2]
    rows = torch.arange(B, device=rest.device)[:, None, None]

    def lengths(x: Tensor) -> Tensor:
        return ((x[rows, near] - x[:, :, None]).pow(2).sum(-1) + 1e-12).sqrt()  # (B, Q, k)

    rest_len = lengths(rest)
    rest_len = torch.maximum(rest_len, 0.5 * rest_len.mean(dim=(1, 2), keepdim=True))
    change = (lengths(rest + delta_hat) - lengths(rest + delta)) / rest_len
    return change.pow(2).mean(dim=(1, 2))


def into_basis(rows: Tensor, delta: Tensor) -> Tensor:
    """Displacements ``delta`` (B, Q, 3) made the nearest, in the least-squares sense over
    the Q points, that each object's own basis holds: rows (B, Q, K) the points' basis rows
    (zero columns: padding, which stays at 0)."""
    gram = rows.transpose(1, 2) @ rows  # (B, K, K)
    diag = gram.diagonal(dim1=1, dim2=2)
    used = diag > 0
    scale = (diag * used).sum(-1, keepdim=True) / used.sum(-1, keepdim=True).clamp_min(1)
    ridge = torch.where(used, 1e-6 * scale, scale)  # a little for the few-point handles
    coords = torch.linalg.solve(gram + torch.diag_embed(ridge), rows.transpose(1, 2) @ delta)
    return rows @ coords


def _exact_rest(delta: Tensor, z: Tensor, mu: Tensor) -> Tensor:
    """``delta`` (B, Q, C) of latents z (B, k) against the prior mean mu: rows with z == mu
    are 0 in exact arithmetic; any rounding is removed there, the gradient kept."""
    same = (z == mu).all(dim=-1)[:, None, None]
    return torch.where(same, delta - delta.detach(), delta)


class NeurokModel(nn.Module):
    """Transformer conditional VAE over an object's deformed states (docs/design.md, "Model")."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.prior_encoder = PriorEncoder(cfg)
        self.posterior_encoder = PosteriorEncoder(cfg)
        self.decoder = Decoder(cfg)
        self.apply(init_weights)
        for module in self.modules():  # adaLN-Zero etc.: redo what init_weights overwrote
            if hasattr(module, "finish_init"):
                module.finish_init()

    def load_grown(self, state: Mapping[str, Tensor]) -> None:
        """Load the parameters of a smaller model of the same width and depth, grown into
        this one so that it decodes as the given one did until trained:

        - a displacement head into a rigid head: the rotation outputs' weights start at 0;
        - a smaller latent: the new dims of z start at the prior mean (prior head rows 0),
          the posterior's new means vary with the deformation as at a fresh start, and the
          decoder reads them through weights a tenth of a fresh start's;
        - no smooth head into one (model.smooth): its last layer starts at 0.
        """
        own = self.state_dict()
        # onto this model's device first: the grown tensors are made from both
        state = {key: v.to(own[key].device) if key in own else v for key, v in state.items()}
        k0 = state["prior_encoder.head.weight"].shape[0]
        k = self.cfg.latent_dim
        if k0 > k:
            raise UsageError(f"cannot grow a latent of {k0} dims into {k}")
        for key in ("decoder.final.linear.weight", "decoder.final.linear.bias"):
            if key in state and state[key].shape[0] == 3 and own[key].shape[0] == 6:
                state[key] = torch.cat([state[key], torch.zeros_like(state[key])])
        if k0 < k:
            for key in ("prior_encoder.head.weight", "prior_encoder.head.bias"):
                state[key] = torch.cat([state[key], torch.zeros_like(own[key][k0:])])
            for key in ("posterior_encoder.head.weight", "posterior_encoder.head.bias"):
                shift, logvar = state[key].chunk(2)
                new_shift, new_logvar = own[key][k0:k], own[key][k + k0:]
                state[key] = torch.cat([shift, new_shift, logvar, new_logvar])
            key = "decoder.cond.0.weight"
            state[key] = torch.cat([state[key], 0.1 * own[key][:, k0:]], dim=1)
        for key in own:
            if key.startswith("decoder.smooth.") and key not in state:
                state[key] = own[key]
        clash = sorted(k for k in set(state) | set(own)
                       if k not in own or k not in state or state[k].shape != own[k].shape)
        if clash:
            raise UsageError(f"cannot grow these parameters into this model: {', '.join(clash)} "
                             "(a fine-tune may add a rigid head, latent dims or a smooth "
                             "head, not remove or reshape one)")
        self.load_state_dict(state)

    def num_parameters(self) -> int:
        """Number of parameters (float32 bytes = 4x this)."""
        return sum(p.numel() for p in self.parameters())

    # --- the three networks -------------------------------------------------------------

    def encode_prior(self, points: Tensor, normals: Tensor) -> Prior:
        """E_prior: surface samples of M0 -> instance prior.

        points, normals (B, P, 3) -> Prior(tokens (B, L, D), mu (B, k)); p(z | M0) = N(mu, I).
        """
        return self.prior_encoder(points, normals)

    def encode_posterior(self, points: Tensor, normals: Tensor, delta: Tensor,
                         prior: Prior) -> tuple[Tensor, Tensor]:
        """E_post: displacement δ (B, P, 3) at the surface samples points, normals (B, P, 3)
        -> (mu_q, logvar_q), each (B, k): q(z | δ, M0) = N(mu_q, diag(exp(logvar_q)))."""
        return self.posterior_encoder(points, normals, delta, prior)

    def output(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """The raw decoder F(z, M0) (canonical units), without the rest-shape offset: the
        displacement (B, Q, 3), followed with a rigid head by the rotation vector (radians),
        (B, Q, 6). z (B, k) or (B, Q, k) one latent per query point, query (B, Q, 3); a
        prior and query of one object (batch 1) serve all B latents."""
        out = self.decoder(z, prior.tokens, query)
        if not self.cfg.rigid:
            return out * self.cfg.delta_scale
        return torch.cat([out[..., :3] * self.cfg.delta_scale, out[..., 3:]], -1)

    def field(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """The raw decoder's displacement (B, Q, 3) (see :meth:`output`)."""
        return self.output(z, prior, query)[..., :3]

    def decode(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """Displacement at query points: F(z) - F(prior.mu), so decode(prior.mu) == 0 exactly.

        z (B, k), query (B, Q, 3) -> delta_hat (B, Q, 3). For n samples per object, pass
        ``z.reshape(n * B, k)`` with ``prior.repeat(n)`` and ``query.repeat(n, 1, 1)``.
        """
        return self.relative(z, prior, query)[..., :3]

    def decode_rigid(self, z: Tensor, prior: Prior, query: Tensor) -> tuple[Tensor, Tensor]:
        """A rigid head's transforms at query points: the displacement and the rotation
        vector relative to the rest shape, each (B, Q, 3), both 0 at prior.mu (as
        :meth:`decode`)."""
        out = self._rigid_only(self.relative(z, prior, query))
        return out[..., :3], out[..., 3:]

    def relative(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """:meth:`output` at z less :meth:`output` at prior.mu, (B, Q, 3 or 6), exactly 0
        for rows with z == prior.mu (see :meth:`decode` for the shapes)."""
        B = prior.batch_size
        if z.dim() != 2 or z.shape[0] != B or query.shape[0] != B:
            raise UsageError(f"decode: z must be ({B}, k) and query ({B}, Q, 3) for a prior of "
                             f"{B} objects, got {tuple(z.shape)} and {tuple(query.shape)}")
        both = Prior(prior.tokens.repeat(2, 1, 1), prior.mu.repeat(2, 1))
        out = self.output(torch.cat([z, prior.mu.to(z.dtype)]), both, query.repeat(2, 1, 1))
        return _exact_rest(out[:B] - out[B:], z, prior.mu)

    def decode_samples(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """``decode`` for n latents of one object, F(prior.mu) evaluated once rather than
        beside every sample (half of the work when decoding the frames of a clip), and the
        query points' embedding and the tokens' keys and values once for all n.

        z (n, k), a prior of one object, query (1, Q, 3) -> delta_hat (n, Q, 3).
        """
        return self.relative_samples(z, prior, query)[..., :3]

    def decode_samples_rigid(self, z: Tensor, prior: Prior, query: Tensor
                             ) -> tuple[Tensor, Tensor]:
        """:meth:`decode_rigid` for n latents of one object (see :meth:`decode_samples`):
        displacements and rotation vectors (n, Q, 3) each."""
        out = self._rigid_only(self.relative_samples(z, prior, query))
        return out[..., :3], out[..., 3:]

    def relative_samples(self, z: Tensor, prior: Prior, query: Tensor) -> Tensor:
        """:meth:`relative` for n latents of one object, (n, Q, 3 or 6)."""
        if prior.batch_size != 1 or query.shape[0] != 1 or z.dim() != 2:
            raise UsageError(f"decode_samples: one object and z (n, k), got a prior of "
                             f"{prior.batch_size}, query {tuple(query.shape)}, z "
                             f"{tuple(z.shape)}")
        base = self.output(prior.mu.to(z.dtype), prior, query)  # (1, Q, C)
        return _exact_rest(self.output(z, prior, query) - base, z, prior.mu)

    def _rigid_only(self, out: Tensor) -> Tensor:
        if not self.cfg.rigid:
            raise UsageError("this model's decoder has no rigid head (model config rigid: "
                             "false); it decodes displacements only")
        return out

    def jacobian(self, z: Tensor, prior: Prior, query: Tensor, *,
                 create_graph: bool = False) -> Tensor:
        """d decode / d z at z (B, k) for query points (B, Q, 3) -> J (B, Q, 3, k).

        Queries do not interact in the decoder, so giving each point its own copy of z yields
        every point's Jacobian from 3 backward passes (one per axis), whatever Q is.
        ``create_graph`` keeps J differentiable (for derivatives of the metric J^T M J).
        """
        B, Q = query.shape[:2]
        # the fused attention kernels have no double backward; the math one has
        kernels = sdpa_kernel([SDPBackend.MATH]) if create_graph else contextlib.nullcontext()
        with torch.enable_grad(), kernels:
            zq = z[:, None, :].expand(B, Q, z.shape[-1])  # (B, Q, k)
            if not (create_graph and zq.requires_grad):
                zq = zq.detach().clone().requires_grad_(True)
                prior = prior if create_graph else prior.detach()
            out = self.field(zq, prior, query)  # (B, Q, 3)
            rows = [torch.autograd.grad(out[..., c].sum(), zq, retain_graph=c < 2 or create_graph,
                                        create_graph=create_graph)[0] for c in range(3)]
        return torch.stack(rows, dim=2)  # (B, Q, 3, k)

    # --- training ------------------------------------------------------------------------

    def _smooth_error(self, z: Tensor, prior, query: Tensor, target: Tensor) -> Tensor:
        """(B,) the mean squared error of the smooth head's field alone at ``z`` (B, k)
        against ``target`` (B, Q, 3), canonical units^2."""
        B = z.shape[0]
        both = self.decoder.smooth_part(torch.cat([z, prior.mu]),
                                        prior.tokens.repeat(2, 1, 1), query.repeat(2, 1, 1))
        alone = (both[:B] - both[B:]) * self.cfg.delta_scale
        return (alone - target).pow(2).mean(dim=(1, 2))

    def loss(self, batch: Mapping[str, Tensor]) -> tuple[Tensor, dict[str, float]]:
        """Training objective of one batch of B objects.

        batch: points, normals, delta_points (B, P, 3); query, delta_query (B, Q, 3); optional
        weight (B,) and basis (B, Q, K): the query points' rows of each object's own basis,
        into which the decoded displacements are then projected (:func:`into_basis`: a
        decoder trained into that basis). Per object, with s = cfg.delta_scale and e =
        decode(z_q) - delta_query,

            loss_b = ( sum(e^2) / s^2 + kl_weight * KL(q || N(mu_prior, I)) ) / (3 Q)
                     + strain_weight * (mean edge strain^2, see :func:`edge_strain`)
                     + rigid_weight * (rotations' error, see :func:`.rigid.offset_error`)
                     + smooth_weight * sum(e_s^2) / s^2 / (3 Q)

        i.e. the paper's ||δ - δ̂||^2 + λ KL on displacements in units of s, divided by the
        number of coordinates so that the value is O(1) whatever Q, plus (ours, off by
        default) a term on the change of length of the short edges between query points,
        which an L2 error on displacements lets through as wrinkles and stretch, and with a
        rigid head a term on how far each point's decoded rotation is from carrying its
        neighbours to their targets. With
        relative_floor r > 0 (ours, off by default) loss_b is divided by
        mean(delta_query^2) / s^2 + r^2: each object's error relative to its own deformation,
        so that small deformations (a beam's bend) count as much as large ones. z_q is a
        reparameterised posterior sample in training mode and the posterior mean in eval
        mode. Returns the (weighted) mean over objects and stats: loss, recon (MSE per
        coordinate, canonical units^2), kl (nats per object), rmse (sqrt of recon) and, when
        strain_weight > 0, strain (RMS edge strain of the decoded against the target shape);
        with a rigid head, turn (the RMS of the rotations' relative offset error); with
        smooth_weight > 0, smooth (the RMS error of the smooth head's field alone).
        """
        self._check_batch(batch)
        query, target = batch["query"], batch["delta_query"]
        prior = self.encode_prior(batch["points"], batch["normals"])
        mu_q, logvar_q = self.encode_posterior(batch["points"], batch["normals"],
                                               batch["delta_points"], prior)
        z = mu_q
        if self.training:
            z = mu_q + torch.randn_like(mu_q) * (0.5 * logvar_q).exp()
        out = self.relative(z, prior, query)
        decoded = out[..., :3]
        if "basis" in batch:  # (a least-squares solve: in single precision, not bf16)
            with torch.autocast(decoded.device.type, enabled=False):
                decoded = into_basis(batch["basis"].float(), decoded.float())
        err = decoded - target  # (B, Q, 3)
        recon = err.pow(2).mean(dim=(1, 2))  # (B,)
        kl = kl_divergence(mu_q, logvar_q, prior.mu)  # (B,)
        per_object = recon / self.cfg.delta_scale**2 + self.cfg.kl_weight * kl / err[0].numel()
        strain = None  # ~3 % of a training step on a CPU: only when it is in the loss
        if self.cfg.strain_weight > 0:
            strain = edge_strain(query, decoded, target, self.cfg.strain_neighbours)  # (B,)
            per_object = per_object + self.cfg.strain_weight * strain
        turn = None
        if self.cfg.rigid:  # each point's rotation must carry its neighbours where they go
            turn = offset_error(query, target, out[..., 3:], self.cfg.strain_neighbours)
            per_object = per_object + self.cfg.rigid_weight * turn
        smooth = None
        if self.cfg.smooth_weight > 0:  # the smooth head's field alone must fit it too
            smooth = self._smooth_error(z, prior, query, target)
            per_object = per_object + self.cfg.smooth_weight * smooth / self.cfg.delta_scale**2
        if self.cfg.relative_floor > 0:  # the whole term (recon and KL keep their balance)
            own = target.pow(2).mean(dim=(1, 2)) / self.cfg.delta_scale**2
            per_object = per_object / (own + self.cfg.relative_floor**2)
        weight = batch.get("weight")
        if weight is None:
            weight = torch.ones_like(recon)
        weight = weight.to(recon.dtype) / weight.sum().clamp_min(1e-12)
        total = (weight * per_object).sum()
        with torch.no_grad():
            recon_mean = float((weight * recon).sum())
            stats = {"loss": float(total), "recon": recon_mean,
                     "kl": float((weight * kl).sum()), "rmse": recon_mean**0.5}
            if strain is not None:
                stats["strain"] = float((weight * strain).sum()) ** 0.5
            if turn is not None:
                stats["turn"] = float((weight * turn).sum()) ** 0.5
            if smooth is not None:
                stats["smooth"] = float((weight * smooth).sum()) ** 0.5
        return total, stats

    def _check_batch(self, batch: Mapping[str, Tensor]) -> None:
        missing = [key for key in BATCH_KEYS if key not in batch]
        if missing:
            raise UsageError(f"model batch lacks {', '.join(missing)}; it needs "
                             f"{', '.join(BATCH_KEYS)} (and optionally weight)")
        B, P = batch["points"].shape[:2]
        Q = batch["query"].shape[1]
        want = {"points": (B, P, 3), "normals": (B, P, 3), "delta_points": (B, P, 3),
                "query": (B, Q, 3), "delta_query": (B, Q, 3)}
        for key, shape in want.items():
            if tuple(batch[key].shape) != shape:
                raise UsageError(f"model batch: {key} has shape {tuple(batch[key].shape)}, "
                                 f"expected {shape}")
        if "weight" in batch and tuple(batch["weight"].shape) != (B,):
            raise UsageError(f"model batch: weight must be ({B},), got "
                             f"{tuple(batch['weight'].shape)}")

    # --- using a trained model -----------------------------------------------------------

    def reconstruct(self, batch: Mapping[str, Tensor]) -> Tensor:
        """Posterior mean -> decode, no sampling: batch as in :meth:`loss` -> (B, Q, 3)."""
        prior = self.encode_prior(batch["points"], batch["normals"])
        mu_q, _ = self.encode_posterior(batch["points"], batch["normals"],
                                        batch["delta_points"], prior)
        return self.decode(mu_q, prior, batch["query"])

    def sample(self, prior: Prior, n: int, generator: torch.Generator | None = None, *,
               scale_tril: Tensor | None = None) -> Tensor:
        """n draws from each object's prior -> z (n, B, k): N(mu, I), or N(mu, L Lᵀ) with
        ``scale_tril`` L (k, k), the fitted spread of the data (``evaluate.prior``).

        The noise is drawn on the generator's device (CPU by default) and moved to mu's, so a
        seeded CPU generator gives the same z on every device. To decode all at once, see
        :meth:`decode` (``z.reshape(n * B, k)`` pairs with ``prior.repeat(n)``).
        """
        if n < 1:
            raise UsageError(f"sample: n must be >= 1, got {n}")
        mu = prior.mu.detach()
        k = mu.shape[-1]
        if scale_tril is not None and tuple(scale_tril.shape) != (k, k):
            raise UsageError(f"sample: scale_tril must be ({k}, {k}), got "
                             f"{tuple(scale_tril.shape)}")
        device = generator.device if generator is not None else mu.device
        eps = torch.randn((n, *mu.shape), generator=generator, device=device, dtype=mu.dtype)
        if scale_tril is not None:
            eps = eps @ scale_tril.to(device=device, dtype=mu.dtype).T
        return mu[None] + eps.to(mu.device)

    def fit_latent(self, prior: Prior, query: Tensor, target_delta: Tensor, steps: int = 200,
                   lr: float = 0.05, *, points: Tensor | None = None,
                   normals: Tensor | None = None, delta: Tensor | None = None,
                   prior_weight: float = 0.0) -> Tensor:
        """Inverse kinematics: the z (B, k) whose decode at query (B, Q, 3) best matches
        target_delta (B, Q, 3), by Adam on z alone (eval mode, parameters untouched).

        Starts from the posterior mean when points, normals, delta (B, P, 3) are given, else
        from prior.mu. Per object it minimises mean(e^2)/s^2 + prior_weight * |z - mu|^2 /
        (2 * 3Q) (prior_weight = cfg.kl_weight is the MAP estimate under the training loss)
        and returns the best z seen.
        """
        given = [x is not None for x in (points, normals, delta)]
        if any(given) and not all(given):
            raise UsageError("fit_latent: give all of points, normals and delta, or none")
        was_training = self.training
        self.eval()
        try:
            return self._fit(prior.detach(), query, target_delta, steps, lr, points, normals,
                             delta, prior_weight)
        finally:
            self.train(was_training)

    def _fit(self, prior: Prior, query: Tensor, target: Tensor, steps: int, lr: float,
             points: Tensor | None, normals: Tensor | None, delta: Tensor | None,
             prior_weight: float) -> Tensor:
        with torch.no_grad():
            start = prior.mu if points is None else self.encode_posterior(
                points, normals, delta, prior)[0]
        z = start.detach().clone().requires_grad_(True)  # (B, k)
        best, best_err = z.detach().clone(), torch.full_like(z[:, 0], float("inf"))
        opt = torch.optim.Adam([z], lr=lr)
        scale = self.cfg.delta_scale**2
        with torch.enable_grad():
            for step in range(steps + 1):
                err = (self.decode(z, prior, query) - target).pow(2).mean(dim=(1, 2)) / scale
                err = err + prior_weight * (z - prior.mu).pow(2).sum(-1) / (6 * query.shape[1])
                better = err.detach() < best_err  # (B,)
                best = torch.where(better[:, None], z.detach(), best)
                best_err = torch.where(better, err.detach(), best_err)
                if step == steps:
                    break
                # autograd.grad, not backward: the parameters' .grad stay untouched
                (z.grad,) = torch.autograd.grad(err.sum(), [z])
                opt.step()
        return best
