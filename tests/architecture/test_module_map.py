"""ARCHITECTURE.md's module map matches the tree: every module of ``src`` has its line, and
every line names a module that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ROW = re.compile(r"^\| `([^`]+\.py)` \|")


def _mapped() -> list[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Module map", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for line in section.splitlines() if (match := ROW.match(line))]


def _modules() -> set[str]:
    """Every module of the package; an ``__init__.py`` only when it holds more than a line."""
    found = set()
    for path in SRC.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        if path.name == "__init__.py" and len(path.read_text(encoding="utf-8").splitlines()) <= 1:
            continue
        found.add(path.relative_to(ROOT).as_posix())
    return found


def test_every_module_has_one_line_in_the_map() -> None:
    mapped = _mapped()
    assert len(mapped) == len(set(mapped)), "a module is listed twice"
    missing = sorted(_modules() - set(mapped))
    assert not missing, f"modules missing from ARCHITECTURE.md's module map: {missing}"


def test_every_line_of_the_map_names_a_module() -> None:
    stale = sorted(set(_mapped()) - _modules())
    assert not stale, f"ARCHITECTURE.md's module map names modules that do not exist: {stale}"
