"""The audit's modules import each other in one direction: the shared types live in
``irviewer.core.audit_types`` and no module needs an import inside a function to break a cycle
(issue #20)."""

from __future__ import annotations

import ast
from pathlib import Path

import irviewer.core

CORE = Path(irviewer.core.__file__).parent
AUDIT_MODULES = sorted(CORE.glob("audit*.py"))


def audit_imports(path: Path) -> tuple[set[str], list[int]]:
    """Return (the irviewer.core.audit* modules ``path`` imports at module level, the line of
    every import statement inside a function or class)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    nested: list[int] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("irviewer.core.audit"):
                top.add(node.module.rsplit(".", 1)[1])
            elif node.module == "irviewer.core":
                top |= {a.name for a in node.names if a.name.startswith("audit")}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested += [n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import,
                                                                            ast.ImportFrom))]
    return top, nested


def test_the_audit_modules_exist():
    names = {p.stem for p in AUDIT_MODULES}
    assert {"audit", "audit_types", "audit_context", "audit_pairs", "audit_kinds",
            "audit_sets"} <= names


def test_no_audit_module_imports_inside_a_function():
    offenders = {p.name: lines for p in AUDIT_MODULES if (lines := audit_imports(p)[1])}
    assert offenders == {}


def test_the_audit_modules_import_each_other_without_a_cycle():
    graph = {p.stem: audit_imports(p)[0] for p in AUDIT_MODULES}
    assert graph["audit_types"] == set()  # the shared types import no other audit module
    assert all("audit" not in deps for name, deps in graph.items() if name != "audit")
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name in done:
            return
        for dep in graph.get(name, ()):
            visit(dep, (*path, name))
        done.add(name)

    for name in graph:
        visit(name, ())
