"""The claims of ARCHITECTURE.md that the code can check cheaply: every library of
pyproject.toml has its line, and the figures the page quotes are the code's."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
SRC = ROOT / "src"
# the libraries the design card names; every other one needs a line of the page's table
NAMED = {"litestar", "msgspec", "httpx", "dependency-injector", "pyyaml", "redis", "pytest",
         "hypothesis"}


def _section(title: str) -> str:
    return PAGE.split(f"\n### {title}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def _requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = [*project["dependencies"],
             *(s for extra in project["optional-dependencies"].values() for s in extra)]
    found = set()
    for spec in specs:
        name, extras = re.match(r"([A-Za-z0-9_.-]+)(?:\[([^\]]+)\])?", spec).groups()  # type: ignore[union-attr]
        if name != "searchport":  # its own extras, named as a test dependency
            found.add(name.lower())
            # an extra that is a library of its own (redis[hiredis]); not an option of one
            found.update(e for e in (extras or "").lower().split(",") if e == "hiredis")
    return found


def _constant(module: str, name: str) -> object:
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(node.value)  # type: ignore[arg-type]
    raise AssertionError(f"{module} has no {name}")


def test_every_library_but_the_named_ones_says_why() -> None:
    table = _section("Libraries and why")
    listed = {name.strip().lower() for line in table.splitlines() if line.startswith("| ")
              for name in re.sub(r"\(.*?\)|test extra:", "", line.split("|")[1]).split(",")}
    missing = sorted(_requirements() - NAMED - listed)
    assert not missing, f"libraries of pyproject.toml without a line in ARCHITECTURE.md: {missing}"
    gone = sorted(listed - _requirements() - {"library", "---"})
    assert not gone, f"ARCHITECTURE.md explains libraries pyproject.toml does not name: {gone}"


def test_the_default_worker_count_is_the_pages() -> None:
    from searchport.entrypoints.cli.main import parser

    workers = parser().parse_args(["serve"]).workers
    assert f"worker processes (default **{workers}**" in PAGE


def test_the_query_log_writer_is_a_task_not_a_thread() -> None:
    source = (SRC / "adapters" / "analytics" / "writer.py").read_text(encoding="utf-8")
    assert "create_task" in source
    assert not re.search(r"^\s*(import threading|from (threading|concurrent)\b)", source, re.M)
    assert "one asyncio\n  task per worker, not a thread" in PAGE


def test_the_figures_quoted_are_the_codes() -> None:
    pools = "adapters/network/pools.py"
    assert f"`MAX_CONNECTIONS` = {_constant(pools, 'MAX_CONNECTIONS')} " in PAGE
    assert f"`KEEPALIVE_SECONDS` = {_constant(pools, 'KEEPALIVE_SECONDS'):g} " in PAGE
    version = _constant("adapters/analytics/schema.py", "VERSION")
    assert f"one schema, version {version}\n" in PAGE
    assert _constant("adapters/semantic/minilm.py", "DIMENSIONS") == 384
    assert "(384 dimensions" in PAGE
