"""A cloth's model as data (docs/reduced-model.md, "Cloth"): what the web page needs to step the
same fabric live (``render/web/cloth.js``): the simulation mesh, its fabric's terms, the
global step's factors (banded Cholesky under a reverse Cuthill-McKee order, one for implicit
Euler's step and one for BDF2's), the pins, the carry to the welded surface, and the clip's
states at every frame, where the page may take over.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...io.reduced import FORMAT, VERSION, ReducedModel
from .air import AIR, GUST_HZ
from .cloth_step import SKIN, ClothStep

QUANTUM = 32767  # the clip's positions as int16 over their bounding box (a page's budget:
# the flag's float32 positions and velocities were 2.5 MB of its 6.0)


def _put_csr(arrays: dict, name: str, m: sp.spmatrix) -> None:
    m = sp.csr_matrix(m)
    arrays[f"{name}_indptr"] = m.indptr.astype(np.int32)
    arrays[f"{name}_indices"] = m.indices.astype(np.int32)
    arrays[f"{name}_data"] = m.data.astype(np.float64)
    arrays[f"{name}_shape"] = np.asarray(m.shape, np.int32)


def describe_cloth(stepper: ClothStep, sheet, welded_rest: np.ndarray,
                   clip: tuple[np.ndarray, np.ndarray], fps: float, sub: int, ground: bool
                   ) -> ReducedModel:
    """The model the page steps: ``stepper``'s fabric and forces on ``sheet``'s simulation
    mesh (``cloth_motion._Sheet``), the welded surface's rest (N, 3) and the ``clip``'s
    simulation positions and velocities at every frame ((T, M, 3) each)."""
    fab, a = stepper.fabric, {}
    a["rest"] = np.asarray(welded_rest, np.float64)  # (the page's binding reads it)
    a["sim_rest"] = fab.rest
    a["sim_faces"] = fab.faces.astype(np.int32)
    a["mass"] = stepper.mass
    a["free"] = stepper.free.astype(np.int32)
    a["held"] = stepper.held.astype(np.int32)
    _put_csr(a, "stretch", fab.G)
    a["stretch_weight"] = fab.stretch_weight
    _put_csr(a, "laplacian", fab.L)
    a["bend_weight"] = fab.bend_weight
    a["rest_curvature"] = fab.rest_curvature
    a["rest_normals"] = fab.rest_normals
    _put_csr(a, "stiffness", stepper.K)
    for name, hh in (("euler", stepper.h), ("bdf2", 2 * stepper.h / 3)):
        stepper.use(hh)
        a[f"{name}_order"], a[f"{name}_band"] = stepper.factor.page_form()
    stepper.restart()
    cloth = np.full(len(welded_rest), -1, np.int32)
    cloth[sheet.cloth] = np.arange(len(sheet.cloth))
    a["cloth_vertex"] = cloth
    a["cloth_rest"] = sheet.cloth_rest
    if sheet.proxy is not None:
        p = sheet.proxy
        a["carry_index"], a["carry_weight"] = p.neighbours.astype(np.int32), p.weights
        a["ring_index"], a["ring_weight"] = p.ring.astype(np.int32), p.ring_weights
    lo, hi = clip[0].min(axis=(0, 1)), clip[0].max(axis=(0, 1))
    centre, scale = (lo + hi) / 2, np.maximum(hi - lo, 1e-12) / (2 * QUANTUM)
    a["clip_centre"], a["clip_scale"] = centre, scale  # positions = centre + q x scale
    a["clip_positions"] = np.round((clip[0] - centre) / scale).astype(np.int16)
    a["start_velocity"] = np.asarray(clip[1][0], np.float64)
    values = {"format": FORMAT, "version": VERSION, "kind": "cloth", "handles": 0,
              "vertices": len(welded_rest), "solid": False, "step": float(stepper.h),
              "substeps": int(sub), "fps": float(fps), "frames": int(clip[0].shape[0]),
              "iterations": int(stepper.iterations), "strain_limit": [fab.lo, fab.hi],
              "gravity": [float(g) for g in stepper.g], "wind": [float(w) for w in stepper.wind],
              "gust": float(stepper.gust), "air": float(stepper.air), "skin": SKIN,
              "friction": float(stepper.friction),
              "ground": bool(ground), "gust_hz": GUST_HZ,
              "self_contact": "clip only", "proxy": sheet.proxy is not None,
              "constants": {"air": float(AIR)}}  # (the air the page's wind control turns on)
    return ReducedModel(a, values)
