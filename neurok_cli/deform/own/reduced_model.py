"""The reduced model as data: everything one implicit step (``deform/own/step.py``) reads,
named arrays and values, so that another integrator (the web page's, ``render/web/
reduced.js``) steps the same equations (docs/reduced-model.md describes each entry).

The arrays are the step's own inputs, not its derived matrices: the basis as weights (at
most ``K`` handles a point, padded with zero weights) and rest points, the elements as what
their operator is built from (a sheet's triangles; a smooth solid's points and the basis
points its fit reads), the cotangent Laplacian, the contact's points; a reader rebuilds the
rows ``kron(w, [x - c, 1])``, the operator, the rest Hessian and the preconditioner from
them, as the step does. A 10k-vertex sphere's model with its 4 s clip is 1.0 MB deflated;
its operator alone was 1.25 MB.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...io.reduced import FORMAT, VERSION, ReducedModel


def _put_csr(arrays: dict, name: str, m: sp.spmatrix) -> None:
    m = sp.csr_matrix(m)
    m.sort_indices()
    arrays[f"{name}_indptr"] = m.indptr.astype(np.int32)
    arrays[f"{name}_indices"] = m.indices.astype(np.int32)
    arrays[f"{name}_data"] = m.data.astype(np.float64)
    arrays[f"{name}_shape"] = np.asarray(m.shape, np.int32)


def _put_padded(arrays: dict, name: str, w: sp.spmatrix) -> None:
    """Weights (n, H) as (n, K) handle indices and weights, K the most a row has."""
    w = sp.csr_matrix(w)
    w.sort_indices()
    counts = np.diff(w.indptr)
    k = max(int(counts.max(initial=0)), 1)
    idx = np.zeros((w.shape[0], k), np.int32)
    val = np.zeros((w.shape[0], k))
    slot = np.arange(w.nnz) - np.repeat(w.indptr[:-1], counts)
    row = np.repeat(np.arange(w.shape[0]), counts)
    idx[row, slot] = w.indices
    val[row, slot] = w.data
    arrays[f"{name}_index"] = idx
    arrays[f"{name}_weight"] = val


def describe(stepper, pushes: list[tuple[float, np.ndarray]],
             clip: tuple[np.ndarray, np.ndarray], fps: float, sub: int,
             constants: dict) -> ReducedModel:
    """The model a ``deform/own/step.Step`` integrates, started at rest moving at the clip's
    first velocity, with ``pushes`` [(time, momentum (4H, 3))] and the ``clip``'s
    coordinates and velocities at each frame ((T, 4H, 3) each, stored as float32 too: a
    start for the page's own steps from any frame, not a reference); ``constants``: the
    step's own."""
    mech = stepper.mech
    n = len(stepper.v)
    a: dict[str, np.ndarray] = {}
    values = {"format": FORMAT, "version": VERSION, "handles": int(mech.basis.handles),
              "vertices": n, "solid": bool(mech.solid), "step": float(stepper.h),
              "substeps": int(sub), "fps": float(fps), "frames": int(clip[0].shape[0]),
              "size": stepper.size, "weight": stepper.weight, "damping": stepper.beta,
              "friction": stepper.friction, "air": float(stepper.air.scale),
              "wind": [float(x) for x in stepper.wind], "gust": stepper.gust,
              "gravity": [float(x) for x in stepper.g], "mass": float(mech.mass_total),
              "constants": constants}
    law = mech.law
    values["law"] = {"kind": "neo-hookean" if mech.solid else "membrane",
                     "mu": float(law.mu), "lambda": float(law.lam),
                     "compression": float(getattr(law, "compression", 1.0)),
                     "patches": float(getattr(law, "share", 0.0))}
    if values["law"]["patches"]:
        _put_padded(a, "patches", law.patches)
    a["rest"] = np.asarray(stepper.v, np.float64)
    a["centres"] = np.asarray(mech.basis.centres, np.float64)
    _put_padded(a, "skin", mech.basis.weights[:n])
    if mech.solid:  # the lattice's nodes carry the mass (a sheet's: its vertices, skin)
        a["material_rest"] = np.asarray(mech.basis.points[n:], np.float64)
        _put_padded(a, "material", mech.basis.weights[n:])
    a["point_mass"] = np.asarray(mech.point_mass, np.float64)
    a["mass_matrix"] = mech.M
    a["free"] = stepper.N
    el = mech.elements
    if el.near is not None:  # a smooth solid's: its points and the basis points they read
        values["elements"] = "smooth"
        a["elements_at"], a["elements_near"] = el.at, el.near.astype(np.int32)
    elif el.faces is not None:  # a sheet's triangles
        values["elements"] = "triangles"
        a["elements_faces"] = el.faces.astype(np.int32)
    else:  # any other: the operator itself
        values["elements"] = "operator"
        _put_csr(a, "elements", el.D)
    a["elements_rest"] = np.ascontiguousarray(el.F0, np.float64)
    a["elements_measure"] = np.asarray(el.measure, np.float64)
    if mech.bending is not None:
        b = mech.bending
        _put_csr(a, "laplacian", b.L)
        a["bending_inv_area"] = b.inv_area
        a["bending_hessian"] = b.Q
        values["bending"] = {"rigidity": float(b.rigidity)}
    if stepper.k_contact is not None:
        _put_csr(a, "touch", stepper.touch)
        _put_padded(a, "touch_handles", stepper.touch_weights[n:])  # (the vertices': skin)
        a["touch_stiffness"] = stepper.k_contact
    a["air_index"] = stepper.air.index.astype(np.int32)
    a["air_weight"] = np.asarray(stepper.air.weight, np.float64)
    a["air_faces"] = stepper.air.faces.astype(np.int32)
    a["start_velocity"] = np.asarray(clip[1][0], np.float64)
    if pushes:
        a["push_time"] = np.asarray([t for t, _ in pushes], np.float64)
        a["push_momentum"] = np.stack([p for _, p in pushes]).astype(np.float64)
    a["clip_coords"] = clip[0].astype(np.float32)
    a["clip_velocities"] = clip[1].astype(np.float32)  # (a finite difference of the frames
    # was a frame late, and far off where it lands)
    return ReducedModel(a, values)
