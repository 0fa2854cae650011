"""The same requests against every engine, each loaded with the same rows: the answers
must be the ones computed here from the rows, whatever engine is behind the handle.

- filter- and facet-only requests (empty ``q``): totals, ids, facet counts, histogram
  buckets and geo tiles are exact;
- text queries: every document containing all query words is found;
- a feature the engine cannot do is a 400 naming it and the engine, and ``/indexes`` says
  so; a filter form an engine cannot express (``REFUSED_FILTERS``) is a 400 naming it too,
  never a silently different answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.conformance import matrix
from tests.conformance.conftest import HANDLE
from tests.conformance.dataset import (
    ROWS,
    as_facet_value,
    containing_all,
    containing_all_with_prefix,
    facet_counts,
    histogram,
    select,
    tiles,
    values,
)

ALL = {"perPage": "100"}
# Written dates taken from the rows: a day holding a late-evening document, exact seconds.
EVENING = ROWS[0]["published"]  # 21:18 UTC
SECOND = ROWS[1]["published"]

FILTERS: list[dict[str, Any]] = [
    {},
    {"genre": "fiction"},
    {"genre": ["fiction", "poetry"]},
    {"tags": "award"},
    {"tags": ["new", "illustrated"]},
    {"year": {"min": 1980, "max": 2000}},
    {"year": {"min": 2001}},
    {"price": {"max": 20}},
    {"price": {"min": 10.5, "max": 30.5}},
    {"rating": 3},
    {"rating": [4, 5]},
    {"available": True},
    {"available": False, "genre": "history"},
    {"genre": {"not": "fiction"}},
    {"tags": {"not": ["new", "classic"]}},
    {"price": {"exists": True}},
    {"price": {"exists": False}},
    {"genre": ["science", "poetry"], "tags": "classic", "year": {"max": 1999}},
    {"price": [12, 54.5]},
    {"price": 36.5},
    {"year": {"min": 1960.5, "max": 1990.5}},
    {"rating": {"not": 3}},
    {"rating": {"not": [1, 5]}, "genre": "fiction"},
    {"available": {"not": True}},
    {"price": {"not": [12, 5]}},
    {"published": {"min": "2000-01-01", "max": "2009-12-31"}},
    {"published": {"max": EVENING[:10]}},
    {"published": {"min": SECOND}},
    {"published": {"min": "2005-01-01T00:00:00+02:00", "max": "2012-06-30T23:59:59.5Z"}},
    {"published": EVENING[:10]},
    {"published": [SECOND, "1998-01-08"]},
    {"published": {"not": EVENING[:10]}, "genre": ["fiction", "history"]},
    # fields every document has: nothing is missing them
    {"genre": {"exists": False}},
    {"year": {"exists": False}, "tags": "award"},
    {"published": {"exists": False}},
    {"available": {"exists": False}},
]


# Filters an engine cannot express, and the 400 it answers instead. Typesense 0.24.1 has no
# comparison that holds for a document without a number (``price:!=``, ``price:=null`` and
# negation are all rejected by the server), so "no price" cannot be asked of it, neither
# alone nor as the part of a not filter that keeps the documents without a price.
REFUSED_FILTERS: dict[str, dict[str, str]] = {
    "typesense": {
        json.dumps({"price": {"exists": False}}):
            "An exists filter on the float field 'price' is not supported by the typesense "
            "engine",
        # ranges (price:<v || price:>v) would also drop the documents without a price
        json.dumps({"price": {"not": [12, 5]}}):
            "A not filter on the optional float field 'price' is not supported by the "
            "typesense engine",
    },
}


def get(api: TestClient[Any], **params: Any) -> Any:
    query = {k: json.dumps(v) if isinstance(v, dict) else str(v) for k, v in params.items()}
    return api.get(f"/{HANDLE}/search", params={**ALL, **query})


def search(api: TestClient[Any], **params: Any) -> dict[str, Any]:
    response = get(api, **params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def engine_of(api: TestClient[Any]) -> str:
    name: str = api.engine_name  # type: ignore[attr-defined]
    return name


def refused_filter(api: TestClient[Any], filters: dict[str, Any]) -> str | None:
    return REFUSED_FILTERS.get(engine_of(api), {}).get(json.dumps(filters))


def assert_refused(api: TestClient[Any], message: str, **params: Any) -> None:
    response = get(api, **params)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == message


def unsupported(feature: str, api: TestClient[Any]) -> str:
    return f"{feature} is not supported by the {engine_of(api)} engine"


def capabilities(api: TestClient[Any]) -> dict[str, bool]:
    indexes = api.get("/indexes").json()["indexes"]
    caps: dict[str, bool] = indexes[0]["capabilities"]
    return caps


@pytest.mark.parametrize("filters", FILTERS, ids=json.dumps)
def test_filters_select_exactly_the_matching_documents(
    api: TestClient[Any], filters: dict[str, Any]
) -> None:
    refusal = refused_filter(api, filters)
    if refusal is not None:
        assert_refused(api, refusal, filters=filters)
        return
    expected = {r["id"] for r in select(filters)}
    body = search(api, filters=filters)
    assert body["totalHits"] == len(expected)
    assert {h["objectID"] for h in body["hits"]} == expected


@pytest.mark.parametrize("filters", FILTERS, ids=json.dumps)
def test_facet_counts_are_disjunctive_and_exact(
    api: TestClient[Any], filters: dict[str, Any]
) -> None:
    params = {"filters": filters, "facets": "genre,tags,rating,available", "perPage": 1}
    refusal = refused_filter(api, filters)
    if refusal is not None:
        assert_refused(api, refusal, **params)
        return
    body = search(api, **params)
    for field in ("genre", "tags", "rating", "available"):
        got = {v["value"]: v["count"] for v in body["facets"].get(field, [])}
        assert got == facet_counts(filters, field), field


def test_facet_values_are_ordered_by_count_then_value(api: TestClient[Any]) -> None:
    body = search(api, facets="tags", perPage=1)
    pairs = [(v["count"], v["value"]) for v in body["facets"]["tags"]]
    assert pairs == sorted(pairs, key=lambda p: (-p[0], p[1]))


@pytest.mark.parametrize("sort", [{"rank": "asc"}, {"rank": "desc"},
                                  {"genre": "asc", "rank": "desc"},
                                  {"rating": "desc", "rank": "asc"}], ids=json.dumps)
def test_sort_orders_by_every_key_in_priority(api: TestClient[Any], sort: dict[str, str]) -> None:
    rows = list(ROWS)
    for field, order in reversed(sort.items()):
        rows.sort(key=lambda r, f=field: r[f], reverse=order == "desc")
    body = search(api, sort=sort)
    assert [h["objectID"] for h in body["hits"]] == [r["id"] for r in rows]


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_documents_without_the_sort_field_come_last(api: TestClient[Any], order: str) -> None:
    priced = sorted((r for r in ROWS if "price" in r),
                    key=lambda r: (r["price"] if order == "asc" else -r["price"], r["rank"]))
    unpriced = sorted((r for r in ROWS if "price" not in r), key=lambda r: r["rank"])
    body = search(api, sort={"price": order, "rank": "asc"})
    assert [h["objectID"] for h in body["hits"]] == [r["id"] for r in priced + unpriced]


def test_pages_slice_the_sorted_results(api: TestClient[Any]) -> None:
    ranked = [r["id"] for r in sorted(select({"available": True}), key=lambda r: r["rank"])]
    body = search(api, filters={"available": True}, sort={"rank": "asc"}, page=2, perPage=7)
    assert [h["objectID"] for h in body["hits"]] == ranked[7:14]
    assert body["totalPages"] == -(-len(ranked) // 7)


@pytest.mark.parametrize("query", ["castle", "castle night", "winter stone", "Jules Verne"])
def test_text_search_finds_every_document_with_all_words(
    api: TestClient[Any], query: str
) -> None:
    found = {h["objectID"] for h in search(api, q=query)["hits"]}
    assert containing_all(query) <= found


@pytest.mark.parametrize("query", ["cas", "winter sto", "Jules Ve"])
def test_the_last_word_also_matches_as_a_prefix(api: TestClient[Any], query: str) -> None:
    expected = containing_all_with_prefix(query)
    assert expected
    found = {h["objectID"] for h in search(api, q=query)["hits"]}
    assert expected <= found


def test_autocomplete_finds_prefixes_and_facet_values(api: TestClient[Any]) -> None:
    response = api.get(f"/{HANDLE}/autocomplete",
                       params={"q": "cas", "perPage": "20", "facets": "tags,genre"})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = containing_all_with_prefix("cas")
    assert body["totalHits"] == len(expected)
    assert {h["objectID"] for h in body["hits"]} <= expected
    assert len(body["hits"]) == min(20, len(expected))
    assert "facets" not in body  # no tag or genre contains "cas"
    response = api.get(f"/{HANDLE}/autocomplete", params={"q": "CLA", "facets": "tags,genre"})
    assert response.status_code == 200, response.text
    classic = facet_counts({}, "tags")["classic"]
    assert response.json()["facets"] == {"tags": [{"value": "classic", "count": classic}]}


@pytest.mark.parametrize("filters", [{"genre": "fiction"}, {"year": {"min": 1990}},
                                     {"available": True, "rating": [1, 2]}], ids=json.dumps)
def test_facet_values_are_counted_under_the_filters(
    api: TestClient[Any], filters: dict[str, Any]
) -> None:
    response = api.get(f"/{HANDLE}/facets/tags",
                       params={"filters": json.dumps(filters), "maxValues": "100"})
    assert response.status_code == 200, response.text
    counts = facet_counts(filters, "tags")
    expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert response.json() == {"field": "tags",
                               "values": [{"value": v, "count": c} for v, c in expected]}


def test_highlights_mark_the_matched_words(api: TestClient[Any]) -> None:
    body = search(api, q="castle", highlight="true")
    titled = [h for h in body["hits"] if "castle" in h["title"].lower()]
    assert titled
    for hit in titled:
        fragments = hit["_highlights"]["title"]
        assert any("<mark>" in f and "castle" in f.lower() for f in fragments), hit


def test_fields_select_the_returned_fields(api: TestClient[Any]) -> None:
    body = search(api, fields="title,year", perPage=5)
    for hit in body["hits"]:
        assert set(hit) - {"objectID", "_index", "_score", "_highlights"} == {"title", "year"}


def test_documents_come_back_whole(api: TestClient[Any]) -> None:
    priced = next(r for r in ROWS if "price" in r and not float(r["price"]).is_integer())
    unpriced = next(r for r in ROWS if "price" not in r)
    for row in (priced, unpriced):
        response = api.get(f"/{HANDLE}/documents/{row['id']}")
        assert response.status_code == 200
        doc = response.json()
        assert doc["objectID"] == row["id"]
        for field in ("title", "author", "genre", "tags", "year", "rank", "available", "price"):
            assert doc.get(field) == row.get(field), field
    assert api.get(f"/{HANDLE}/documents/missing-id").status_code == 404


def test_facet_value_search_matches_substrings_case_insensitively(api: TestClient[Any]) -> None:
    response = api.get(f"/{HANDLE}/facets/tags", params={"q": "LAT"})
    assert response.status_code == 200
    counts = facet_counts({}, "tags")
    assert response.json()["values"] == [{"value": "translated", "count": counts["translated"]}]


@pytest.mark.parametrize("filters", [{}, {"genre": "fiction"}, {"tags": "award"}],
                         ids=json.dumps)
def test_histograms_count_every_bucket(api: TestClient[Any], filters: dict[str, Any]) -> None:
    params = {"filters": filters, "facets": "tags", "perPage": 1,
              "histogram": {"year": 10, "price": 10}}
    if not capabilities(api)["histogram"]:
        assert_refused(api, unsupported("histogram", api), **params)
        return
    body = search(api, **params)
    for field, interval in (("year", 10), ("price", 10)):
        got = [(b["key"], b["count"]) for b in body["histograms"][field]]
        assert got == histogram(filters, field, interval), field


@pytest.mark.parametrize("filters", [{}, {"genre": "poetry"}, {"tags": "classic"}],
                         ids=json.dumps)
def test_geo_clusters_count_every_tile(api: TestClient[Any], filters: dict[str, Any]) -> None:
    params = {"filters": filters, "facets": "tags", "perPage": 1,
              "geoGrid": {"field": "location", "precision": 4}}
    if not capabilities(api)["geoGrid"]:
        assert_refused(api, unsupported("geoGrid", api), **params)
        return
    body = search(api, **params)
    got = {c["key"]: c["count"] for c in body["geoClusters"]}
    assert got == tiles(filters, 4)


REFUSALS = {
    "histogram": ("histogram", {"histogram": {"year": 10}}),
    "geoGrid": ("geoGrid", {"geoGrid": {"field": "location", "precision": 3}}),
    "boosts": ("boosts", {"boosts": {"title": 2}}),
}


@pytest.mark.parametrize("capability", sorted(REFUSALS))
def test_a_missing_capability_is_a_400_naming_it(api: TestClient[Any], capability: str) -> None:
    feature, params = REFUSALS[capability]
    if capabilities(api)[capability]:
        search(api, **params)
    else:
        assert_refused(api, unsupported(feature, api), **params)


def test_suggest_is_refused_by_the_engines_without_it(api: TestClient[Any]) -> None:
    """``/indexes`` reports suggest only with a ``suggestField`` (the dataset has none), so
    the adapter's own capability decides which 400 comes back."""
    params = {"q": "castle", "suggest": "true"}
    if matrix.capabilities(engine_of(api)).suggest:
        assert_refused(api, "suggest needs defaults.suggestField configured for this index",
                       **params)
    else:
        assert_refused(api, unsupported("suggest", api), **params)


