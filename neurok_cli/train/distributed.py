"""Data-parallel training under ``torchrun`` (PyTorch DDP; gloo on CPU, NCCL on CUDA).

``python -m torch.distributed.run --nproc_per_node N -m neurok_cli train ...`` starts N copies of
the command; each reads RANK, WORLD_SIZE and LOCAL_RANK from its environment, draws its share of
every step's batch (see :meth:`~neurok_cli.data.dataset.PairDataset.sample_batch`), and DDP
averages the gradients. Only rank 0 writes checkpoints, metrics and the bundle. Without those
variables everything here is a no-op and training runs in one process.
"""

from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as tdist
from torch import nn

from ..errors import UsageError


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the job."""

    rank: int = 0  # global rank
    world_size: int = 1  # number of processes
    local_rank: int = 0  # rank on this machine (selects the GPU)

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def from_env() -> DistInfo:
    """Read RANK, WORLD_SIZE and LOCAL_RANK (set by torchrun); a single process without them."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", str(rank)))
    except ValueError as e:
        raise UsageError(f"RANK, WORLD_SIZE and LOCAL_RANK must be integers ({e}); launch "
                         "with torchrun") from e
    if world < 1 or not 0 <= rank < world:
        raise UsageError(f"bad torchrun environment: RANK={rank}, WORLD_SIZE={world}")
    return DistInfo(rank=rank, world_size=world, local_rank=local)


def setup(device: torch.device) -> tuple[DistInfo, torch.device]:
    """Join the process group if launched by torchrun; return this rank's info and device.

    ``device`` is the resolved training device: on CUDA each rank takes ``cuda:LOCAL_RANK``
    and uses NCCL, otherwise gloo.
    """
    info = from_env()
    if not info.enabled:
        return info, device
    if device.type == "cuda":
        if info.local_rank >= torch.cuda.device_count():
            raise UsageError(f"LOCAL_RANK {info.local_rank} but only "
                             f"{torch.cuda.device_count()} GPUs; "
                             "start fewer (torch.distributed.run --nproc_per_node)")
        device = torch.device("cuda", info.local_rank)
        torch.cuda.set_device(device)
    if not tdist.is_initialized():
        tdist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo",
                                 rank=info.rank, world_size=info.world_size)
    return info, device


def teardown(info: DistInfo, *, clean: bool) -> None:
    """Leave the process group (no-op for a single process).

    Call it once nothing refers to the DDP wrapper any more. Objects in reference cycles that
    still hold the group (the wrapper's reducer does) are collected first: a gloo group freed
    during interpreter shutdown aborts the process. After a clean run every rank waits for
    the others (rank 0 may still be writing the bundle), so they leave together; after an
    error nobody waits for ranks that may never arrive.
    """
    if not (info.enabled and tdist.is_initialized()):
        return
    gc.collect()
    if clean:
        tdist.barrier()
    tdist.destroy_process_group()


def wrap(module: nn.Module, info: DistInfo, device: torch.device) -> nn.Module:
    """``module`` wrapped in DDP when distributed (parameters broadcast from rank 0)."""
    if not info.enabled:
        return module
    ids = [device.index] if device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(module, device_ids=ids)


def barrier(info: DistInfo) -> None:
    """Wait for every rank (no-op for a single process)."""
    if info.enabled:
        tdist.barrier()


def mean_over_ranks(values: dict[str, float], info: DistInfo,
                    device: torch.device) -> dict[str, float]:
    """The mean of each value over all ranks (every rank must call this together)."""
    if not info.enabled or not values:
        return dict(values)
    keys = sorted(values)
    t = torch.tensor([values[k] for k in keys], dtype=torch.float64, device=device)
    tdist.all_reduce(t)
    return {k: float(v) / info.world_size for k, v in zip(keys, t.tolist())}


def gather(obj: Any, info: DistInfo) -> list[Any]:
    """Every rank's ``obj`` (JSON-like), in rank order; ``[obj]`` for a single process."""
    if not info.enabled:
        return [obj]
    out: list[Any] = [None] * info.world_size
    tdist.all_gather_object(out, obj)
    return out


def parameter_digest(module: nn.Module) -> str:
    """SHA-256 of the module's parameters and buffers (bit-exact: equal digests, equal
    models)."""
    h = hashlib.sha256()
    for name, value in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(value.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()
