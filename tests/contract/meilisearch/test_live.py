"""The adapter against a real Meilisearch (1.9 or later), when one is named:

    SEARCHPORT_TEST_MEILISEARCH_URL=http://127.0.0.1:7700 \\
    SEARCHPORT_TEST_MEILISEARCH_KEY=masterKey pytest tests/contract/meilisearch

A temporary index is loaded with ``tests/fixtures/books.jsonl`` and deleted afterwards;
every expectation is computed in Python from the rows. Skipped when no server is named.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient

from searchport.adapters.config_loader import parse_config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.contract.meilisearch.live import KEY_VAR, URL_VAR, temporary_index

URL = os.environ.get(URL_VAR, "")
KEY = os.environ.get(KEY_VAR, "")
ROWS = [json.loads(line) for line in
        (Path(__file__).parents[2] / "fixtures" / "books.jsonl").read_text().splitlines()
        if line.strip()]
FILTERABLE = ["genre", "tags", "year", "price", "available", "author", "language", "pages"]

pytestmark = pytest.mark.skipif(not URL, reason="SEARCHPORT_TEST_MEILISEARCH_URL is not set")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    settings = {
        "searchableAttributes": ["title", "author", "place"],
        "filterableAttributes": FILTERABLE,
        "sortableAttributes": ["year", "price", "title", "pages"],
        "faceting": {"sortFacetValuesBy": {"*": "count"}},
    }
    with temporary_index(URL, KEY, settings, ROWS) as uid:
        config = parse_config(yaml.safe_dump({"indexes": {"books": {
            "engine": "meilisearch", "host": URL, "indexName": uid,
            **({"apiKey": KEY} if KEY else {}),
            "fields": {"title": {"weight": 2}, "author": {"searchable": True},
                       "kind": {"field": "genre"}},
        }}}), {})
        app = create_app(create_container(config, tmp_path_factory.mktemp("meili")))
        with TestClient(app) as client:
            yield client


# ---------------------------------------------------------------- the contract in Python


def values(row: dict[str, Any], field: str) -> list[Any]:
    value = row.get(field)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def equal(a: Any, b: Any) -> bool:
    """Meilisearch's ``=``: strings ignore case."""
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return type(a) is type(b) and a == b


def ids(rows: list[dict[str, Any]]) -> set[str]:
    return {str(r["id"]) for r in rows}


def found(api: TestClient[Any], **params: Any) -> dict[str, Any]:
    params = {k: json.dumps(v) if isinstance(v, dict | list) else str(v)
              for k, v in params.items()}
    response = api.get("/books/search", params={"perPage": 100, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def hit_ids(body: dict[str, Any]) -> set[str]:
    return {h["objectID"] for h in body["hits"]}


# ---------------------------------------------------------------- checks


def test_an_empty_query_matches_every_document(api: TestClient[Any]) -> None:
    body = found(api)
    assert body["totalHits"] == len(ROWS) and hit_ids(body) == ids(ROWS)
    assert "46" in hit_ids(body)


def test_pages_and_exact_totals(api: TestClient[Any]) -> None:
    body = found(api, page=2, perPage=7)
    assert len(body["hits"]) == 7
    assert (body["totalHits"], body["totalPages"]) == (len(ROWS), math.ceil(len(ROWS) / 7))


@pytest.mark.parametrize(("filters", "keep"), [
    ({"kind": "fiction"}, lambda r: any(equal(v, "fiction") for v in values(r, "genre"))),
    ({"tags": ["award", "sea"]},
     lambda r: any(equal(v, t) for v in values(r, "tags") for t in ("award", "sea"))),
    ({"year": {"min": 1900, "max": 2000}},
     lambda r: any(1900 <= v <= 2000 for v in values(r, "year"))),
    ({"price": {"max": 10}}, lambda r: any(v <= 10 for v in values(r, "price"))),
    ({"available": True}, lambda r: r.get("available") is True),
    ({"kind": {"not": ["fiction", "history"]}},
     lambda r: not any(equal(v, g) for v in values(r, "genre") for g in ("fiction", "history"))),
    ({"price": {"exists": True}}, lambda r: bool(values(r, "price"))),
    ({"price": {"exists": False}}, lambda r: not values(r, "price")),
    ({"author": 'Kate <K> Smith'}, lambda r: r.get("author") == "Kate <K> Smith"),
])
def test_filters_select_what_python_selects(api: TestClient[Any], filters: dict[str, Any],
                                            keep: Any) -> None:
    expected = [r for r in ROWS if keep(r)]
    body = found(api, filters=filters)
    assert hit_ids(body) == ids(expected) and body["totalHits"] == len(expected)


def test_facets_are_disjunctive(api: TestClient[Any]) -> None:
    filters = {"kind": "history", "available": True}
    body = found(api, facets="kind,available", filters=filters)

    def counts(field: str, others: dict[str, Any]) -> dict[str, int]:
        rows = [r for r in ROWS if all(
            any(equal(v, want) for v in values(r, "genre" if f == "kind" else f))
            for f, want in others.items())]
        out: Counter[str] = Counter()
        for r in rows:
            for v in set(values(r, field)):
                out["true" if v is True else "false" if v is False else str(v)] += 1
        return dict(out)

    assert {v["value"]: v["count"] for v in body["facets"]["kind"]} == counts(
        "genre", {"available": True})
    assert {v["value"]: v["count"] for v in body["facets"]["available"]} == counts(
        "available", {"kind": "history"})


def test_sort_orders_by_the_field(api: TestClient[Any]) -> None:
    body = found(api, sort={"year": "desc"})
    years = [h["year"] for h in body["hits"] if "year" in h]
    assert years == sorted(years, reverse=True)


def test_text_finds_every_document_with_all_the_words(api: TestClient[Any]) -> None:
    body = found(api, q="night")
    expected = {str(r["id"]) for r in ROWS
                if any(w.lower().startswith("night")
                       for f in ("title", "author") for w in str(r.get(f, "")).split())}
    assert expected <= hit_ids(body)
    assert all(isinstance(h["_score"], float) for h in body["hits"])


def test_highlights_are_escaped_with_marks(api: TestClient[Any]) -> None:
    body = found(api, q="kate", highlight="author")
    kate = [h for h in body["hits"] if h.get("author") == "Kate <K> Smith"]
    assert kate
    for h in kate:
        assert h["_highlights"] == {"author": ["<mark>Kate</mark> &lt;K&gt; Smith"]}


def test_facet_values_contain_the_text(api: TestClient[Any]) -> None:
    response = api.get("/books/facets/kind", params={"q": "ist"})
    assert response.status_code == 200
    expected = Counter(r["genre"] for r in ROWS if "ist" in str(r.get("genre", "")).casefold())
    assert {v["value"]: v["count"] for v in response.json()["values"]} == dict(expected)


def test_documents_mapping_and_raw_query(api: TestClient[Any]) -> None:
    document = api.get("/books/documents/b01").json()
    assert document["objectID"] == "b01" and document["title"] == ROWS[0]["title"]
    assert api.get("/books/documents/missing").status_code == 404
    mapping = api.get("/books/mapping").json()
    assert sorted(mapping["filterableAttributes"]) == sorted(FILTERABLE)
    raw = api.post("/books/query", json={"q": "", "limit": 2})
    assert raw.status_code == 200 and len(raw.json()["hits"]) == 2


def test_engine_rejections_are_400s(api: TestClient[Any]) -> None:
    response = api.get("/books/search", params={"filters": json.dumps({"place": "Paris"})})
    assert response.status_code == 400
    assert response.json()["error"].startswith("The meilisearch engine rejected the query")
