"""``latent_motion`` with a rigid head: the mesh follows its driving points' decoded rigid
transforms (dual-quaternion blending) instead of local maps fitted to their motion."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import trimesh

from neurok_cli.deform.learned.motion import latent_motion
from neurok_cli.deform.learned.weights import resolve_weights
from neurok_cli.model import NeurokModel, load_bundle, model_config
from neurok_cli.scenario.conditions import Conditions, Impulse
from neurok_cli.scenario.spec import MotionConfig


@pytest.fixture(scope="module")
def models():
    """The shipped model without its rotations (a displacement head), and the same with a
    rigid head whose rotations are all 0 (as a fine-tune from it starts)."""
    shipped, _ = load_bundle(resolve_weights("neurok-base"), "cpu")
    state = shipped.state_dict()
    for key in ("decoder.final.linear.weight", "decoder.final.linear.bias"):
        state[key] = state[key][:3]
    plain = NeurokModel(model_config(shipped.cfg, rigid=False))
    plain.load_state_dict(state)
    rigid = NeurokModel(model_config(shipped.cfg, rigid=True))
    rigid.load_grown(plain.state_dict())
    return plain.eval(), rigid.eval()


def _poke(seconds: float = 0.4) -> MotionConfig:
    cond = Conditions(ground=False, gravity=(0.0, 0.0, 0.0),
                      impulses=[Impulse(region="x>0.1", velocity=(-3.0, 0.0, 0.0))])
    return MotionConfig(category="soft", conditions=cond, seconds=seconds, fps=30)


def test_a_rigid_head_with_no_rotation_moves_the_mesh_as_its_points(models):
    plain, rigid = models
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.2)
    v, faces = np.asarray(ball.vertices) + [0.0, 0.5, 0.0], np.asarray(ball.faces)
    a = latent_motion(plain, v, faces, _poke()).frames[0]
    b = latent_motion(rigid, v, faces, _poke()).frames[0]
    assert np.isfinite(b).all()
    # the same driving points' motion; only how vertices between them follow differs
    assert np.abs(a - b).max() < 0.02 * 0.4
    assert np.abs(a - b).max() > 0


def test_decoded_rotations_turn_the_surface_between_the_points(models):
    """Rotations of the rigid head are what turn the vertices between driving points: with
    the head's rotation outputs made large, the mesh differs from the zero-rotation one,
    stays finite and keeps its edges (strain bounded)."""
    _, rigid = models
    turned = NeurokModel(rigid.cfg)
    turned.load_state_dict(rigid.state_dict())
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        w = turned.decoder.final.linear.weight
        w[3:] = 0.05 * torch.randn(w[3:].shape, generator=g)
    turned.eval()
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.2)
    v, faces = np.asarray(ball.vertices) + [0.0, 0.5, 0.0], np.asarray(ball.faces)
    a = latent_motion(rigid, v, faces, _poke()).frames[0]
    b = latent_motion(turned, v, faces, _poke()).frames[0]
    assert np.isfinite(b).all()
    assert np.abs(a - b).max() > 1e-4


def test_a_sheets_bends_carry_their_own_rotations(models):
    _, rigid = models
    sheet = trimesh.creation.box(extents=(0.6, 0.002, 0.4))
    grid = trimesh.remesh.subdivide_to_size(sheet.vertices, sheet.faces, 0.05)
    v, faces = np.asarray(grid[0]) + [0.0, 0.6, 0.0], np.asarray(grid[1])
    cond = Conditions(pins=["x<0.05"])  # the sheet's left end, held
    cfg = MotionConfig(category="cloth", conditions=cond, seconds=0.5, fps=30)
    frames = latent_motion(rigid, v, faces, cfg).frames[0]
    assert np.isfinite(frames).all()
    assert frames[-1, :, 1].min() < 0.6 - 0.05  # the free end falls
