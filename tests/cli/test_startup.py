"""The command line answers help, an option error and a missing file before it loads the
numerical stack (numpy, torch, trimesh): those answers are to be instant."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from neurok_cli.cli import main
sys.argv = ["neurok", *{args!r}]
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in ("numpy", "torch", "trimesh", "scipy") if m in sys.modules)
print("HEAVY", ",".join(heavy))
"""


@pytest.mark.parametrize("args", [
    ["--help"],
    ["animate", "--help"],
    ["animate", "missing.obj"],
    ["animate", "missing.obj", "--preset", "jump"],
    ["simulate", "missing.glb"],
    ["preview", "missing.glb"],
])
def test_quick_answers_load_no_numerical_library(tmp_path, args):
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("HEAVY")]
    assert line == ["HEAVY "], (proc.stdout[-500:], proc.stderr[-500:])
    if "--help" not in args:
        assert "neurok: error:" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