def test_facet_value_text_is_a_string(api: TestClient[Any]) -> None:
    body = search(api, facets="available,rating", perPage=1)
    assert {v["value"] for v in body["facets"]["available"]} <= {"true", "false"}
    assert {v["value"] for v in body["facets"]["rating"]} == {
        as_facet_value(r["rating"]) for r in ROWS
    }


# ---------------------------------------------------------------- date facet values
# Dates come back as ISO-8601 strings, never as epoch numbers (docs/filters-and-parameters.md).
# The format is the tantivy engine's (``2002-07-18T12:54:00Z``, UTC, whole seconds): the
# rows' own text.
# Elasticsearch and OpenSearch write milliseconds in ``key_as_string``; their adapter drops
# zero ones, so every engine answers the same text.
DATE_FACET_FILTERS: list[dict[str, Any]] = [
    {},
    {"genre": "poetry"},
    {"published": {"min": "2005-01-01"}, "genre": "fiction"},
]


def ordered(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [{"value": v, "count": c}
            for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@pytest.mark.parametrize("filters", DATE_FACET_FILTERS, ids=json.dumps)
def test_date_facet_values_are_iso_strings_by_count_then_value(
    api: TestClient[Any], filters: dict[str, Any]
) -> None:
    body = search(api, filters=filters, facets="published,genre", perPage=1)
    assert body["facets"]["published"] == ordered(facet_counts(filters, "published"))
    assert body["facets"]["genre"] == ordered(facet_counts(filters, "genre"))


@pytest.mark.parametrize(("text", "filters", "limit"), [
    ("", {}, 5), ("", {"genre": "history"}, 3), ("-07-", {}, 100), ("t2", {}, 100),
    ("2005", {"available": True}, 100), ("Z", {"genre": "poetry"}, 4), ("1899", {}, 10),
])
def test_date_facet_value_search_matches_the_iso_text(
    api: TestClient[Any], text: str,
    filters: dict[str, Any], limit: int,
) -> None:
    response = api.get(f"/{HANDLE}/facets/published", params={
        "q": text, "filters": json.dumps(filters), "maxValues": str(limit)})
    assert response.status_code == 200, response.text
    counts = {v: c for v, c in facet_counts(filters, "published").items()
              if text.casefold() in v.casefold()}
    assert response.json() == {"field": "published", "values": ordered(counts)[:limit]}


def test_autocomplete_offers_date_values_containing_the_text(
    api: TestClient[Any]
) -> None:
    response = api.get(f"/{HANDLE}/autocomplete", params={"q": "2011", "facets": "published",
                                                          "maxFacetsPerField": "20"})
    assert response.status_code == 200, response.text
    counts = {v: c for v, c in facet_counts({}, "published").items() if "2011" in v}
    assert counts  # the dataset has documents of 2011
    assert response.json()["facets"] == {"published": ordered(counts)}


# ---------------------------------------------------------------- Algolia filters as groups
# Clauses no single filter on one field expresses (an OR across attributes, a negated
# comparison or range, an OR of negations, numbers in separate intervals) through the
# Algolia route, with Algolia's meaning: a literal holds when some value does, NOT is the
# complement (records without the attribute are kept). Facet counts follow every filter.

def has(row: dict[str, Any], field: str, test: Any) -> bool:
    return any(test(v) for v in values(row, field))


ALGOLIA_FILTERS: dict[str, Any] = {
    "genre:fiction OR year > 2010":
        lambda r: r["genre"] == "fiction" or r["year"] > 2010,
    "NOT year:1980 TO 2000":
        lambda r: not 1980 <= r["year"] <= 2000,
    "rating < 2 OR rating > 4":
        lambda r: r["rating"] < 2 or r["rating"] > 4,
    "NOT genre:fiction OR NOT tags:new":
        lambda r: r["genre"] != "fiction" or "new" not in r["tags"],
    "tags:award OR NOT available:true":
        lambda r: "award" in r["tags"] or r["available"] is not True,
    "(genre:poetry OR rating >= 4) AND NOT year < 1970":
        lambda r: (r["genre"] == "poetry" or r["rating"] >= 4) and not r["year"] < 1970,
    "NOT (genre:fiction AND year > 2000)":
        lambda r: not (r["genre"] == "fiction" and r["year"] > 2000),
    "genre:history OR price < 10":
        lambda r: r["genre"] == "history" or has(r, "price", lambda v: v < 10),
    "price:10 TO 20 OR price:40 TO 50":
        lambda r: has(r, "price", lambda v: 10 <= v <= 20 or 40 <= v <= 50),
    "NOT price > 20":
        lambda r: not has(r, "price", lambda v: v > 20),
    "year != 1999 AND (NOT rating:3 OR tags:classic)":
        lambda r: r["year"] != 1999 and (r["rating"] != 3 or "classic" in r["tags"]),
}
# Typesense 0.24.1 cannot select the records without a price that NOT keeps.
ALGOLIA_REFUSED: dict[str, dict[str, str]] = {
    "typesense": {
        "NOT price > 20": "A negated range filter on the optional float field 'price' is not "
                          "supported by the typesense engine",
    },
}


@pytest.mark.parametrize("text", sorted(ALGOLIA_FILTERS))
def test_algolia_filters_across_attributes_and_negations(
    api: TestClient[Any], text: str
) -> None:
    response = api.post(f"/1/indexes/{HANDLE}/query", json={"params": {
        "filters": text, "hitsPerPage": 100, "facets": ["genre", "tags"]}})
    refusal = ALGOLIA_REFUSED.get(engine_of(api), {}).get(text)
    if refusal is not None:
        assert response.status_code == 400, response.text
        assert response.json()["error"] == refusal
        return
    assert response.status_code == 200, response.text
    body = response.json()
    chosen = [r for r in ROWS if ALGOLIA_FILTERS[text](r)]
    assert chosen and len(chosen) < len(ROWS)  # the case tells something
    assert body["nbHits"] == len(chosen)
    assert {h["objectID"] for h in body["hits"]} == {r["id"] for r in chosen}
    for field in ("genre", "tags"):
        counts: dict[str, int] = {}
        for row in chosen:
            for value in set(values(row, field)):
                counts[value] = counts.get(value, 0) + 1
        assert body["facets"].get(field, {}) == counts, field
