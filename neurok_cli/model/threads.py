"""How many torch threads a stage gets on a machine it may share.

Torch's intra-op threads split every operation evenly across the cores; when another
process holds one of them, each operation waits for the share that lost its core, and the
stage slows instead of speeding up (a 10k-vertex sphere's decode on a 2-core machine with
another process busy: 1.1-1.3 s on one thread, 5.6-9.8 s on two; on the idle machine
0.3 s of decoder time on two, 0.6 s on one). So a stage gets the cores that the other
processes left idle over a recent stretch of time (Linux: /proc/stat against this
process's own CPU time); where that cannot be read, torch's own setting stands.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _busy_seconds() -> float | None:
    """CPU seconds all processes spent since boot on the cores this process may run on
    (its affinity: on a host shared through cpusets, the other cores' load is not ours to
    subtract), or None off Linux."""
    mine = _cores()
    try:
        with open("/proc/stat") as f:
            rows = [line.split() for line in f if line.startswith("cpu") and line[3:4].isdigit()]
    except (OSError, ValueError):
        return None
    total = 0.0
    for row in rows:
        if mine is not None and int(row[0][3:]) not in mine:
            continue
        fields = [float(x) for x in row[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
        total += sum(fields[:8]) - idle  # guest time is counted within user
    return total / _TICK if rows else None


def _cores() -> set[int] | None:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None


class CpuWindow:
    """A stretch of time from now on, over which :meth:`spare_threads` measures how much
    of the machine the other processes used."""

    def __init__(self) -> None:
        self.wall, self.busy, self.own = time.perf_counter(), _busy_seconds(), _own()

    def spare_threads(self) -> int:
        """Torch threads for the next stage: the cores left after the other processes' mean
        use since the window opened (rounded), at least 1 and at most torch's setting."""
        most = torch.get_num_threads()
        busy, wall = _busy_seconds(), time.perf_counter() - self.wall
        if busy is None or self.busy is None or wall < 0.05:
            return most
        others = max(busy - self.busy - (_own() - self.own), 0.0) / wall  # cores
        mine = _cores()
        cores = len(mine) if mine is not None else (os.cpu_count() or 1)
        return max(1, min(most, int(cores - others + 0.5)))


def _own() -> float:
    t = os.times()
    return t.user + t.system


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Torch on ``n`` intra-op threads inside the block, its setting restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def one_thread_on(device: torch.device | str) -> contextlib.AbstractContextManager:
    """One torch thread inside the block where ``device`` is the CPU (small tensors, or a
    result that must not depend on the thread count); elsewhere the setting stands."""
    return torch_threads(1) if torch.device(device).type == "cpu" else contextlib.nullcontext()
