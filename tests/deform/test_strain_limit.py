"""``latent_motion`` with a strain limit: the decoded frames keep their edges near their rest
length, and the motion is otherwise the one decoded."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from neurok_cli.deform.learned.motion import latent_motion
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.evaluate.strain import edge_strain
from neurok_cli.model import load_bundle
from neurok_cli.model.strain import mesh_edges
from neurok_cli.scenario.conditions import Conditions, Impulse
from neurok_cli.scenario.spec import MotionConfig


@pytest.fixture(scope="module")
def poked():
    """A soft ball poked hard from the side, with no limit and with a 1 % one."""
    model, _ = load_bundle(resolve_weights("neurok-base"), "cpu")
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.2)
    v, faces = np.asarray(ball.vertices) + [0.0, 0.5, 0.0], np.asarray(ball.faces)
    cond = Conditions(ground=False, gravity=(0.0, 0.0, 0.0),
                      impulses=[Impulse(region="x>0.1", velocity=(-3.0, 0.0, 0.0))])
    runs = {}
    for limit in (None, 0.01):
        cfg = MotionConfig(category="soft", conditions=cond, seconds=0.4, fps=30,
                           strain_limit=limit)
        runs[limit] = latent_motion(model, v, faces, cfg)
    return v, faces, runs


def test_the_limit_brings_the_strain_down_and_leaves_the_motion(poked):
    v, faces, runs = poked
    free, held = runs[None].frames[0], runs[0.01].frames[0]
    e = mesh_edges(faces)
    s_free, s_held = edge_strain(v, free, e), edge_strain(v, held, e)
    assert s_free.max() > 0.05  # the poke strains the decoded ball ...
    assert s_held.mean() < 0.5 * s_free.mean()  # ... the limit takes most of it out
    assert np.quantile(s_held, 0.99) < np.quantile(s_free, 0.99)
    size = np.ptp(v, axis=0).max()
    moved = np.linalg.norm(held - free, axis=-1).mean() / size
    travel = np.linalg.norm(free - v, axis=-1).mean() / size
    assert moved < 0.2 * travel  # the shape is corrected, the motion stays
    assert runs[0.01].stats["strain_limit"] == 0.01 and runs[0.01].stats["strain_sweeps"] > 0
    assert runs[None].stats["strain_sweeps"] == 0


def test_pinned_vertices_stay_put_under_the_limit():
    model, _ = load_bundle(resolve_weights("neurok-base"), "cpu")
    box = trimesh.creation.box(extents=(1.0, 0.1, 0.1))
    box = box.subdivide().subdivide()
    v, faces = np.asarray(box.vertices) + [0.0, 1.0, 0.0], np.asarray(box.faces)
    cfg = MotionConfig(category="beam", seconds=0.3, fps=30, strain_limit=0.0,
                       conditions=Conditions(ground=False, pins=["x<0.05"]))
    frames = latent_motion(model, v, faces, cfg).frames[0]
    pinned = v[:, 0] < -0.45
    assert np.abs(frames[:, pinned] - v[pinned]).max() < 1e-9
    assert np.abs(frames[-1] - v).max() > 1e-3  # the rest of the beam moved
