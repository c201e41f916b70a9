"""Imports inside the mtplug package go one way: no module imports itself back, directly
or through others (house rule: data flows formats -> corpus -> metrics -> ... -> cli).

The graph is built from the source with ``ast`` (nothing is imported), once from the
module-level imports only and once with the imports inside functions too. Lazy imports
are how the package avoids loading heavy modules, and they are fine; but one that closes
a circle only hides it (the circle in ``mtplug/formats/`` was kept alive that way), so
the second graph must have no cycle either. ``if TYPE_CHECKING:`` imports never run and
are left out of both.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import pytest

import mtplug

PACKAGE_DIR = Path(mtplug.__file__).parent


def _modules(package_dir: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (source file, is a package) for every .py under package_dir."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(nodes, lazy: bool = False):
    """(import statement, inside a function) for every import that can run."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, lazy
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _import_nodes(node.orelse, lazy)
        else:
            inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from _import_nodes(ast.iter_child_nodes(node), inner)


def _targets(node, module: str, is_package: bool, modules) -> list[str]:
    """The package modules one import statement loads (only those it names)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    found = []
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        found.append(submodule if submodule in modules else source)
    return [m for m in found if m in modules]


@functools.lru_cache(maxsize=None)  # each graph is built once per test session
def import_graph(package_dir: Path, with_lazy: bool) -> dict[str, dict[str, str]]:
    """module -> {imported module: 'file:line' of the import} inside the package."""
    modules = _modules(package_dir)
    graph: dict[str, dict[str, str]] = {}
    for module, (path, is_package) in modules.items():
        edges = graph.setdefault(module, {})
        for node, lazy in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path)).body):
            if lazy and not with_lazy:
                continue
            for target in _targets(node, module, is_package, modules):
                where = f"{os.path.relpath(path, package_dir.parent)}:{node.lineno}"
                edges.setdefault(target, where)
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module that
    imports itself), each sorted, in a stable order (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe(graph, found) -> str:
    """Each circle with the import lines that make it."""
    out = []
    for component in found:
        members = set(component)
        out.append("circle: " + ", ".join(component))
        out += [f"  {graph[a][b]}: {a} imports {b}" for a in component for b in sorted(graph[a]) if b in members]
    return "\n".join(out)


@pytest.mark.parametrize("with_lazy", [False, True], ids=["module-level", "with-function-level"])
def test_no_import_cycles_in_mtplug(with_lazy):
    graph = import_graph(PACKAGE_DIR, with_lazy)
    found = cycles(graph)
    assert not found, (
        "import circles in mtplug (move what both sides need into a module of its own that "
        "imports neither):\n" + describe(graph, found))


def test_the_graph_sees_the_package_imports():
    """A graph missing edges would find no cycle for the wrong reason."""
    graph = import_graph(PACKAGE_DIR, False)
    assert len(graph) > 100
    assert {"mtplug.formats.mert_weights", "mtplug.formats.weights_core"} <= set(graph["mtplug.formats.weights"])
    assert "mtplug.formats.weights_core" in graph["mtplug.formats.sparse_weights"]
    assert "mtplug.metrics.store_stats" not in graph["mtplug.corpus"]  # imported inside a function
    assert "mtplug.metrics.store_stats" in import_graph(PACKAGE_DIR, True)["mtplug.corpus"]


def test_cycles_found_in_a_small_package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from .b import x\n",
        "b.py": "x = 1\ndef f():\n    from . import a\n",  # lazy back edge: a <-> b
        "c.py": "import pkg.sub.d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..c import y\n",  # module-level: c <-> sub.d
        "e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .f import z\n",
        "f.py": "from .e import w\n",  # e's import never runs: no circle
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    eager = import_graph(pkg, False)
    assert cycles(eager) == [["pkg.c", "pkg.sub.d"]]
    assert "pkg/sub/d.py:1: pkg.sub.d imports pkg.c" in describe(eager, cycles(eager))
    assert cycles(import_graph(pkg, True)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub.d"]]
