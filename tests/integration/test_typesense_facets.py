"""Facets on a real Typesense 0.24.1: counts (disjunctive: a facet's own filters do not
narrow its own counts), ties at the cut, facet-value search and autocomplete. Expected
counts come from plain Python over the loaded rows.

Typesense counts string facet values the way it compares them in filters: values that
differ only in case, accents or symbols are one value, shown in one of their spellings.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.adapters.network.pools import EnginePools
from searchport.adapters.resources import EngineResources
from searchport.adapters.typesense import TypesenseEngine
from searchport.domain.config import IndexConfig
from searchport.domain.query import SearchQuery
from searchport.domain.results import FacetValue
from searchport.ports.engine import SearchEnginePort
from tests.integration.typesense_server import (
    AWKWARD,
    app_client,
    awkward_docs,
    index_settings,
    tokens,
    typesense_rows,
)
from tests.typesense_server import TypesenseServer

Row = dict[str, Any]
ROWS = typesense_rows()
DOCS = awkward_docs()


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    fields = {"title": {"weight": 2}, "writer": {"field": "author", "searchable": True}}
    with app_client({"books": index_settings(server, fields=fields),
                     "awkward": index_settings(server, AWKWARD)}) as client:
        yield client


def get(client: TestClient[Any], path: str, **params: Any) -> Any:
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    response = client.get(path, params=encoded)
    assert response.status_code == 200, response.text
    return response.json()


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def counted(rows: Iterable[Row], field: str, limit: int = 100) -> list[dict[str, Any]]:
    counts: Counter[str] = Counter()
    for row in rows:
        value = row.get(field)
        for item in set(value) if isinstance(value, list) else [] if value is None else [value]:
            counts[as_text(item)] += 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"value": v, "count": c} for v, c in ordered[:limit]]


def matching(rows: Iterable[Row], test: Callable[[Row], bool]) -> list[Row]:
    return [r for r in rows if test(r)]


def is_history(r: Row) -> bool:
    return r.get("genre") == "history"


def night_or_city(r: Row) -> bool:
    return bool({"night", "city"} & set(r.get("tags") or []))


def recent(r: Row) -> bool:
    return r.get("year", 0) >= 1950


# ---------------------------------------------------------------- counts


@pytest.mark.parametrize("field", ["genre", "tags", "language", "place", "year", "available"])
def test_counts_and_order(client: TestClient[Any], field: str) -> None:
    body = get(client, "/books/search", facets=field, perPage=1)
    assert body["facets"] == {field: counted(ROWS, field)}


def test_counts_follow_the_text(client: TestClient[Any]) -> None:
    castle = matching(ROWS, lambda r: any(w.startswith("castle") for w in tokens(r["title"])))
    body = get(client, "/books/search", q="castle", facets="genre,writer", perPage=1)
    assert body["totalHits"] == len(castle)
    assert body["facets"] == {"genre": counted(castle, "genre"),
                              "writer": counted(castle, "author")}


def test_a_facets_own_filters_do_not_narrow_its_counts(client: TestClient[Any]) -> None:
    filters = {"genre": "history", "tags": ["night", "city"], "year": {"min": 1950}}
    body = get(client, "/books/search", facets="genre,tags,language", filters=filters,
               perPage=100)
    hits = matching(ROWS, lambda r: is_history(r) and night_or_city(r) and recent(r))
    assert {h["objectID"] for h in body["hits"]} == {r["id"] for r in hits}
    assert body["facets"] == {
        "genre": counted(matching(ROWS, lambda r: night_or_city(r) and recent(r)), "genre"),
        "tags": counted(matching(ROWS, lambda r: is_history(r) and recent(r)), "tags"),
        "language": counted(hits, "language"),
    }


def test_every_facet_filtered_by_its_own_field(client: TestClient[Any]) -> None:
    filters = {"genre": ["history", "travel"], "available": True}
    body = get(client, "/books/search", q="the", facets="genre,available", filters=filters)
    text = matching(ROWS, lambda r: any(w.startswith("the") for w in tokens(r["title"]))
                    or any(w.startswith("the") for w in tokens(r.get("author", ""))))
    assert body["facets"] == {
        "genre": counted(matching(text, lambda r: r.get("available") is True), "genre"),
        "available": counted(matching(text, lambda r: r.get("genre") in ("history", "travel")),
                             "available"),
    }


def test_facet_refusals(client: TestClient[Any]) -> None:
    response = client.get("/books/search", params={"facets": "title"})
    assert response.status_code == 400
    assert "'title'" in response.json()["error"] and "facet" in response.json()["error"]
    response = client.get("/books/facets/price")
    assert response.json() == {
        "error": "A facet on the float field 'price' is not supported by the typesense engine"
    }


@pytest.mark.anyio
async def test_a_tie_across_the_cut_is_settled(server: TypesenseServer) -> None:
    """Eleven places with four books each: Typesense returns any four of them for a cut of
    three; the adapter reads on until the best three by count then name are known."""
    config = msgspec.convert(index_settings(server), IndexConfig)
    pools = EnginePools()
    engine: SearchEnginePort = TypesenseEngine("books", config, EngineResources(Path("."), pools))
    try:
        result = await engine.search(SearchQuery(facets=("place",), max_facet_values=3, limit=0))
    finally:
        await pools.aclose()
    best = sorted(result.facets["place"], key=lambda v: (-v.count, v.value))[:3]
    assert best == [FacetValue(value=v, count=4) for v in ("Apia", "Buenos Aires", "Cairo")]


def test_awkward_values_come_back_as_stored_grouped_like_filters(
        client: TestClient[Any]) -> None:
    groups: dict[tuple[str, ...], list[str]] = {}
    for doc in DOCS:
        groups.setdefault(tokens(doc["v"]), []).append(doc["v"])
    values = get(client, "/awkward/search", facets="v", perPage=1)["facets"]["v"]
    assert len(values) == len(groups)
    for entry in values:
        spellings = groups[tokens(entry["value"])]
        assert entry["value"] in spellings and entry["count"] == len(spellings)


# ---------------------------------------------------------------- facet-value search


@pytest.mark.parametrize(("field", "text", "filters"), [
    ("writer", "an", None), ("writer", "AN", {"genre": "history"}), ("place", "o", None),
    ("genre", "", {"year": {"max": 1950}}), ("tags", "t", {"tags": "night"}),
    ("year", "19", None), ("available", "u", None), ("writer", "café", None),
    ("place", "zz", None), ("writer", "-luc", None), ("writer", "&", None),
])
def test_facet_values_containing_the_text(client: TestClient[Any], field: str, text: str,
                                          filters: dict[str, Any] | None) -> None:
    real = "author" if field == "writer" else field

    def passes(row: Row) -> bool:
        if filters is None:
            return True
        ok = True
        if "genre" in filters:
            ok = ok and row.get("genre") == filters["genre"]
        if "year" in filters:
            ok = ok and row.get("year", 10**9) <= filters["year"]["max"]
        if "tags" in filters:
            ok = ok and filters["tags"] in (row.get("tags") or [])
        return ok

    params: dict[str, Any] = {"q": text, "maxValues": 5}
    if filters:
        params["filters"] = filters
    body = get(client, f"/books/facets/{field}", **params)
    expected = [v for v in counted(matching(ROWS, passes), real, limit=1000)
                if text.casefold() in v["value"].casefold()][:5]
    assert body == {"field": field, "values": expected}


def test_facet_values_ties_are_ordered_by_value(client: TestClient[Any]) -> None:
    body = get(client, "/books/facets/place", maxValues=2)
    assert body["values"] == [{"value": "Apia", "count": 4}, {"value": "Buenos Aires", "count": 4}]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text("ab`,[]()&|!=:<>\"'\\ -*.%", max_size=6))
def test_facet_value_search_with_any_text(client: TestClient[Any], text: str) -> None:
    everything = get(client, "/awkward/facets/v", maxValues=100)["values"]
    needle = text.strip().casefold()
    expected = [v for v in everything if needle in v["value"].casefold()]
    assert get(client, "/awkward/facets/v", q=text, maxValues=100)["values"] == expected


# ---------------------------------------------------------------- autocomplete


def test_autocomplete_prefix_hits_and_matching_facet_values(client: TestClient[Any]) -> None:
    body = get(client, "/books/autocomplete", q="lon", facets="place,genre", perPage=3)
    words = [r for r in ROWS if any(w.startswith("lon") for f in ("title", "author")
                                    for w in tokens(r.get(f, "")))]
    assert body["totalHits"] == len(words) and len(body["hits"]) == min(3, len(words))
    assert {h["objectID"] for h in body["hits"]} <= {r["id"] for r in words}
    assert body["facets"] == {"place": [{"value": "London", "count": 4}]}
