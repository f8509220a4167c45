"""The latent dynamics in time: the frame-by-frame rollout (events, sleeping, the energy
books), the integration between frames (compiled, model/dynamics/kernel.py, or through
``torchdiffeq``, the reference) and the step budget. Only :func:`integrate` calls
``torchdiffeq.odeint``; :func:`rollout` runs the same equations compiled unless asked for
that reference."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from ...errors import UsageError
from ...limits import INTEGRATORS
from ..threads import one_thread_on
from .equations import GUST_HZ, LatentDynamics, with_total
from .steps import ACCURACY, BURST, MAX_STRIDE, MIN_STEP, STABILITY

METHODS = INTEGRATORS
ENERGY_GAIN = 5.0  # a run whose energy balance grows by this x its energy scale is unstable
SLEEP_ENERGY = 1e-8  # a body at rest: kinetic energy below this x m g (half size) ...
SLEEP_TIME = 0.5  # ... at every frame for this long (s); see _rollout
MAX_STEPS = 100_000  # integration steps of one rollout: more is an error, never a hang
# what the compiled steps (model/dynamics/kernel.py) read of the above
KERNEL_CONSTANTS = dict(ACCURACY=ACCURACY, STABILITY=STABILITY, MIN_STEP=MIN_STEP,
                        MAX_STRIDE=MAX_STRIDE, BURST=BURST, MAX_STEPS=MAX_STEPS,
                        GUST_HZ=GUST_HZ)


@dataclass
class Event:
    """An instantaneous velocity change ``dv`` (m/s, world) of the points in ``mask``."""

    time: float
    mask: Tensor  # (Q,) bool
    dv: Tensor  # (3,)


@dataclass
class Rollout:
    """States at the frame times: rotations, translations and reduced coordinates."""

    times: Tensor  # (T,)
    rotation: Tensor  # (T, S, 3, 3)
    translation: Tensor  # (T, S, 3) r, world
    q: Tensor  # (T, S, k)
    energy: dict[str, Tensor] = field(default_factory=dict)  # name -> (T, S)
    steps: int = 0  # right-hand-side steps taken (rk4) or evaluations (dopri5)


def integrate(func: nn.Module, y: Tensor, t0: float, t1: float, *, method: str = "rk4",
              step: float = 1e-3, rtol: float = 1e-6, atol: float = 1e-8) -> Tensor:
    """The one call of ``torchdiffeq.odeint``: y at t1 from y at t0 (fixed ``step`` for rk4,
    made to divide t1 - t0 exactly; adaptive with rtol/atol for dopri5)."""
    if method not in METHODS:
        raise UsageError(f"unknown integrator {method!r}; choose one of {', '.join(METHODS)}")
    from torchdiffeq import odeint  # imported here: it pulls in scipy.integrate (~0.6 s)

    t = torch.tensor([t0, t1], dtype=y.dtype)
    if method == "rk4":
        n = max(1, math.ceil((t1 - t0) / step - 1e-9))
        grid = torch.linspace(t0, t1, n + 1, dtype=y.dtype)
        sol = odeint(func, y, t, method="rk4", options={"grid_constructor":
                                                        lambda f, y0, tt: grid})
    else:
        sol = odeint(func, y, t, method="dopri5", rtol=rtol, atol=atol)
    return sol[-1]


def rollout(dyn: LatentDynamics, y0: Tensor, times: Tensor, *, events: list[Event] = (),
            method: str = "rk4", step: float | None = None, compiled: bool = True,
            progress: Callable[[int, int], None] | None = None) -> Rollout:
    """Integrate from y0 at times[0] through every time in ``times`` (T,), applying the
    ``events`` (velocity kicks) at their times; the rotation is re-based after every frame so
    that θ stays small. ``step`` defaults to dyn.step_size(); ``progress(done, T)`` is called
    after each frame.

    A body that has come to rest sleeps, as in rigid-body engines: once every motion's kinetic
    energy has stayed below SLEEP_ENERGY x m g (half its size) at every frame for SLEEP_TIME,
    with no wind acting, its velocities are zeroed (that energy booked as dissipated) and the
    state is held without integrating until the next event wakes it. Resting contact is
    the stiffest part of most runs, so a clip that ends at rest costs what its motion costs.

    Runs in inference mode (no gradients flow through a rollout): each of the ~100 small
    tensor operations of an evaluation then skips autograd's bookkeeping, ~20 % of an
    evaluation's time on CPU. What it returns, and ``dyn``, hold ordinary tensors again.

    ``compiled`` (rk4 on CPU): the stretch between two frames runs in model/dynamics/kernel.py, the
    same equations compiled (~6x faster on a 10k-vertex sphere's clip); False: every
    evaluation through torch and torchdiffeq, the reference it is tested against.

    On CPU it runs on one thread: an evaluation's tensors hold a few hundred numbers, too few
    for intra-op threads to gain anything, and the threads' hand-offs cost far more than
    the arithmetic once another process shares the cores (a 10k-vertex sphere's 1 s clip
    while two processes ran: integration 2.0-2.4 s on one thread, 6.9-9.5 s on two)."""
    with one_thread_on(y0.device), torch.inference_mode():
        out = _rollout(dyn, y0, times, events=events, method=method, step=step,
                       compiled=compiled, progress=progress)
    dyn.R_ref, dyn._memo = dyn.R_ref.clone(), None
    return Rollout(times=out.times.clone(), rotation=out.rotation.clone(),
                   translation=out.translation.clone(), q=out.q.clone(),
                   energy={k: v.clone() for k, v in out.energy.items()}, steps=out.steps)

class _Integrator(NamedTuple):
    """How a rollout moves between frames: ``advance(y, t, stop, steps)`` integrates y from
    t to stop in bursts of at most BURST steps, the step re-sized before each (rk4:
    :meth:`LatentDynamics.step_now`), and returns it with the time reached and the steps
    taken so far; ``energy(y, t)`` is :meth:`LatentDynamics.energy`."""

    advance: Callable[[Tensor, float, float, int], tuple[Tensor, float, int]]
    energy: Callable[[Tensor, float], dict[str, Tensor]]


def _integrator(dyn: LatentDynamics, step: float, end: float, method: str, compiled: bool
                ) -> _Integrator:
    """Compiled (model/dynamics/kernel.py) for rk4 on CPU; else through :func:`integrate`
    (torchdiffeq), the reference."""
    if not (compiled and method == "rk4" and dyn.R_ref.device.type == "cpu"):
        return _Integrator(functools.partial(_advance_reference, dyn, step, end, method),
                           dyn.energy)
    from . import kernel, kernel_params

    P = kernel_params.params(dyn, KERNEL_CONSTANTS)

    def advance(y: Tensor, t: float, stop: float, steps: int) -> tuple[Tensor, float, int]:
        out, t, steps, h, status = kernel.advance(P, _array(dyn.R_ref), _array(y), t, stop,
                                                  step, steps)
        if status == kernel.TOO_MANY_STEPS:
            _step_budget(steps + (end - t) / h, h)
        if status == kernel.NOT_FINITE:
            raise FloatingPointError(f"the latent motion became non-finite at {t:.3f} s")
        return torch.from_numpy(out), t, steps

    def energy(y: Tensor, t: float) -> dict[str, Tensor]:
        values = torch.from_numpy(kernel.energy(P, _array(dyn.R_ref), _array(y)))
        return with_total(dict(zip(kernel.ENERGIES, values.T)))
    return _Integrator(advance, energy)


def _array(x: Tensor) -> np.ndarray:
    """A float64, C-ordered view for the compiled steps (whose one signature takes those)."""
    return np.ascontiguousarray(x.numpy(), dtype=np.float64)


def _advance_reference(dyn: LatentDynamics, step: float, end: float, method: str, y: Tensor,
                       t: float, stop: float, steps: int) -> tuple[Tensor, float, int]:
    while stop > t + 1e-12:  # in bursts, re-sizing the step after each
        h = dyn.step_now(y, step, t) if method == "rk4" else step
        n = max(1, math.ceil((stop - t) / h - 1e-9))
        t_end = stop if n <= BURST else t + BURST * h
        n = min(n, BURST)
        y = integrate(dyn, y, t, t_end, method=method, step=(t_end - t) / n)
        steps += n
        t = t_end
        if steps > MAX_STEPS:
            _step_budget(steps + (end - t) / h, h)
        if not torch.isfinite(y).all():
            raise FloatingPointError(f"the latent motion became non-finite at {t:.3f} s")
    return y, t, steps


def _step_budget(steps: float, step: float) -> None:
    """Refuse a rollout of more than MAX_STEPS steps (an object far too small or stiff for
    its step), which would otherwise run for hours or never end."""
    if steps > MAX_STEPS:
        raise UsageError(f"the motion needs about {steps:,.0f} integration steps of {step:.2g} s, "
                         f"more than the {MAX_STEPS:,} one run may take: the object is too "
                         "small or too stiff for its size; give its real size («size»), a "
                         "smaller «stiffness» or «young modulus», or fewer «seconds»")


def _rollout(dyn: LatentDynamics, y0: Tensor, times: Tensor, *, events: list[Event],
             method: str, step: float | None, compiled: bool,
             progress: Callable[[int, int], None] | None = None) -> Rollout:
    step = step or dyn.step_size()
    _step_budget((float(times[-1]) - float(times[0])) / step, step)
    advance, energy_of = _integrator(dyn, step, float(times[-1]), method, compiled)
    pending = sorted(events, key=lambda e: e.time)
    y, t_now = y0, float(times[0])
    T, S = len(times), y0.shape[0]
    rot = torch.empty(T, S, 3, 3, dtype=torch.float64)
    trans = torch.empty(T, S, 3, dtype=torch.float64)
    qs = torch.empty(T, S, dyn.k, dtype=torch.float64)
    energy: dict[str, list[Tensor]] = {}
    steps = 0
    weight_scale = dyn.mass_total * 9.81 * float(dyn.body.shape.rest.abs().max())  # m g L/2
    still_since: float | None = None  # time from which every frame has been at rest
    asleep = False
    for i in range(T):
        target = float(times[i])
        while True:
            while pending and pending[0].time <= t_now + 1e-12:
                e = pending.pop(0)
                y = dyn.kick(y, e.mask, e.dv.to(torch.float64))
                asleep, still_since = False, None
            stop = min(target, pending[0].time) if pending else target
            if asleep:
                t_now = stop
            y, t_now, steps = advance(y, t_now, stop, steps)
            if stop >= target - 1e-12:
                break
        if not torch.isfinite(y).all():
            raise FloatingPointError(f"the latent motion became non-finite at {t_now:.3f} s")
        for name, value in energy_of(y, t_now).items():
            energy.setdefault(name, []).append(value)
        gain = energy["total"][-1] - energy["total"][0]
        scale = (energy["kinetic"][0] + energy["gravity"][0].abs() + energy["work"][-1].abs()
                 + weight_scale)
        if bool((gain > ENERGY_GAIN * scale).any()):
            raise FloatingPointError(f"the latent motion gained energy it was not given (an "
                                     f"instability) at {t_now:.3f} s")
        if not asleep and not dyn._windy:
            if not bool((energy["kinetic"][-1] < SLEEP_ENERGY * weight_scale).all()):
                still_since = None
            elif still_since is None:
                still_since = t_now
            if still_since is not None and t_now - still_since >= SLEEP_TIME - 1e-9:
                y, asleep = dyn.halt(y), True
        y = dyn.rebase(y)
        r, _, q, *_ = dyn.split(y)
        rot[i], trans[i], qs[i] = dyn.R_ref, r, q
        if progress is not None:
            progress(i + 1, T)
    if method != "rk4":
        steps = dyn.evaluations
    return Rollout(times=times.to(torch.float64), rotation=rot, translation=trans, q=qs,
                   energy={k: torch.stack(v) for k, v in energy.items()}, steps=steps)
