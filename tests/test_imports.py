"""No import circles among the server's and the client's modules, type-only imports included.

A circle holds only while one of its imports waits (a ``TYPE_CHECKING`` block, an import inside a
function): moving one import turns it into an ``ImportError`` at start-up, and none of its modules
can be read, or tested, without all the others. The one link left out is a package importing its
own parts (``server/store/__init__.py`` opens the backend a URL names, and each backend implements
the package's ``Store``): importing a part runs its package first whatever the package imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("server", "client")


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module by dotted name: its file, and whether it is a package's ``__init__``."""
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported(name: str, path: Path, is_package: bool, known: set[str]) -> Iterator[str]:
    """The modules of ``known`` that module ``name`` imports, anywhere in its text."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            parts = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known]
            targets = parts if len(parts) == len(node.names) else [*parts, module]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not (is_package and target.startswith(f"{name}.")):
                yield target


def circles(root: Path) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    found = modules(root)
    graph = {name: set(imported(name, path, pkg, set(found))) for name, (path, pkg) in found.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return groups


def test_no_module_imports_itself_round_a_circle() -> None:
    assert circles(ROOT) == []


def test_a_circle_is_found(tmp_path: Path) -> None:
    """Through a type-only import, as the one this test was written against was."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "server" / "a.py").write_text("from .b import B\n")
    (tmp_path / "server" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    (tmp_path / "server" / "c.py").write_text("from . import a, b\n")
    assert circles(tmp_path) == [["server.a", "server.b"]]
