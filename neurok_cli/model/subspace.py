"""Active subspace: the few latent directions that move one object's shape most."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from ..errors import UsageError
from .encoder import Prior
from .neurok import NeurokModel


class Subspace(NamedTuple):
    """Reduced coordinates q of one object: z = origin + basis @ q."""

    basis: Tensor  # (k, k_q) orthonormal columns: top right singular vectors of the Jacobian
    origin: Tensor  # (k,) the latent the Jacobian was taken at
    singular_values: Tensor  # (k_q,) descending: how far each direction moves the points

    def to_latent(self, q: Tensor) -> Tensor:
        """q (..., k_q) -> z (..., k)."""
        return self.origin + q @ self.basis.T

    def to_reduced(self, z: Tensor) -> Tensor:
        """z (..., k) -> q (..., k_q), the orthogonal projection onto the subspace."""
        return (z - self.origin) @ self.basis


def active_subspace(model: NeurokModel, prior: Prior, query: Tensor, k_q: int, *,
                    at: Tensor | None = None) -> Subspace:
    """Top-k_q right singular vectors of d decode / d z over the query points.

    prior of ONE object (B = 1), query (1, Q, 3) driving points, at (k,) or (1, k) the latent
    to linearise at (default prior.mu). The Jacobian, flattened to (3Q, k), is taken with the
    model as it is (call ``model.eval()`` first if it has dropout).
    """
    k = prior.mu.shape[-1]
    if prior.batch_size != 1 or query.dim() != 3 or query.shape[0] != 1:
        raise UsageError(f"active_subspace: one object at a time (B = 1); got a prior of "
                         f"{prior.batch_size} and query {tuple(query.shape)}")
    if not 1 <= k_q <= k:
        raise UsageError(f"active_subspace: k_q must be in [1, {k}] (the latent size), "
                         f"got {k_q}")
    z = prior.mu.detach() if at is None else at.detach().reshape(1, k)
    jac = model.jacobian(z, prior, query)  # (1, Q, 3, k)
    _, s, vh = torch.linalg.svd(jac.reshape(-1, k), full_matrices=False)  # vh (k, k)
    basis = vh[:k_q].T  # (k, k_q)
    # fix each column's sign (largest entry positive) so equal inputs give equal bases
    sign = torch.sign(basis.gather(0, basis.abs().argmax(dim=0, keepdim=True)))
    return Subspace(basis * sign, z[0], s[:k_q])
