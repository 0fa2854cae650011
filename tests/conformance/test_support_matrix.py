"""The engine support matrix of docs/engines.md is the one the code generates, and it tells
the truth."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from searchport.domain.engines import ENGINE_NAMES
from tests.conformance.matrix import ENGINES_PAGE, FEATURES, block, capabilities, current


def test_engines_page_matrix_matches_the_code() -> None:
    found = current(ENGINES_PAGE.read_text(encoding="utf-8"))
    assert found is not None, "docs/engines.md lost its support-matrix markers"
    assert found == block(), "run: python -m tests.conformance.matrix"


def test_matrix_names_every_engine_once() -> None:
    text = block()
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    assert rows[0] == "engine" and len(set(rows[1:])) == len(rows) - 1
    assert set(rows[1:]) == set(ENGINE_NAMES)


def test_the_running_engines_report_what_the_matrix_says(api: TestClient[Any]) -> None:
    engine = api.engine_name  # type: ignore[attr-defined]
    reported = api.get("/indexes").json()["indexes"][0]["capabilities"]
    caps = capabilities(engine)
    for title, attr in FEATURES.items():
        if title == "suggest":
            continue  # also needs defaults.suggestField, which the dataset does not set
        key = {"nestedPath": "nested", "multi-index": "multiIndex", "raw query": "rawQuery",
               "aroundRadius": "geoRadius"}.get(title, title)
        assert reported[key] == getattr(caps, attr), title
