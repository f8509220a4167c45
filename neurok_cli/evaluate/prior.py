"""The fitted instance prior: where an object's deformed states lie in its latent space.

Training pulls each posterior towards N(mu(M0), I) with the paper's small KL weight, so the
posteriors settle in a much smaller region than the unit prior: draws from N(mu, I) decode to
shapes several times more strained than any frame of the data (``neurok eval``'s plausibility
table). As in ex-post density estimation for autoencoders, we fit the spread the data really
has: over training pairs whose M0 is the rest frame, the second moment of z - mu(M0) (the
posterior mean's offset from the instance's prior mean) per category, so the instance prior
becomes N(mu(M0), L Lᵀ) with its Cholesky factor L kept in the bundle.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..data.dataset import PairDataset, SamplingConfig, collate
from ..model import NeurokModel

RIDGE = 1e-6  # relative to the mean variance: keeps L invertible for unused directions


def fit_prior(model: NeurokModel, folder, split: str = "train", *, per_category: int = 512,
              batch: int = 16, seed: int = 0, categories: tuple[str, ...] | None = None,
              progress: Callable[[int, int], None] | None = None) -> dict:
    """The per-category latent spread of ``split`` under ``model``.

    For ``per_category`` pairs (M0 = frame 0, a random later frame, no augmentation) of each
    category, the posterior mean's offset d = mu_q - mu(M0). Returns {category: {"scale_tril":
    L as nested lists (k, k), lower triangular with L Lᵀ = mean(d dᵀ) (plus a tiny ridge),
    "rms": sqrt(mean |d|² / k), "pairs": count, "split": split}} for every category, or
    for ``categories`` (each drawn as in a full run).
    """
    if per_category < 2:
        raise ValueError("fit_prior needs at least 2 pairs per category")
    mc = model.cfg
    ds = PairDataset(folder, split, SamplingConfig(n_points=mc.n_points, n_query=mc.n_query,
                                                   seed=seed).without_augmentation(),
                     cache=False)
    dev = next(model.parameters()).device
    names = [n for n in ds.categories if categories is None or n in categories]
    total = per_category * len(names)
    done = 0
    out = {}
    for c, name in enumerate(ds.categories):
        if name not in names:
            continue
        members = np.array([i for i, cat in enumerate(ds.category_of) if cat == name])
        offsets = []
        for start in range(0, per_category, batch):
            items = []
            for j in range(start, min(per_category, start + batch)):
                rng = np.random.default_rng([seed, 31, c, j])
                items.append(ds.item(int(members[rng.integers(len(members))]), rng))
            b = {k: v.to(dev) for k, v in collate(items).items()}
            with torch.no_grad():
                prior = model.encode_prior(b["points"], b["normals"])
                mu_q, _ = model.encode_posterior(b["points"], b["normals"], b["delta_points"],
                                                 prior)
            offsets.append((mu_q - prior.mu).double().cpu())
            done += len(items)
            if progress:
                progress(done, total)
        d = torch.cat(offsets)  # (n, k)
        second = d.T @ d / len(d)
        k = second.shape[0]
        ridge = RIDGE * max(float(torch.trace(second)) / k, 1e-12)
        L = torch.linalg.cholesky(second + ridge * torch.eye(k, dtype=second.dtype))
        out[name] = {"scale_tril": L.tolist(), "rms": float(torch.trace(second) / k) ** 0.5,
                     "pairs": len(d), "split": split}
    return out

