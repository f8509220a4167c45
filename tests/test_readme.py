"""README's commands work as written: every `neurok ...` command in it parses, the commands of
its code blocks run (animations shortened to 0.3 s) on the shipped examples, its install
steps are the ones CI runs, and the files it points to exist."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from neurok_cli.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()
SHORT = ["--seconds", "0.3"]  # what the run test adds to every `neurok animate`


def code_blocks(text: str) -> list[str]:
    """The bodies of the fenced code blocks."""
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)


def block_commands(text: str) -> list[list[str]]:
    """Every `neurok ...` command of the code blocks, as argument lists without `neurok`, in
    order; continued lines joined, comments dropped, `a && b` split."""
    out = []
    for block in code_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            commands, current = [], []
            for w in words:
                if w in ("&&", ";", "||"):
                    commands.append(current)
                    current = []
                else:
                    current.append(w)
            commands.append(current)
            out += [c[1:] for c in commands if c[:1] == ["neurok"]]
    return out


def inline_commands(text: str) -> list[list[str]]:
    """Every inline `neurok ...` span outside the code blocks that gives arguments (a bare
    `neurok simulate` names a command), as an argument list."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    spans = [shlex.split(s)[1:] for s in re.findall(r"`(neurok [^`]+)`", prose)]
    return [s for s in spans if len(s) > 1]


def parse(args: list[str]) -> None:
    """Parse ``args`` as the `neurok` command line does, without running the command: every
    option must exist, every value convert and every required argument be there."""
    cmd = typer.main.get_command(app)
    name, rest = "neurok", list(args)
    while hasattr(cmd, "commands"):  # a group: descend to its subcommand
        assert rest and rest[0] in cmd.commands, f"no command {rest[:1]} in `{name}`"
        name, cmd, rest = rest[0], cmd.commands[rest[0]], rest[1:]
    try:
        cmd.make_context(name, rest)
    except Exception as exc:  # the parser's usage errors, whatever module defines them
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        pytest.fail(f"`neurok {shlex.join(args)}` does not parse: {message}")


ALL = block_commands(README) + inline_commands(README)


def test_readme_has_commands_and_a_short_quick_start():
    assert len(README.splitlines()) <= 160
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    cmds = block_commands(quick)
    assert [c[0] for c in cmds] == ["animate", "preview"], cmds
    first_screen = "\n".join(README.splitlines()[:30])
    assert block_commands(first_screen) == cmds  # both in the first screen


@pytest.mark.parametrize("args", ALL, ids=[" ".join(a)[:60] for a in ALL])
def test_every_readme_command_parses(args):
    parse(args)


def test_the_install_steps_are_the_ones_ci_runs():
    """.ci/run installs and checks exactly as README says (its own extra flags aside)."""
    blocks = "\n".join(code_blocks(README))
    pip = next(line for line in CI.splitlines() if line.startswith("pip install torch"))
    assert pip in blocks
    npm = next(line for line in CI.splitlines() if line.startswith("npm ci"))
    assert npm.startswith("npm ci --prefix tools") and "npm ci --prefix tools" in blocks
    ci_preview = next(line for line in CI.splitlines() if line.startswith("neurok preview"))
    assert shlex.split(ci_preview)[:3] == ["neurok", "preview", "examples/flag.glb"]
    assert "neurok preview examples/flag.glb -o" in blocks
    assert "python -m pytest" in blocks and "python -m pytest" in CI


def test_linked_files_exist():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links
    for link in links:
        if "://" not in link:
            assert (ROOT / link).exists(), link


def test_measured_table_is_the_one_the_benchmarks_write():
    """README's table is what `benchmarks/results.py --summary docs/plausibility.json --bones
    docs/bench_bones.json --speed docs/bench_animate.json --page docs/bench_page.json --fit
    docs/bench_fit.json --cloth docs/bench_cloth.json` writes from the shipped bundle's
    figures: no figure typed by hand."""
    spec = importlib.util.spec_from_file_location("results", ROOT / "benchmarks" / "results.py")
    results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    config = ROOT / "neurok_cli" / "weights" / "neurok-base" / "config.json"
    plaus = json.loads((ROOT / "docs" / "plausibility.json").read_text())
    bones = json.loads((ROOT / "docs" / "bench_bones.json").read_text())
    speed = json.loads((ROOT / "docs" / "bench_animate.json").read_text())
    page = json.loads((ROOT / "docs" / "bench_page.json").read_text())
    fit = json.loads((ROOT / "docs" / "bench_fit.json").read_text())
    cloth = json.loads((ROOT / "docs" / "bench_cloth.json").read_text())
    table = results.summary_table(json.loads(config.read_text())["metrics"], plaus, bones, speed,
                                  page, fit, cloth)
    begin, end = results.SUMMARY
    assert README.split(begin, 1)[1].split(end, 1)[0].strip() == "\n".join(table)


def test_code_block_commands_run_on_the_examples(tmp_path, monkeypatch):
    """The code blocks' commands, in order, in a folder holding the shipped examples (the
    quick start first: animate, then preview what it wrote); animations 0.3 s long."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("*.py"))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in block_commands(README):
        if args[0] == "animate":
            args = [*args, *SHORT]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        out = Path(args[args.index("-o") + 1]) if "-o" in args else None
        assert out is None or out.stat().st_size > 0, args
