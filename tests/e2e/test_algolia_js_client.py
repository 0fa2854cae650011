"""The stock JavaScript ``algoliasearch`` client (v5, an npm package of the InstantSearch
browser test project, installed by the ``npm_project`` fixture) against a real
``searchport serve``: get_object, get_objects, list_indices, get_settings, browse and a search
answer as the client reads them, and a write is refused in words the client shows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server

Rows = list[dict[str, Any]]


def record(row: dict[str, Any], *names: str) -> dict[str, Any]:
    """The record as searchport serves it: the handle's public names (``continent`` is
    published as ``region``), with ``objectID``; only ``names`` when given."""
    public = {("region" if k == "continent" else k): v for k, v in row.items()}
    if names:
        public = {k: v for k, v in public.items() if k in names}
    return {"objectID": row["id"], **public}


@pytest.fixture(scope="module")
def answers(server: Server, rows: Rows, npm_project: Path) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(npm_project / "read_calls.mjs"), server.url, "cities", rows[7]["id"],
         rows[3]["id"]],
        capture_output=True, text=True, timeout=120, cwd=npm_project, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_get_object(answers: dict[str, Any], rows: Rows) -> None:
    assert answers["getObject"] == {"ok": record(rows[7])}
    assert answers["getObjectSome"] == {"ok": record(rows[7], "name")}


def test_a_missing_object_is_a_404_with_algolias_message(answers: dict[str, Any]) -> None:
    assert answers["getObjectMissing"] == {"status": 404, "message": "ObjectID does not exist"}


def test_get_objects_in_request_order(answers: dict[str, Any], rows: Rows) -> None:
    assert answers["getObjects"] == {"ok": {"results": [
        record(rows[3]), None, record(rows[7], "name")]}}


def test_list_indices_names_each_handle_with_its_count(answers: dict[str, Any],
                                                       rows: Rows) -> None:
    listed = answers["listIndices"]["ok"]
    assert [(i["name"], i["entries"]) for i in listed["items"]] == [("cities", len(rows))]
    assert listed["nbPages"] == 1


def test_get_settings_from_the_config(answers: dict[str, Any]) -> None:
    settings = answers["getSettings"]["ok"]
    assert "region" in settings["attributesForFaceting"]
    assert settings["hitsPerPage"] >= 1


def test_browse_and_search(answers: dict[str, Any], rows: Rows) -> None:
    europe = [r for r in rows if r["continent"] == "Europe"]
    browsed = answers["browse"]["ok"]
    assert browsed["nbHits"] == len(europe) and len(browsed["hits"]) == min(5, len(europe))
    assert all(h["region"] == "Europe" for h in browsed["hits"])
    assert ("cursor" in browsed) == (len(europe) > 5)
    found = answers["search"]["ok"]
    assert found["nbHits"] == len(rows) and len(found["hits"]) == 3
    regions: dict[str, int] = {}
    for row in rows:
        regions[row["continent"]] = regions.get(row["continent"], 0) + 1
    assert found["facets"]["region"] == regions


def test_writes_are_refused_as_read_only(answers: dict[str, Any]) -> None:
    for call in ("saveObject", "deleteIndex"):
        assert answers[call]["status"] in (404, 405), answers[call]
        assert "read-only" in answers[call]["message"], answers[call]
