"""Every package says what it exports: its ``__init__`` has a docstring and ``__all__`` (empty for a namespace of
modules), every name in it exists in the package, none is listed twice (as httpx's ``tests/test_exported_members.py``
keeps ``httpx.__all__`` and the package in step). Lazy packages (``appliance.serving``, ``models``) count too: a
name in their ``__all__`` must import."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_layout import ALLOWED, REPO


def _packages(root: Path = REPO, tops: tuple[str, ...] = tuple(ALLOWED)) -> list[str]:
    """Every package and subpackage (a folder with ``__init__.py``) of the product packages ``tops``."""
    return sorted(".".join(init.relative_to(root).parent.parts) for top in tops
                  for init in (root / top).rglob("__init__.py") if "__pycache__" not in init.parts)


PACKAGES = _packages()


def _declared(source: str) -> list[str] | None:
    """The literal ``__all__`` of an ``__init__``'s source, None when it has none at module level (a computed
    ``__all__``, as the lazy packages write it, counts: its names are then read from the module)."""
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            try:
                return list(ast.literal_eval(node.value)) if node.value is not None else []
            except ValueError:
                return []
    return None


def _problems(source: str, module: ModuleType) -> list[str]:
    """What is wrong with a package's exports: its ``__init__`` source and the imported module."""
    problems = []
    if _declared(source) is None:
        problems.append("no __all__ (use [] for a namespace of modules)")
    if not ast.get_docstring(ast.parse(source)):
        problems.append("no docstring saying what lives there")
    exported = list(getattr(module, "__all__", []))
    problems += [f"{name!r} in __all__ is not a name" for name in exported if not isinstance(name, str)]
    names = [name for name in exported if isinstance(name, str)]
    problems += [f"{name} listed twice" for name in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"{name} in __all__ but not in the package" for name in names if not hasattr(module, name)]
    return problems


def test_the_packages_are_found():
    assert {"bench", "bench.agents", "sandbox.world.law", "appliance.serving", "tui.screens"} <= set(PACKAGES)
    assert not any(p.startswith("tests") for p in PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_declares_its_exports(package):
    source = (REPO / package.replace(".", "/") / "__init__.py").read_text(encoding="utf-8")
    assert _problems(source, importlib.import_module(package)) == []


def _module(source: str) -> ModuleType:
    module = ModuleType("kopa_demo_pkg")
    exec(compile(source, "kopa_demo_pkg/__init__.py", "exec"), module.__dict__)
    return module


def test_the_checks_catch_a_package_out_of_step(tmp_path):
    good = '"""A namespace of modules."""\n__all__: list[str] = []\n'
    assert _declared(good) == [] and _problems(good, _module(good)) == []
    lazy = '"""Lazy."""\n__all__ = sorted({"B", "A"})\ndef __getattr__(name):\n    return 1\n'
    assert _declared(lazy) == [] and _problems(lazy, _module(lazy)) == []  # computed: names read from the module
    assert _problems('x = 1\n', _module('x = 1\n')) == ["no __all__ (use [] for a namespace of modules)",
                                                          "no docstring saying what lives there"]
    bad = '"""Out of step."""\nA = 1\n__all__ = ["A", "A", "Gone", 3]\n'
    assert _declared(bad) == ["A", "A", "Gone", 3]
    assert _problems(bad, _module(bad)) == ["3 in __all__ is not a name", "A listed twice",
                                            "Gone in __all__ but not in the package"]
    (tmp_path / "kopa_demo_pkg" / "inner").mkdir(parents=True)
    (tmp_path / "kopa_demo_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "kopa_demo_pkg" / "inner" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "kopa_demo_pkg" / "loose").mkdir()  # no __init__: not a package
    (tmp_path / "kopa_demo_pkg" / "loose" / "m.py").write_text("", encoding="utf-8")
    assert _packages(tmp_path, ("kopa_demo_pkg",)) == ["kopa_demo_pkg", "kopa_demo_pkg.inner"]
