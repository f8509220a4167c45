"""Torch threads for a stage: the cores the other processes left, within [1, torch's
setting], the setting restored after."""


import pytest
import torch

from neurok_cli.model import threads
from neurok_cli.model.threads import CpuWindow, torch_threads


@pytest.fixture
def machine(monkeypatch):
    """A machine whose clock, total CPU time and our own CPU time the test sets."""
    now = {"wall": 0.0, "busy": 100.0, "own": 10.0}
    monkeypatch.setattr(threads.time, "perf_counter", lambda: now["wall"])
    monkeypatch.setattr(threads, "_busy_seconds", lambda: now["busy"])
    monkeypatch.setattr(threads, "_own", lambda: now["own"])
    monkeypatch.setattr(threads, "_cores", lambda: {0, 1})
    return now


@pytest.mark.parametrize("others, ours, expected", [
    (0.0, 1.0, 2),  # an idle machine: both cores
    (1.0, 1.0, 1),  # another process busy on one core the whole time: one
    (0.4, 0.5, 2),  # another process busy 40 % of the time: it rounds to none
    (2.0, 0.0, 1),  # both cores taken: still one
])
def test_spare_threads_are_the_cores_others_left(machine, others, ours, expected):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        window = CpuWindow()
        machine["wall"] += 1.0  # one second: `others` cores of other processes, `ours` of ours
        machine["busy"] += others + ours
        machine["own"] += ours
        assert window.spare_threads() == expected
    finally:
        torch.set_num_threads(before)


def test_too_short_a_window_or_no_proc_stat_keeps_the_setting(machine, monkeypatch):
    window = CpuWindow()
    machine["wall"] += 0.01
    assert window.spare_threads() == torch.get_num_threads()
    monkeypatch.setattr(threads, "_busy_seconds", lambda: None)
    window = CpuWindow()
    machine["wall"] += 1.0
    assert window.spare_threads() == torch.get_num_threads()


def test_torch_threads_restores_the_setting_also_after_an_error():
    before = torch.get_num_threads()
    try:
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError
    except RuntimeError:
        pass
    assert torch.get_num_threads() == before


def test_busy_time_counts_only_the_cores_this_process_may_use(monkeypatch):
    """On a host shared through cpusets, /proc/stat lists every core; the load on cores we
    cannot run on must not count against ours."""
    import io

    stat = ("cpu  1000 0 0 5000 0 0 0 0 0 0\n"
            "cpu0 100 0 0 2500 0 0 0 0 0 0\n"
            "cpu1 900 0 0 2500 0 0 0 0 0 0\n"
            "intr 12345\n")
    monkeypatch.setattr(threads, "open", lambda *a, **k: io.StringIO(stat), raising=False)
    monkeypatch.setattr(threads, "_cores", lambda: {0})
    assert threads._busy_seconds() == 100 / threads._TICK
    monkeypatch.setattr(threads, "_cores", lambda: {0, 1})
    assert threads._busy_seconds() == 1000 / threads._TICK


def test_one_thread_on_the_cpu_only():
    before = torch.get_num_threads()
    with threads.one_thread_on("cpu"):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with threads.one_thread_on("meta"):  # any other device: the setting stands
        assert torch.get_num_threads() == before
