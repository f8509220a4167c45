"""Imports run one way: every module of ``neurok_cli`` imports only rooms after its own in the
order that docs/design.md writes down ("Data flow", the line that begins ``Import order:``),
and no chain of top-level imports comes back to where it started.

Every import is read with ``ast``: absolute and relative, at module level, inside functions
and under ``if TYPE_CHECKING:``. The order applies to all of them; the circle check to those
that run when the module is imported (not inside a function, not under ``TYPE_CHECKING``).
The package root ``neurok_cli/__init__.py`` holds only ``__version__``: anything may import
it and it imports nothing of the package; ``neurok_cli/__main__.py`` runs the command line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "neurok_cli"
DESIGN = ROOT / "docs" / "design.md"
ORDER_PREFIX = "Import order:"
ENTRY = f"{PACKAGE}.__main__"  # `python -m neurok_cli`: above every room


@dataclass(frozen=True)
class Edge:
    """One import: ``importer`` imports ``imported`` (dotted module names) at ``where``
    (path:line); ``runtime`` when it runs as the importer itself is imported."""

    importer: str
    imported: str
    where: str
    runtime: bool = True


def read_order(text: str) -> list[str]:
    """The rooms, top first, from the one line of ``text`` that begins ``Import order:``
    (each room's name in backticks, joined by arrows)."""
    lines = [line for line in text.splitlines() if line.startswith(ORDER_PREFIX)]
    if len(lines) != 1:
        raise ValueError(f"docs/design.md should hold one line beginning {ORDER_PREFIX!r}, "
                         f"found {len(lines)}")
    rooms = re.findall(r"`([A-Za-z_][A-Za-z0-9_.]*)`", lines[0])
    if len(rooms) < 2 or len(set(rooms)) != len(rooms):
        raise ValueError(f"cannot read an order of distinct rooms from {lines[0]!r}")
    return rooms


def module_name(path: Path, root: Path) -> str:
    """``neurok_cli/io/mesh.py`` -> ``neurok_cli.io.mesh``; a package's ``__init__`` is the
    package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p, root): p for p in sorted((root / PACKAGE).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, runtime: bool = True):
    """(node, runtime) for every import statement below ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, runtime
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _imports(node, False)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), False)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), runtime)
        else:
            yield from _imports(node, runtime)


