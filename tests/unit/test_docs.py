"""The documentation holds together: every relative link of README, docs/ and ARCHITECTURE
resolves to a file of the repository (and a #section to a heading of it), every repository
path they name exists, and nothing they or the code's comments say points outside the
repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_PATH = re.compile(r"`((?:src|tests|bench|demo|docs|\.ci)/[\w./-]*|config\.example\.yaml)`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
OUTSIDE = re.compile(r"SPEC\.md|DECISIONS|\.\./shared|/work/shared|shared/spec|shared/guides"
                     r"|[Cc]oordinator")


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(h) for h in HEADING.findall(text)} | set(ANCHOR.findall(text))


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [link for link in LINK.findall(text)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", link)]


def test_the_pages_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "ARCHITECTURE.md", "docs/README.md", "docs/http-api.md",
            "docs/errors.md", "docs/engines.md", "docs/algolia.md",
            "docs/operations.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for link in relative_links(page):
        target, _, section = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        outside = not path.exists() or ROOT not in (path, *path.parents)
        if outside or (section and path.suffix == ".md" and section not in anchors(path)):
            broken.append(link)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_repository_path_named_exists(page: Path) -> None:
    named = set(CODE_PATH.findall(page.read_text(encoding="utf-8")))
    missing = [p for p in named if ".venv" not in p and "*" not in p
               and not (ROOT / p.rstrip("/")).exists()]
    assert missing == []


def test_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {link.partition("#")[0] for link in LINK.findall(index)}
    pages = {p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md"}
    assert pages <= listed


def test_nothing_points_outside_the_repository() -> None:
    sources = [*PAGES, *ROOT.glob("*.md"), ROOT / "bench" / "README.md",
               ROOT / "bench" / "RESULTS.md", ROOT / "config.example.yaml", ROOT / ".ci" / "run",
               *(p for p in (ROOT / "src").rglob("*") if p.suffix in (".py", ".md", ".yaml")),
               *(p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_docs.py"
                 and "node_modules" not in p.parts)]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sources
             for m in OUTSIDE.finditer(p.read_text(encoding="utf-8"))]
    assert found == []


def test_readme_starts_with_the_two_commands() -> None:
    """A newcomer reads what searchport is, then the commands, within the first screen."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:30])
    assert ".venv/bin/searchport serve" in first_screen
    assert ".venv/bin/python -m pytest" in first_screen
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest" in readme
    assert ".venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest" in ci
    # CI runs README's two commands as written, so a step they miss fails CI too
    commands = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)[:2]
    assert len(commands) == 2
    assert all(any(line.startswith(command) for line in ci.splitlines()) for command in commands)
    assert 'indexName: "cities"' in (ROOT / "docs" / "algolia.md").read_text(encoding="utf-8")
    assert "books" not in re.sub(r"```yaml.*?```", "", readme, flags=re.DOTALL)
