"""Torch threads for a stage: within [1, torch's setting], the setting restored after."""

import time

import torch

from neurok_cli.model.threads import CpuWindow, torch_threads


def test_spare_threads_is_within_one_and_the_setting():
    window = CpuWindow()
    assert window.spare_threads() == torch.get_num_threads()  # too short to measure
    time.sleep(0.1)
    assert 1 <= window.spare_threads() <= torch.get_num_threads()


def test_torch_threads_restores_the_setting_also_after_an_error():
    before = torch.get_num_threads()
    try:
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError
    except RuntimeError:
        pass
    assert torch.get_num_threads() == before
