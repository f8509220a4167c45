"""Library errors name quantities, the CLI names its flags (docs/design.md, "Errors")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from typer.testing import CliRunner

import neurok_cli
from neurok_cli.cli import app
from neurok_cli.cli._common import flag
from neurok_cli.errors import UsageError
from neurok_cli.limits import check_frames

PACKAGE = Path(neurok_cli.__file__).parent
BARE_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
COMMAND_LINE = re.compile(r"(neurok [a-z]+|torch\.distributed\.run)[^;)]*")  # other commands
BLOB = Path(__file__).parents[1] / "examples" / "blob.obj"


def test_a_library_error_reads_its_quantity_in_words():
    with_marks = UsageError("«seconds» x «fps» is too long; «pin region» 'x<0' holds nothing")
    assert str(with_marks) == "seconds x fps is too long; pin region 'x<0' holds nothing"
    assert with_marks.render(flag) == "--seconds x --fps is too long; --pin 'x<0' holds nothing"


def test_the_library_check_names_seconds_not_the_flag():
    try:
        check_frames(0.0, 30.0)
    except UsageError as e:
        assert "seconds" in str(e) and "--" not in str(e)
    else:
        raise AssertionError("zero seconds passed the check")


def test_the_cli_names_the_flag_the_library_error_is_about():
    result = CliRunner().invoke(app, ["animate", str(BLOB), "--seconds", "0", "-o", "x.glb"])
    assert result.exit_code == 1
    assert "--seconds" in result.output and "«" not in result.output


def _raised_strings(tree: ast.AST):
    """The string pieces of every raised error and every appended warning in a module."""
    for node in ast.walk(tree):
        calls = []
        if isinstance(node, ast.Raise) and node.exc is not None:
            calls.append(node.exc)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "warnings"):
            calls.append(node)
        for call in calls:
            for piece in ast.walk(call):
                if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                    yield piece.lineno, piece.value


def test_no_library_message_names_a_flag():
    """Below the CLI a message names a quantity (errors.py's «marks»); only a whole command
    line (another command's usage) may carry a flag."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        for line, text in _raised_strings(ast.parse(path.read_text())):
            bare = BARE_FLAG.findall(COMMAND_LINE.sub("", text))
            if bare:
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {', '.join(bare)}")
    assert not found, "\n".join(found)


def _animate_error(tmp_path: Path, **options) -> str:
    from neurok_cli.deform.animate import AnimateConfig, animate

    missing = tmp_path / "not_there.obj"  # read after the options: a bad option comes first
    try:
        animate(AnimateConfig(input=missing, output=tmp_path / "x.glb", **options))
    except UsageError as e:
        return str(e)
    raise AssertionError(f"animate took {options}")


def test_animate_checks_its_options_before_it_reads_the_file(tmp_path):
    assert "young modulus" in _animate_error(tmp_path, young=-5.0)
    assert "stiffness" in _animate_error(tmp_path, stiffness=0.0)
    assert "units" in _animate_error(tmp_path, units="furlong")
    assert "ground at" in _animate_error(tmp_path, ground_at=float("nan"))
    assert "not for an articulated object" in _animate_error(
        tmp_path, material="articulated", samples=2)
    assert not (tmp_path / "x.glb").exists()
