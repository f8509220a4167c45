"""``neurok calibrate``'s search: the latent physics' stiffness scale per category whose
rollouts best match the engine's deformation (docs/design.md, "Calibration")."""

from __future__ import annotations

from ..data.dataset import PairDataset, SamplingConfig
from ..model import NeurokModel
from ..scenario.conditions import CATEGORIES
from .suite import EvalConfig, Progress, rollout_errors, stratified

CALIBRATION_GRID = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0)
MAX_PEAK = 0.9  # calibration: the largest |q| over the latent bound a motion may reach


def calibrate(model: NeurokModel, folder, split: str = "val", *, per_category: int = 3,
              seconds: float = 2.0, grid: tuple[float, ...] = CALIBRATION_GRID, seed: int = 0,
              categories: tuple[str, ...] | None = None,
              progress: Progress | None = None) -> dict:
    """The stiffness scale per category whose latent rollouts best match the engine's
    deformation on ``per_category`` sequences of ``split`` (the shape error over ``seconds``,
    see :func:`rollout_errors`), searched over ``grid``; ``categories`` limits it to those
    (on the same sequences as a full run).

    The shape error, not the whole vertex error, decides: the stiffness sets how a body
    deforms, while where a tumbling body ends up depends on every contact on its way (on
    the test split, soft bodies' rollout error is more than 90 % in their centroid's path).
    Returns {category: {"stiffness", "damping", "error", "rest_error", "shape_error",
    "rest_shape_error", "errors", "shape_errors", "latent_peaks" (per grid value), ...}}."""
    ds = PairDataset(folder, split, SamplingConfig(seed=seed), cache=False)
    moved = [c for c in ds.categories if c in CATEGORIES]
    picks = stratified(ds, per_category * len(moved), seed, only=CATEGORIES)
    by_cat: dict[str, list[int]] = {}
    for idx in picks:
        if categories is None or ds.category_of[idx] in categories:
            by_cat.setdefault(ds.category_of[idx], []).append(idx)
    picks = [i for idxs in by_cat.values() for i in idxs]
    cfg = EvalConfig(seconds=seconds, seed=seed, space="learned")
    total = len(grid) * len(picks)
    done = 0
    out = {}
    for cat, idxs in sorted(by_cat.items()):
        errors, shapes, peaks = [], [], []
        rest = rest_shape = None
        for s in grid:
            res = rollout_errors(model, folder, split, cfg, {cat: {"stiffness": s}},
                                 picks=idxs)
            errors.append(res["error"]["all"])
            shapes.append(res["shape_error"]["all"])
            peaks.append(res["latent_peak"]["all"])
            rest, rest_shape = res["rest_error"]["all"], res["rest_shape_error"]["all"]
            done += len(idxs)
            if progress:
                progress(done, total)
        # only scales whose motions stay inside the fitted latent region qualify: beyond it
        # the decoded surface leaves the fit the physics ran on (a too-soft body collapses)
        inside = [i for i, p in enumerate(peaks) if p < MAX_PEAK]
        best = min(inside, key=lambda i: shapes[i]) if inside else len(grid) - 1
        out[cat] = {"stiffness": grid[best], "damping": 1.0, "error": errors[best],
                    "rest_error": rest, "shape_error": shapes[best],
                    "rest_shape_error": rest_shape, "errors": errors, "shape_errors": shapes,
                    "latent_peaks": peaks,
                    "grid": list(grid),
                    "sequences": len(idxs), "split": split, "seconds": seconds}
    return out
