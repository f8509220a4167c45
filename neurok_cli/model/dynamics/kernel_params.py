"""What the compiled dynamics (model/dynamics/kernel.py, kernel_terms.py) read of a
:class:`~neurok_cli.model.dynamics.equations.LatentDynamics`: one named tuple of arrays,
its numbers in one array at the indices below (module-level constants the compiled
functions read)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Params(NamedTuple):
    """One body and its environment, as the kernel reads them (see :func:`params`)."""

    rest: np.ndarray  # (Q, 3)
    linear: np.ndarray  # (Q, 3, k)
    quadratic: np.ndarray  # (Q, 3, k, k)
    mass: np.ndarray  # (Q,)
    centre: np.ndarray  # (3,)
    gravity: np.ndarray  # (3,)
    normals: np.ndarray  # (Q, 3)
    areas: np.ndarray  # (Q,)
    # springs d = G p + offset as CSR rows, stiffness, rest length, zero-length flags
    g_ptr: np.ndarray
    g_col: np.ndarray
    g_val: np.ndarray
    offset: np.ndarray  # (E, 3)
    stiffness: np.ndarray  # (E,)
    rest_length: np.ndarray  # (E,)
    zero: np.ndarray  # (E,) bool
    triangles: np.ndarray  # (T, 3) int64; empty without a volume term
    bound_stiffness: np.ndarray  # (k,)
    damping: np.ndarray  # (k, k) Rayleigh D
    latent_inertia: np.ndarray  # (k, k)
    free: np.ndarray  # (n,) bool
    wind: np.ndarray  # (3,)
    pin_index: np.ndarray  # (P,) int64
    pin_offset: np.ndarray  # (P, 3)
    pin_target: np.ndarray  # (P, 3)
    pin_mass: np.ndarray  # (P,)
    sc: np.ndarray  # the numbers, at the indices below (a tuple of arrays alone compiles
    # several times faster than one that mixes arrays and numbers)


SCALARS = ("bulk", "rest_volume", "q_radius", "ground", "friction", "contact_rate",
           "contact_damping", "contact_mass", "air", "closed", "air_drag", "gust", "joint",
           "pin_rate", "pin_damping", "size", "accuracy", "stability", "min_step",
           "max_stride", "burst", "max_steps", "gust_hz")
(BULK, REST_VOLUME, Q_RADIUS, GROUND, FRICTION, CONTACT_RATE, CONTACT_DAMPING, CONTACT_MASS,
 AIR, CLOSED, AIR_DRAG, GUST, JOINT, PIN_RATE, PIN_DAMPING, SIZE, ACCURACY, STABILITY,
 MIN_STEP, MAX_STRIDE, BURST, MAX_STEPS, GUST_HZ) = range(len(SCALARS))


def params(dyn, constants: dict) -> Params:
    """The kernel's view of a LatentDynamics ``dyn``; ``constants``: its step-control
    constants (rollout.KERNEL_CONSTANTS: the step control's and the gusts' frequency)."""
    a = lambda t: np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float64)  # noqa: E731
    i64 = lambda t: np.ascontiguousarray(t.cpu().numpy(), dtype=np.int64)  # noqa: E731
    body, env, sp = dyn.body, dyn.env, dyn.springs
    G = sp.G.to_dense().to_sparse_csr()
    vol = body.volume
    sc = np.zeros(len(SCALARS))
    for name, value in dict(
            bulk=0.0 if vol is None else vol.bulk,
            rest_volume=1.0 if vol is None else vol.rest_volume, q_radius=dyn.q_radius,
            ground=env.ground, friction=env.friction, contact_rate=env.contact_rate,
            contact_damping=env.contact_damping, contact_mass=dyn.contact_mass, air=dyn._air,
            closed=body.closed, air_drag=0.5 * env.air_density * env.drag, gust=env.gust,
            joint=dyn._joint, pin_rate=env.pin_rate, pin_damping=dyn.pin_damping,
            size=float(body.shape.rest.abs().max()),
            **{key.lower(): value for key, value in constants.items()}).items():
        sc[SCALARS.index(name)] = float(value)
    return Params(
        rest=a(body.shape.rest), linear=a(body.shape.linear), quadratic=a(body.shape.quadratic),
        mass=a(body.mass), centre=a(body.centre), gravity=a(dyn.g), normals=a(body.normals),
        areas=a(body.areas), g_ptr=i64(G.crow_indices()), g_col=i64(G.col_indices()),
        g_val=a(G.values()), offset=a(sp.offset), stiffness=a(sp.stiffness),
        rest_length=a(sp.rest_length), zero=sp.zero.cpu().numpy().astype(np.bool_),
        triangles=np.zeros((0, 3), np.int64) if vol is None else i64(vol.triangles),
        bound_stiffness=a(dyn.bound_stiffness), damping=a(dyn.D),
        latent_inertia=a(dyn.latent_inertia), free=dyn.free.cpu().numpy().astype(np.bool_),
        wind=a(dyn.wind), pin_index=i64(dyn._pin_index), pin_offset=a(dyn.pin_offset),
        pin_target=a(dyn.pin_target), pin_mass=a(dyn.pin_mass), sc=sc)
