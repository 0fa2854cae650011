"""Frameworks used through what they document, read from the source with ``ast``.

- No module of ``src`` imports what Litestar keeps for itself: a module whose name has a
  part starting with ``_`` (``litestar._kwargs``...) or ``litestar.utils.scope``, whose
  ``ScopeState`` Litestar documents as internal and subject to change.
- A class of ``src`` that subclasses a framework's class and defines ``__init__`` calls
  ``super().__init__``: a subclass that skips its parent's works until the parent changes.
- Litestar calls the route handlers: nothing in ``src`` calls a handler's function
  (``handler.fn(...)``) itself, which would skip Litestar's reading of the parameters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
FRAMEWORKS = ("litestar", "msgspec", "dependency_injector", "redis", "httpx")
INTERNAL = ("litestar.utils.scope",)


def _sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def internal_imports(source: str) -> list[str]:
    """The internal framework modules ``source`` imports, as ``module:line``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for name in names:
            parts = name.split(".")
            if parts[0] == "litestar" and (any(p.startswith("_") for p in parts[1:])
                                           or name.startswith(INTERNAL)):
                found.append(f"{name}:{node.lineno}")
    return found


def _framework_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[0] in FRAMEWORKS:
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _calls_super_init(function: ast.FunctionDef) -> bool:
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "__init__" and isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "super"):
            return True
    return False


def parent_inits_skipped(source: str) -> list[str]:
    """Classes subclassing a framework's class whose ``__init__`` skips the parent's."""
    tree = ast.parse(source)
    framework = _framework_names(tree)
    skipped = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {b.id for b in node.bases if isinstance(b, ast.Name)} & framework
        inits = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
        if bases and inits and not _calls_super_init(inits[0]):
            skipped.append(f"{node.name}({', '.join(sorted(bases))}):{node.lineno}")
    return skipped


def handler_calls(source: str) -> list[int]:
    """The lines of ``source`` that call an attribute named ``fn`` (a route handler's
    function)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fn"]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(SRC)))
def test_litestar_calls_the_handlers(path: Path) -> None:
    assert handler_calls(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_framework_internal_is_imported(path: Path) -> None:
    assert internal_imports(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_subclass_skips_its_parents_init(path: Path) -> None:
    assert parent_inits_skipped(path.read_text(encoding="utf-8")) == []


def test_the_checks_catch_what_they_look_for() -> None:
    assert internal_imports("from litestar.utils.scope.state import ScopeState") == [
        "litestar.utils.scope.state:1", "litestar.utils.scope.state.ScopeState:1"]
    assert internal_imports("import litestar._kwargs") == ["litestar._kwargs:1"]
    assert internal_imports("from litestar import _parsers") == ["litestar._parsers:1"]
    assert internal_imports("from litestar.params import QueryParameter") == []
    skipping = ("from litestar.response.base import ASGIResponse\n"
                "class Prepared(ASGIResponse):\n"
                "    def __init__(self) -> None:\n"
                "        self.x = 1\n")
    assert parent_inits_skipped(skipping) == ["Prepared(ASGIResponse):2"]
    calling = skipping.replace("self.x = 1", "super().__init__(body=b'')")
    assert parent_inits_skipped(calling) == []
    assert handler_calls("async def hook(request):\n"
                         "    return await request.route_handler.fn(**kwargs)\n") == [2]
    assert handler_calls("fn(x)\nhandler.fn\n") == []