def _resolve(name: str, known: set[str]) -> str:
    """The longest prefix of ``name`` that is a module of the package (``name`` itself where
    none is, e.g. a folder without ``__init__``)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in known:
            return ".".join(parts[:n])
    return name


def imports_of(source: str, name: str, *, is_package: bool, known: set[str],
               path: str = "<source>") -> list[Edge]:
    """The package-internal imports of one module's source, resolved to module names."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    edges = []
    for node, runtime in _imports(ast.parse(source)):
        where = f"{path}:{node.lineno}"
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:
                base = here[:len(here) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        edges += [Edge(name, _resolve(t, known), where, runtime) for t in targets
                  if t == PACKAGE or t.startswith(PACKAGE + ".")]
    return edges


def package_edges(root: Path = ROOT) -> list[Edge]:
    """Every package-internal import of every module."""
    modules = package_modules(root)
    known = set(modules)
    edges = []
    for name, path in modules.items():
        edges += imports_of(path.read_text(encoding="utf-8"), name,
                            is_package=path.name == "__init__.py", known=known,
                            path=str(path.relative_to(root)))
    return edges


def with_packages(edges: Iterable[Edge], known: set[str]) -> list[Edge]:
    """``edges`` and, for each, the packages above the imported module that the importer is
    not inside: importing ``a.b.c`` runs ``a/b/__init__.py`` first."""
    out = list(edges)
    for e in edges:
        parts = e.imported.split(".")
        for n in range(2, len(parts)):
            above = ".".join(parts[:n])
            if above in known and not (e.importer + ".").startswith(above + "."):
                out.append(Edge(e.importer, above, f"{e.where} (its package)", e.runtime))
    return out


def room(module: str, rooms: Iterable[str] = ()) -> str | None:
    """The room a module lives in (``neurok_cli.io.gltf.read`` -> ``io``): its top folder, or
    a folder inside it that ``rooms`` names as a room of its own (``neurok_cli.deform.own.step``
    -> ``deform.own`` where ``deform.own`` is one); None for the package root."""
    parts = module.split(".")
    if len(parts) > 2 and f"{parts[1]}.{parts[2]}" in set(rooms):
        return f"{parts[1]}.{parts[2]}"
    return parts[1] if len(parts) > 1 else None


def order_violations(edges: Iterable[Edge], order: list[str]) -> list[str]:
    """One message per import against the order (rooms top first); imports within one room
    are free."""
    rank = {r: i for i, r in enumerate(order)}
    out = []
    for e in edges:
        a, b = room(e.importer, order), room(e.imported, order)
        head = f"{e.where}: {e.importer} imports {e.imported}"
        if e.imported == ENTRY:
            out.append(f"{head}: nothing imports the entry point {ENTRY}")
        elif e.importer == ENTRY or a == b or b is None and a is not None:
            continue  # the entry point; one room; __version__ from the root
        elif a is None:
            out.append(f"{head}: the package root holds only __version__ and imports no room")
        elif a not in rank or b not in rank:
            missing = a if a not in rank else b
            out.append(f"{head}: room {missing!r} is not in docs/design.md's import order")
        elif rank[b] <= rank[a]:
            below = " → ".join(order[rank[a] + 1:]) or "nothing"
            out.append(f"{head}: {a!r} may import only the rooms after it in docs/design.md's "
                       f"import order ({below}), and {b!r} comes "
                       f"{'before' if rank[b] < rank[a] else 'at'} it")
    return out


def _cycle_in(nodes: set[str], graph: dict[str, list[Edge]]) -> list[Edge]:
    """One circle of edges inside a strongly connected set of nodes."""
    start = min(nodes)
    paths = {start: []}
    queue = [start]
    while queue:  # breadth first: the shortest way round
        node = queue.pop(0)
        for e in graph.get(node, []):
            if e.imported == start:
                return paths[node] + [e]
            if e.imported in nodes and e.imported not in paths:
                paths[e.imported] = paths[node] + [e]
                queue.append(e.imported)
    raise AssertionError("not strongly connected")


def cycles(edges: Iterable[Edge]) -> list[str]:
    """One message per set of modules that import one another round a circle at import
    time (Tarjan's strongly connected components over the runtime imports)."""
    graph: dict[str, list[Edge]] = {}
    for e in edges:
        if e.runtime:
            graph.setdefault(e.importer, []).append(e)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for e in graph.get(v, []):
            w = e.imported
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                on.discard(w)
                members.add(w)
                if w == v:
                    break
            if len(members) > 1 or any(e.imported == v for e in graph.get(v, [])):
                ring = _cycle_in(members, graph)
                path = " -> ".join([ring[0].importer] + [e.imported for e in ring])
                steps = "; ".join(f"{e.importer} imports {e.imported} at {e.where}"
                                  for e in ring)
                out.append(f"import circle {path}: no module may import itself back through "
                           f"top-level imports ({steps})")

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# --- the package -------------------------------------------------------------------------

def test_every_room_is_in_the_order_and_every_name_in_it_a_room():
    order = read_order(DESIGN.read_text(encoding="utf-8"))
    rooms = {room(m, order) for m in package_modules()} - {None, "__main__"}
    assert sorted(rooms - set(order)) == [], "rooms missing from docs/design.md's import order"
    assert sorted(set(order) - rooms) == [], "names in the import order that are no room"


def test_imports_follow_the_order_in_design_md():
    order = read_order(DESIGN.read_text(encoding="utf-8"))
    edges = package_edges()
    assert len(edges) > 100  # the walk found the package's imports
    bad = order_violations(edges, order)
    assert not bad, "imports against the order:\n" + "\n".join(bad)


def test_no_circle_of_top_level_imports():
    bad = cycles(with_packages(package_edges(), set(package_modules())))
    assert not bad, "\n".join(bad)


# --- the checks themselves -----------------------------------------------------------------

ORDER = ["cli", "deform", "model", "errors"]


def _e(a: str, b: str, runtime: bool = True) -> Edge:
    def name(m: str) -> str:
        return f"{PACKAGE}.{m}" if m else PACKAGE
    return Edge(name(a), name(b), "x.py:1", runtime)


def test_the_order_is_read_from_one_line():
    text = "prose\nImport order: `cli` → `deform` → `model` → `errors`\nmore `prose`"
    assert read_order(text) == ORDER
    with pytest.raises(ValueError, match="one line"):
        read_order(text + "\nImport order: `a` → `b`")
    with pytest.raises(ValueError, match="one line"):
        read_order("no order here")


def test_an_upward_import_fails_and_names_both_modules_and_the_rule():
    assert order_violations([_e("cli.animate", "deform.motion"),
                             _e("deform.motion", "deform.body"),  # one room
                             _e("deform.motion", "errors"),
                             _e("model.net", ""),  # __version__ from the root
                             _e("__main__", "cli")], ORDER) == []
    (msg,) = order_violations([_e("model.net", "deform.motion")], ORDER)
    assert "neurok_cli.model.net imports neurok_cli.deform.motion" in msg
    assert "'model' may import only the rooms after it" in msg and "(errors)" in msg
    assert order_violations([_e("ghost.x", "errors")], ORDER)[0].endswith(
        "room 'ghost' is not in docs/design.md's import order")
    assert "imports no room" in order_violations([_e("", "errors")], ORDER)[0]
    assert "entry point" in order_violations([_e("cli", "__main__")], ORDER)[0]


def test_a_room_inside_a_room_keeps_its_own_place_in_the_order():
    order = ["cli", "deform", "sim", "deform.own", "model", "errors"]
    assert room(f"{PACKAGE}.deform.own.step", order) == "deform.own"
    assert room(f"{PACKAGE}.deform.animate", order) == "deform"
    assert room(f"{PACKAGE}.deform.own.step") == "deform"  # (no such room named)
    assert order_violations([_e("deform.animate", "deform.own.step"),
                             _e("deform.own.step", "model.net"),
                             _e("sim.engine", "deform.own.step")], order) == []
    (msg,) = order_violations([_e("deform.own.step", "sim.engine")], order)
    assert "'deform.own' may import only the rooms after it" in msg
    (msg,) = order_violations([_e("deform.own.step", "deform.animate")], order)
    assert "'deform' comes before it" in msg
    assert read_order("Import order: `deform` → `deform.own` → `errors`") == [
        "deform", "deform.own", "errors"]


def test_a_circle_fails_and_one_inside_functions_does_not():
    ring = [_e("deform.a", "deform.b"), _e("deform.b", "deform.c"), _e("deform.c", "deform.a"),
            _e("deform.c", "errors")]
    (msg,) = cycles(ring)
    assert ("import circle neurok_cli.deform.a -> neurok_cli.deform.b -> neurok_cli.deform.c"
            " -> neurok_cli.deform.a") in msg
    assert cycles([_e("model.a", "model.a")])
    assert cycles([_e("deform.a", "deform.b"), _e("deform.b", "deform.a", runtime=False)]) == []
    # through a package's __init__, which runs before the module imported from it
    known = {f"{PACKAGE}.model", f"{PACKAGE}.model.net", f"{PACKAGE}.deform.a"}
    ring = [_e("deform.a", "model.net"), _e("model", "deform.a")]
    assert cycles(ring) == [] and cycles(with_packages(ring, known))
    assert with_packages([_e("model.net", "model.layers")], known) == [
        _e("model.net", "model.layers")]


def test_every_kind_of_import_is_read():
    known = {PACKAGE, f"{PACKAGE}.io", f"{PACKAGE}.io.mesh", f"{PACKAGE}.errors",
             f"{PACKAGE}.model", f"{PACKAGE}.model.net", f"{PACKAGE}.deform.body",
             f"{PACKAGE}.deform.motion"}
    source = "\n".join([
        "from typing import TYPE_CHECKING",
        "import numpy",
        "from ..io.mesh import load_mesh",
        "from . import body",
        "from .. import __version__",
        "import neurok_cli.errors",
        "if TYPE_CHECKING:",
        "    from ..model.net import Net",
        "def f():",
        "    from neurok_cli.model import net",
        "class C:",
        "    from ..errors import NeurokError",
    ])
    edges = imports_of(source, f"{PACKAGE}.deform.motion", is_package=False, known=known)
    got = {(e.imported.removeprefix(PACKAGE), e.runtime) for e in edges}
    assert got == {(".io.mesh", True), (".deform.body", True), ("", True), (".errors", True),
                   (".model.net", False)}
