"""Interrupted writes: a hidden ``.NAME.XXXXXXXX.part.npz`` left by a killed run is never
taken as a sequence and is removed by the rerun; SIGTERM cleans up like Ctrl-C, in the main
process and in dataset workers."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neurok_cli.cli import app
from neurok_cli.data.format import sequence_files
from neurok_cli.io.atomic import is_partial, remove_partials

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
GENERATE = ["--count", "2", "--seconds", "0.2", "--fps", "10", "--categories", "cloth"]


def _generate(folder: Path, *extra: str):
    result = runner.invoke(app, ["dataset", "generate", str(folder), *GENERATE, *extra,
                                 "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _plant(folder: Path) -> list[Path]:
    """What a run killed inside writes leaves: hidden part files and folders."""
    planted = [folder / "train" / ".000007_cloth_flag.k3j9x_1q.part.npz",
               folder / ".dataset.a1b2c3d4.part.json",
               folder / "rejected" / ".000003_cloth_flag.zzzzzzzz.part.json"]
    buf = io.BytesIO()
    np.savez(buf, frames=np.zeros((2, 3, 3), np.float32))  # readable, and still not data
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(buf.getvalue())
    (folder / "train" / ".x.abcdefgh.part").mkdir()
    return planted


def test_part_files_are_never_sequences_and_a_rerun_removes_them(tmp_path):
    data = tmp_path / "ds"
    header = _generate(data)
    files = sequence_files(data)
    assert len(files) == 2
    planted = _plant(data)
    assert sequence_files(data) == files  # not counted before the rerun either
    header = _generate(data)
    assert header["counts"]["train"] == {"cloth": 2} and "other" not in json.dumps(header)
    assert not any(p.exists() for p in planted)
    assert not [p for p in data.rglob(".*")]
    info = runner.invoke(app, ["dataset", "info", str(data), "--json"])
    assert info.exit_code == 0 and json.loads(info.stdout)["sequences"] == 2


def test_only_what_interrupted_writes_leave_is_removed(tmp_path):
    keep = [tmp_path / n for n in (".hidden_notes", "a.part.npz", ".a.part.npz", "seq.npz",
                                   ".b.short.part.npz")]
    gone = [tmp_path / n for n in (".seq.abcd_123.part.npz", ".frames.q1w2e3r4.part",
                                   ".frames.q1w2e3r4.old", ".clip.zzzzzzzz.part.mp4")]
    for p in keep + gone:
        p.write_text("x")
    assert all(is_partial(p) for p in gone) and not any(is_partial(p) for p in keep)
    assert sorted(remove_partials(tmp_path)) == sorted(gone)
    assert all(p.exists() for p in keep)


def _run(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("NEUROK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_sigterm_inside_an_atomic_write_removes_the_temporary(tmp_path):
    proc = _run("""
        import os, signal, sys, time
        from pathlib import Path
        from neurok_cli.cli._common import guarded
        from neurok_cli.io.atomic import atomic_path

        @guarded
        def write():
            with atomic_path(Path(sys.argv[1]) / "out.json") as tmp:
                tmp.write_text("half")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(30)

        write()
    """, str(tmp_path))
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip().splitlines() == ["neurok: terminated"]
    assert os.listdir(tmp_path) == []


# a write of a dataset sequence that is killed half-way: in the process itself or, with
# workers, by the parent terminating the pool
KILLED_WRITE = """
    import os, signal, sys, time
    from pathlib import Path
    write = Path.write_bytes

    def killed(self, data):
        write(self, data[: len(data) // 2])
        os.kill(os.getpid() if sys.argv[2] == "1" else os.getppid(), signal.SIGTERM)
        time.sleep(30)

    Path.write_bytes = killed
    from neurok_cli.cli import app
    app(["dataset", "generate", sys.argv[1], "--count", "2", "--seconds", "0.2", "--fps",
         "10", "--categories", "cloth", "--workers", sys.argv[2]])
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_while_a_dataset_is_written_leaves_nothing_half_written(tmp_path, workers):
    data = tmp_path / "ds"
    proc = _run(KILLED_WRITE, str(data), workers)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "neurok: terminated"
    assert "Traceback" not in proc.stderr
    assert [p for p in data.rglob("*") if p.is_file()] == []
    header = _generate(data, "--workers", workers)  # and the rerun finishes the job
    assert header["counts"]["train"] == {"cloth": 2}
