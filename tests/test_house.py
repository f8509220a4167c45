"""The house's limits (docs/design.md, "Data flow"): no Python module of the package over 500
lines, no function outside ``cli/`` over 80. A command's module may hold its whole option
list in one function (Typer reads the options from its signature), so ``cli/`` keeps only the
module limit. No exceptions list: a module that grows is split by concern."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "neurok_cli"
MODULE_LINES = 500
FUNCTION_LINES = 80


def long_modules(root: Path = PACKAGE, most: int = MODULE_LINES) -> list[str]:
    """'path (n lines)' for each Python module under ``root`` longer than ``most`` lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > most:
            out.append(f"{path.relative_to(root.parent)} ({n} lines)")
    return out


def long_functions(root: Path = PACKAGE, most: int = FUNCTION_LINES,
                   skip: tuple[str, ...] = ("cli",)) -> list[str]:
    """'path:name (n lines)' for each function (or method) longer than ``most`` lines, its
    decorators and docstring included, outside the folders ``skip`` names."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] in skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                n = node.end_lineno - first + 1
                if n > most:
                    out.append(f"{path.relative_to(root.parent)}:{node.name} ({n} lines)")
    return out


def test_no_module_is_over_500_lines():
    assert long_modules() == [], "split these by concern"


def test_no_function_outside_cli_is_over_80_lines():
    assert long_functions() == [], "split these"


def test_the_checks_find_what_is_too_long(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "cli").mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    (pkg / "a.py").write_text(f"@staticmethod\ndef f():\n{body}\n\n\ndef g():\n    return 1\n")
    (pkg / "cli" / "c.py").write_text(f"def h():\n{body}\n    return 2\n")
    (pkg / "b.py").write_text("x = 1\n" * 501)
    assert long_functions(pkg) == ["pkg/a.py:f (82 lines)"]
    assert long_functions(pkg, skip=()) == ["pkg/a.py:f (82 lines)", "pkg/cli/c.py:h (82 lines)"]
    assert long_modules(pkg) == ["pkg/b.py (501 lines)"]
    assert long_modules(pkg, most=600) == []
