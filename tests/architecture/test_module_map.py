"""ARCHITECTURE.md's module map is generated from the tree: one line per module of ``src``,
its text the first sentence of the module's docstring, grouped by layer. The test fails
when the map and the tree differ (a module added, moved, removed, or its docstring's first
sentence changed); ``.venv/bin/python tests/architecture/test_module_map.py`` rewrites it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PAGE = ROOT / "ARCHITECTURE.md"
HEADING = "## Module map"
ROW = re.compile(r"^\| `([^`]+\.py)` \|")
WIDTH = 140  # characters of a module's summary before it is cut
GROUPS = (
    ("the package", ("src/__init__.py", "src/demo/")),
    ("domain (`src/domain`): the product's rules, pure", ("src/domain/",)),
    ("ports (`src/ports`): what the domain needs, as `typing.Protocol`s", ("src/ports/",)),
    ("adapters (`src/adapters`): engines, caches, stores, the config loader, the engine "
     "network", ("src/adapters/",)),
    ("entrypoints (`src/entrypoints`): HTTP, the command line, the composition root",
     ("src/entrypoints/",)),
)
INTRO = (
    "Generated from the tree by `tests/architecture/test_module_map.py` (which fails when "
    "they differ;\nrun it with `.venv/bin/python` to rewrite this section): each module of "
    "`src` with the first\nsentence of its docstring. The pages' static files "
    "(`src/entrypoints/ui/`) are package data\nserved by `controllers/ui_routes.py`."
)


def _modules() -> list[str]:
    """Every module of the package; an ``__init__.py`` only when it holds more than a line."""
    found = []
    for path in SRC.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        if path.name == "__init__.py" and len(path.read_text(encoding="utf-8").splitlines()) <= 1:
            continue
        found.append(path.relative_to(ROOT).as_posix())
    return sorted(found)


def _packages() -> list[str]:
    return sorted(path.parent.relative_to(ROOT).as_posix() + "/"
                  for path in SRC.rglob("__init__.py") if "__pycache__" not in path.parts)


def summary(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, as Markdown, at most ``WIDTH``
    characters (cut at a space, never inside a code span, and marked ``…``)."""
    paragraph = " ".join(docstring.split("\n\n")[0].split()).replace("``", "`")
    end = re.search(r"(?<!e\.g)(?<!i\.e)\.(\s|$)", paragraph)
    text = paragraph[:end.start()] if end else paragraph
    if len(text) > WIDTH:
        text = text[:WIDTH].rsplit(" ", 1)[0]
        if text.count("`") % 2:
            text = text[:text.rindex("`")].rstrip()
        text = text.rstrip(",;:(") + " …"
    return text.replace("|", "\\|")


def _summary_of(module: str) -> str:
    source = (ROOT / module).read_text(encoding="utf-8")
    return summary(ast.get_docstring(ast.parse(source)) or "")


def render() -> str:
    """The module map section, from its heading to the end of the page."""
    modules = _modules()
    parts = [HEADING, "", INTRO]
    for title, prefixes in GROUPS:
        rows = [m for m in modules if m.startswith(prefixes)]
        parts += ["", f"### {title}", "", "| module | what it is |", "|---|---|"]
        parts += [f"| `{m}` | {_summary_of(m)} |" for m in rows]
    return "\n".join(parts) + "\n"


def _page_map() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert f"\n{HEADING}\n" in text, f"ARCHITECTURE.md has no '{HEADING}' section"
    return text[text.index(f"\n{HEADING}\n") + 1:]


def _mapped() -> list[str]:
    return [match.group(1) for line in _page_map().splitlines() if (match := ROW.match(line))]


def test_the_module_map_is_the_last_section() -> None:
    assert "\n## " not in _page_map()[len(HEADING):]


def test_every_module_has_one_line_in_the_map() -> None:
    mapped = _mapped()
    assert len(mapped) == len(set(mapped)), "a module is listed twice"
    missing = sorted(set(_modules()) - set(mapped))
    assert not missing, f"modules missing from ARCHITECTURE.md's module map: {missing}"


def test_every_line_of_the_map_names_a_module() -> None:
    stale = sorted(set(_mapped()) - set(_modules()))
    assert not stale, f"ARCHITECTURE.md's module map names modules that do not exist: {stale}"


def test_every_package_is_in_the_map_and_in_a_group() -> None:
    mapped = _mapped()
    unlisted = [p for p in _packages() if p != "src/"
                and not any(m.startswith(p) for m in mapped)]
    assert not unlisted, f"packages with no module in the map: {unlisted}"
    grouped = {m for _, prefixes in GROUPS for m in _modules() if m.startswith(prefixes)}
    assert grouped == set(_modules()), sorted(set(_modules()) - grouped)


def test_the_map_is_generated_from_the_docstrings() -> None:
    assert _page_map() == render(), (
        "ARCHITECTURE.md's module map differs from the tree: rewrite it with "
        "`.venv/bin/python tests/architecture/test_module_map.py`")


def test_summary_takes_the_first_sentence_and_cuts_outside_code() -> None:
    assert summary("``X``: one thing. Then more.\n\nOther.") == "`X`: one thing"
    assert summary("Uses e.g. this, and that") == "Uses e.g. this, and that"
    long = "word " * 30 + "``a long code span that would be cut``"
    cut = summary(long)
    assert cut.endswith(" …") and cut.count("`") % 2 == 0 and len(cut) <= WIDTH + 2


def write() -> None:
    text = PAGE.read_text(encoding="utf-8")
    head = text[:text.index(f"\n{HEADING}\n") + 1] if f"\n{HEADING}\n" in text else text
    PAGE.write_text(head + render(), encoding="utf-8")


if __name__ == "__main__":
    write()
    sys.exit(0)
