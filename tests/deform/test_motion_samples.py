"""``latent_motion`` with several samples: start states drawn from the instance prior."""

from __future__ import annotations

import numpy as np
import torch
import trimesh

from neurok_cli.deform.learned.motion import latent_motion
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.model import load_bundle
from neurok_cli.scenario.conditions import Conditions
from neurok_cli.scenario.spec import MotionConfig


def _spread_of_samples(model, spread, diversity=None) -> float:
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.2)
    v = np.asarray(ball.vertices) + [0.0, 0.5, 0.0]
    cfg = MotionConfig(category="soft", conditions=Conditions(ground=False), seconds=0.1,
                       fps=30, samples=3, seed=4, spread=spread, diversity=diversity)
    frames = latent_motion(model, v, np.asarray(ball.faces), cfg).frames  # (S, T, N, 3)
    return float(np.abs(frames[1:, 0] - frames[:1, 0]).max())


def test_sample_start_states_follow_the_fitted_spread():
    model, _ = load_bundle(resolve_weights("neurok-base"), "cpu")
    k = model.cfg.latent_dim
    unit = _spread_of_samples(model, None, diversity=1.0)
    narrow = _spread_of_samples(model, 0.01 * torch.eye(k, dtype=torch.float64))
    assert unit > 0 and 0 < narrow < 0.1 * unit  # a 100x narrower prior, much closer starts
    assert _spread_of_samples(model, None) < unit  # the unit prior's default draws are halved
