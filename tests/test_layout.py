"""The layout's promises: dependencies point one way between the top-level packages, and no module
imports itself back through others (DESIGN.md, "Layout"). Read from the source with ``ast``, so a
cycle or a wrong-way import fails here before it bites at import time."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What each of our top-level packages may import of ours. ``bench`` may start the sandbox: its
# task-set builder and ``--upstream sandbox`` runs are composition points, like ``appliance``.
ALLOWED: dict[str, set[str]] = {
    "public_apis": set(),
    "sandbox": {"public_apis"},
    "recorder": {"public_apis"},
    "mcp_gateway": {"recorder", "public_apis"},
    "bench": {"mcp_gateway", "recorder", "public_apis", "sandbox"},
    "edge": {"bench", "mcp_gateway", "recorder", "public_apis"},
    "train": {"bench", "edge", "mcp_gateway", "recorder", "public_apis"},
    # appliance imports tui only inside `kopa tui` (lazily: the CLI starts fast); tui reads through appliance's APIs
    "appliance": {"bench", "edge", "train", "mcp_gateway", "recorder", "public_apis", "sandbox", "tui"},
    "tui": {"appliance", "bench", "edge", "train", "mcp_gateway", "recorder", "public_apis", "sandbox"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in ALLOWED:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs (at module level or in a function); not those under ``if TYPE_CHECKING``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (n for child in node.orelse for n in _imports(ast.Module([child], [])))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _targets(module: str, path: Path) -> set[str]:
    """Our modules that ``module`` imports: a module named in ``from X import name`` counts, else X itself."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        targets |= {n for n in names if n in MODULES and n != module}
    return targets


GRAPH = {module: _targets(module, path) for module, path in MODULES.items()}


def test_the_graph_sees_the_packages():
    assert {"sandbox.world.runtime", "recorder.transport", "mcp_gateway.gateway", "public_apis"} <= set(GRAPH)
    assert "recorder.routes" in GRAPH["mcp_gateway.gateway"] or "recorder" in GRAPH["mcp_gateway.gateway"]
    assert "sandbox.platforms.seoul_service" in GRAPH["sandbox.platforms.seoul"]


def test_dependencies_point_one_way():
    wrong = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() for t in targets
                   if (top := m.split(".")[0]) != (other := t.split(".")[0]) and other not in ALLOWED[top])
    assert wrong == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []
