"""The layout's promises: dependencies point one way between the top-level packages, no module
imports itself back through others, and packages talk through each other's public names, not their
internals (the design document's "Layout"). Read from the source with ``ast``, so a cycle, a wrong-way import or
a reach into another package's ``_private`` name fails here before it bites at import time."""

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
    # talking to models: settings, the endpoint client, the model-server manager, the tool-call readers
    "models": {"mcp_gateway", "public_apis"},  # public_apis: its free_port (public_apis.ports)
    "bench": {"models", "mcp_gateway", "recorder", "public_apis", "sandbox"},
    "edge": {"bench", "models", "mcp_gateway", "recorder", "public_apis"},
    "train": {"bench", "edge", "models", "mcp_gateway", "recorder", "public_apis"},
    # appliance imports tui only inside `kopa tui` (lazily: the CLI starts fast); tui reads through appliance's APIs
    "appliance": {"bench", "edge", "train", "models", "mcp_gateway", "recorder", "public_apis", "sandbox", "tui"},
    "tui": {"appliance", "bench", "edge", "train", "models", "mcp_gateway", "recorder", "public_apis", "sandbox"},
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


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(module: str, path: Path, tree: ast.AST) -> list[tuple[int, str]]:
    """``module``'s imports of a ``_private`` name or module of another of our top-level packages, as (line, what):
    ``from X import _name``, ``from X._y import name`` or ``import X._y`` — anywhere in the file, in functions and
    under ``TYPE_CHECKING`` too (a type-only reach into internals still couples the two)."""
    top = module.split(".")[0]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.split(".")[0] in ALLOWED.keys() - {top} and any(map(_private, a.name.split(".")))]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                base = ".".join(anchor[: len(anchor) - (node.level - 1)] + ([base] if base else []))
            if base.split(".")[0] in ALLOWED.keys() - {top}:
                found += [(node.lineno, f"{a.name} from {base}") for a in node.names
                          if any(map(_private, base.split("."))) or _private(a.name)]
    return sorted(found)


def _all_private_imports(modules: dict[str, Path]) -> list[str]:
    return [f"{module}:{line} imports {what}" for module, path in sorted(modules.items())
            for line, what in _private_imports(module, path, ast.parse(path.read_text(encoding="utf-8")))]


def test_the_private_import_finder_finds_them(tmp_path):
    (tmp_path / "edge").mkdir()
    source = tmp_path / "edge" / "answer.py"
    source.write_text(
        "from bench.taskset.draft import Draft, _number_text\n"          # a private name
        "from bench.taskset import (\n    Draft,\n    _catalog_ids,\n)\n"  # across lines
        "import bench._internal.thing\n"                                   # a private module
        "from bench._internal import helper\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from bench.task import _Hidden\n"
        "def later():\n    from mcp_gateway.catalog import _index\n"      # inside a function
        "from bench.task import __version__, Task\n"                       # dunders and public names are fine
        "from edge.graph import _ours\n"                                   # its own package's internals are fine
        "from ._sibling import _x\n"                                       # so are relative ones
        "from _thread import _local\n",                                    # not ours
        encoding="utf-8")
    hits = _all_private_imports({"edge.answer": source})
    assert [h.partition(" imports ")[2] for h in hits] == [
        "_number_text from bench.taskset.draft", "_catalog_ids from bench.taskset", "bench._internal.thing",
        "helper from bench._internal", "_Hidden from bench.task", "_index from mcp_gateway.catalog"]
    assert hits[0].startswith("edge.answer:1 ") and hits[1].startswith("edge.answer:2 ")


def test_no_module_imports_another_packages_private_names():
    assert _all_private_imports(MODULES) == []


# One module drives tool calls (bench.agents.step): it alone turns a model's reply into calls with the readers of
# models.toolcalls; the bench agents, the agent endpoint and training play their turns through it.
TOOL_CALL_READERS = {"read_message", "read_text", "read_structured_call", "read_arguments"}
AGENT_STEP = "bench.agents.step"


def _reader_imports(path: Path) -> list[tuple[int, str]]:
    """(line, name) for every reader of ``models.toolcalls`` that the file imports."""
    found = []
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("models.toolcalls"):
            found += [(node.lineno, a.name) for a in node.names if a.name in TOOL_CALL_READERS]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("models.toolcalls")]
    return found


def _tool_call_drivers(modules: dict[str, Path]) -> list[str]:
    return [f"{module}:{line} imports {name}" for module, path in sorted(modules.items())
            if module != AGENT_STEP and not module.startswith("models")
            for line, name in _reader_imports(path)]


def test_the_tool_call_driver_finder_finds_a_second_loop(tmp_path):
    (tmp_path / "train").mkdir()
    planted = tmp_path / "train" / "loop.py"
    planted.write_text("def turn(text, tools):\n    from models.toolcalls import read_text\n    return read_text(text, tools)\n",
                       encoding="utf-8")
    allowed = tmp_path / "step.py"
    allowed.write_text("from models.toolcalls import read_message, render_assistant\n", encoding="utf-8")
    assert _tool_call_drivers({"train.loop": planted, AGENT_STEP: allowed}) == ["train.loop:2 imports read_text"]


def test_only_the_agent_step_reads_model_replies_into_tool_calls():
    assert _reader_imports(MODULES[AGENT_STEP])  # the step is where the readers are used
    assert _tool_call_drivers(MODULES) == []
