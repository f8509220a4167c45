"""Training tests run tiny models: one torch thread is faster than two fighting for a busy
CPU (and keeps results independent of the machine's core count)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
