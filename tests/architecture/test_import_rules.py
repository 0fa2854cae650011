"""Import rules of the hexagon, read from the source with ``ast`` (nothing is imported).

- ``domain`` imports at run time only the standard library, msgspec and ``searchport.domain``;
  under ``if TYPE_CHECKING:`` it may name ``searchport.ports`` too, never a framework.
- ``ports`` imports only the standard library, msgspec and ``searchport.domain``/``ports``.
- ``adapters`` never import ``searchport.entrypoints``.
- the composition root (``entrypoints.container``) is imported at run time only by the ASGI
  factory and the command line, which it never imports: it imports the HTTP layer's parts
  (guards, stores, metrics) and hands them to the app, with no cycle between them.
- ``entrypoints.algolia`` (the Algolia protocol) imports only the standard library, msgspec,
  ``searchport.domain`` and itself: no framework, so it can be read and tested alone; only
  the controllers import it (the filter grammar that keys, rules and the command line read
  is the domain's, ``domain.filters``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "searchport"
STDLIB = frozenset(sys.stdlib_module_names)
FRAMEWORKS = ("litestar", "httpx", "aiohttp", "pycurl", "pyreqwest", "yarl", "multidict",
              "redis", "yaml", "tantivy", "dependency_injector", "granian", "brotli")
# the one module behind the Exchange seam that speaks HTTP to the engines
ENGINE_CLIENT = "searchport.adapters.network.client"
HTTP_CLIENTS = ("pycurl", "pyreqwest", "aiohttp", "yarl", "multidict", "httpx", "httpcore",
                "urllib3", "requests")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. searchport.domain.catalog
    target: str  # the absolute name imported, e.g. searchport.ports.engine
    line: int
    type_only: bool  # inside ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        kind = " (TYPE_CHECKING)" if self.type_only else ""
        return f"{self.module} imports {self.target} at line {self.line}{kind}"


def module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(source: str, module: str, is_package: bool = False) -> list[Import]:
    """Every import statement of a module, wherever it is (functions too)."""
    found: list[Import] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(module, alias.name, node.lineno, type_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            found.append(Import(module, target, node.lineno, type_only))
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                # ``from searchport.domain import errors`` imports searchport.domain.errors
                found.extend(
                    Import(module, f"{target}.{alias.name}", node.lineno, type_only)
                    for alias in node.names
                    if alias.name != "*"
                )
        for inner in ast.iter_child_nodes(node):
            visit(inner, type_only)

    visit(ast.parse(source), False)
    return found


def layer_imports(layer: str) -> list[Import]:
    found: list[Import] = []
    for path in sorted((SRC / layer).rglob("*.py")):
        found.extend(
            imports_of(path.read_text(encoding="utf-8"), module_name(path),
                       path.name == "__init__.py")
        )
    return found


def top(name: str) -> str:
    return name.split(".")[0]


def under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def domain_violations(found: list[Import]) -> list[Import]:
    bad = []
    for imp in found:
        if under(imp.target, *FRAMEWORKS):
            bad.append(imp)  # never, not even for type checking
        elif imp.type_only:
            if not (top(imp.target) in STDLIB or top(imp.target) == "msgspec"
                    or under(imp.target, "searchport.domain", "searchport.ports")):
                bad.append(imp)
        elif not (top(imp.target) in STDLIB or top(imp.target) == "msgspec"
                  or under(imp.target, "searchport.domain")):
            bad.append(imp)
    return bad


def ports_violations(found: list[Import]) -> list[Import]:
    return [
        imp for imp in found
        if not (top(imp.target) in STDLIB or top(imp.target) == "msgspec"
                or under(imp.target, "searchport.domain", "searchport.ports"))
    ]


def adapters_violations(found: list[Import]) -> list[Import]:
    return [imp for imp in found if under(imp.target, "searchport.entrypoints")]


def protocol_violations(found: list[Import]) -> list[Import]:
    return [
        imp for imp in found
        if not (top(imp.target) in STDLIB or top(imp.target) == "msgspec"
                or under(imp.target, "searchport.domain", "searchport.entrypoints.algolia"))
    ]


def report(violations: list[Import]) -> str:
    return "forbidden imports:\n" + "\n".join(f"  {v}" for v in violations)


# -- the rules on the real source ----------------------------------------------------------


def test_the_layers_exist() -> None:
    for layer in ("domain", "ports", "adapters", "entrypoints"):
        assert list((SRC / layer).rglob("*.py")), layer
    assert layer_imports("domain"), "the domain should import something (msgspec at least)"


def test_domain_imports_only_stdlib_msgspec_and_domain() -> None:
    violations = domain_violations(layer_imports("domain"))
    assert not violations, report(violations)


def test_ports_import_only_stdlib_msgspec_domain_and_ports() -> None:
    violations = ports_violations(layer_imports("ports"))
    assert not violations, report(violations)


def test_adapters_never_import_entrypoints() -> None:
    violations = adapters_violations(layer_imports("adapters"))
    assert not violations, report(violations)


def test_only_the_engine_client_imports_an_http_client_library() -> None:
    """Swapping the engines' HTTP client is one module (``network/client.py``); httpx is a
    test dependency and no module of ``src`` imports it."""
    found = [imp for layer in ("domain", "ports", "adapters", "entrypoints")
             for imp in layer_imports(layer) if under(imp.target, *HTTP_CLIENTS)]
    assert {imp.module for imp in found} == {ENGINE_CLIENT}, report(
        [imp for imp in found if imp.module != ENGINE_CLIENT])
    assert not [imp for imp in found if under(imp.target, "httpx", "httpcore")]


def test_the_algolia_protocol_imports_only_stdlib_msgspec_domain_and_itself() -> None:
    found = layer_imports("entrypoints/algolia")
    assert found
    violations = protocol_violations(found)
    assert not violations, report(violations)


CONTAINER = "searchport.entrypoints.container"
CONTAINER_USERS = ("searchport.entrypoints.asgi", "searchport.entrypoints.cli.main")


def test_only_the_asgi_factory_and_the_command_line_import_the_container() -> None:
    found = [imp for layer in ("domain", "ports", "adapters", "entrypoints")
             for imp in layer_imports(layer)
             if under(imp.target, CONTAINER) and not imp.type_only
             and imp.module not in CONTAINER_USERS]
    assert not found, report(found)
    back = [imp for imp in layer_imports("entrypoints")
            if imp.module == CONTAINER and under(imp.target, *CONTAINER_USERS)]
    assert not back, report(back)


def test_only_the_controllers_import_the_algolia_protocol() -> None:
    """The controllers speak the protocol; the composition root may wire a piece of it (the
    Algolia search a Query Suggestions rebuild asks the source with)."""
    found = [imp for layer in ("domain", "ports", "adapters", "entrypoints")
             for imp in layer_imports(layer)
             if under(imp.target, "searchport.entrypoints.algolia")
             and not under(imp.module, "searchport.entrypoints.algolia",
                           "searchport.entrypoints.controllers")
             and imp.module != CONTAINER]
    assert not found, report(found)


# -- the checker itself can fail -----------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("import litestar", "litestar"),
        ("from httpx import AsyncClient", "httpx"),
        ("def f():\n    import redis\n", "redis"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import yaml\n", "yaml"),
        ("import typing\nif typing.TYPE_CHECKING:\n    from tantivy import Index\n", "tantivy"),
        ("from searchport.ports.engine import SearchEnginePort", "searchport.ports.engine"),
        ("from ...ports import engine", "searchport.ports.engine"),
        ("from searchport import entrypoints", "searchport.entrypoints"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
         "    import searchport.adapters\n", "searchport.adapters"),
        ("import dependency_injector.providers", "dependency_injector.providers"),
        ("import numpy", "numpy"),
    ],
)
def test_domain_checker_flags(source: str, target: str) -> None:
    found = imports_of(source, "searchport.domain.usecases.example")
    assert target in {v.target for v in domain_violations(found)}


@pytest.mark.parametrize(
    "source",
    [
        "from __future__ import annotations\nimport math, re\nfrom collections.abc import Iterable",
        "import msgspec\nfrom msgspec import Meta",
        "from searchport.domain.errors import InvalidRequest\nfrom . import query\n"
        "from ..shaping import shape_hit",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from searchport.ports.cache import CachePort\n",
    ],
)
def test_domain_checker_allows(source: str) -> None:
    found = imports_of(source, "searchport.domain.usecases.example")
    assert found and not domain_violations(found)


def test_ports_checker() -> None:
    allowed = imports_of("from typing import Protocol\nfrom searchport.domain.query import "
                         "SearchQuery\nfrom .cache import CachePort", "searchport.ports.engine")
    assert allowed and not ports_violations(allowed)
    flagged = imports_of("import httpx\nfrom searchport.adapters.tantivy import X",
                         "searchport.ports.engine")
    assert {v.target for v in ports_violations(flagged)} >= {"httpx", "searchport.adapters.tantivy"}


def test_adapters_checker() -> None:
    flagged = imports_of("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                         "    from searchport.entrypoints.http.app import create_app\n",
                         "searchport.adapters.tantivy.engine")
    assert [v.target for v in adapters_violations(flagged)][:1] == [
        "searchport.entrypoints.http.app"]
    relative = imports_of("from ..entrypoints import timing", "searchport.adapters.x")
    assert adapters_violations(relative)
    fine = imports_of("import httpx\nfrom searchport.domain import errors", "searchport.adapters.x")
    assert not adapters_violations(fine)


def test_protocol_checker() -> None:
    module = "searchport.entrypoints.algolia.plans"
    flagged = imports_of("from litestar import Request\nfrom ..controllers import params",
                         module)
    assert {v.target for v in protocol_violations(flagged)} >= {
        "litestar", "searchport.entrypoints.controllers"}
    fine = imports_of("import msgspec\nfrom searchport.domain.catalog import IndexEntry\n"
                      "from . import params", module)
    assert fine and not protocol_violations(fine)


def test_relative_imports_resolve_in_packages_and_modules() -> None:
    in_module = imports_of("from . import b\nfrom .. import c", "searchport.domain.usecases.a")
    assert {i.target for i in in_module} >= {"searchport.domain.usecases", "searchport.domain"}
    in_package = imports_of("from . import b", "searchport.domain", is_package=True)
    assert {i.target for i in in_package} == {"searchport.domain", "searchport.domain.b"}


def test_violations_name_module_and_import() -> None:
    (violation,) = domain_violations(imports_of("import litestar", "searchport.domain.x"))
    assert str(violation) == "searchport.domain.x imports litestar at line 1"
