"""The Algolia endpoints through the real app over a real tantivy index of books.jsonl:
nbHits, facets (Algolia's semantics: every filter counts), hits and pages against values
computed from the rows."""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import msgspec
import pytest
from litestar.testing import TestClient

from searchport.domain.config import Config
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.conftest import BOOK_FIELDS, BOOKS

Row = dict[str, Any]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    base = tmp_path_factory.mktemp("algolia")
    config = msgspec.convert({"indexes": {"books": {
        "engine": "tantivy", "path": str(base / "index"), "source": str(BOOKS),
        "fields": BOOK_FIELDS, "defaults": {"facets": ["genre", "language"]},
    }}}, Config)
    with TestClient(create_app(create_container(config, Path(base)))) as client:
        yield client


def search(client: TestClient[Any], **params: Any) -> dict[str, Any]:
    encoded = urlencode({k: v if isinstance(v, str) else json.dumps(v)
                         for k, v in params.items()})
    response = client.post("/1/indexes/books/query", content=json.dumps({"params": encoded}),
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def counts(rows: list[Row], field: str) -> dict[str, int]:
    found: Counter[str] = Counter()
    for row in rows:
        value = row.get(field)
        for v in value if isinstance(value, list) else [] if value is None else [value]:
            found[str(v)] += 1
    return dict(found)


def test_facets_follow_every_filter(client: TestClient[Any], rows: list[Row]) -> None:
    body = search(client, facetFilters=[["genre:fiction", "genre:poetry"], "language:-de"],
                  numericFilters=["price>10"], facets=["genre", "tags"], hitsPerPage=0)
    chosen = [r for r in rows if r.get("genre") in ("fiction", "poetry")
              and r.get("language") != "de" and r.get("price", -1) > 10]
    assert body["nbHits"] == len(chosen)
    assert body["hits"] == [] and body["nbPages"] == 0 and body["hitsPerPage"] == 0
    assert body["facets"] == {"genre": counts(chosen, "genre"), "tags": counts(chosen, "tags")}
    assert body["exhaustiveNbHits"] is True and body["exhaustiveFacetsCount"] is True
    assert body["exhaustive"] == {"nbHits": True, "facetsCount": True}
    assert body["index"] == "books"


def test_strict_and_inclusive_bounds(client: TestClient[Any], rows: list[Row]) -> None:
    strict = search(client, filters="year > 1850 AND year < 2004", hitsPerPage=100)
    assert {h["objectID"] for h in strict["hits"]} == {
        str(r["id"]) for r in rows if 1850 < r.get("year", 0) < 2004}
    ranged = search(client, filters="year:1850 TO 2004", hitsPerPage=100)
    assert ranged["nbHits"] == sum(1 for r in rows if 1850 <= r.get("year", 0) <= 2004)
    not_equal = search(client, numericFilters="price != 10", hitsPerPage=100)
    assert not_equal["nbHits"] == sum(1 for r in rows if r.get("price") != 10)


def test_pages_count_from_zero(client: TestClient[Any], rows: list[Row]) -> None:
    first = search(client, hitsPerPage=7, page=0, facets="*")
    second = search(client, hitsPerPage=7, page=1)
    assert first["nbHits"] == len(rows) and first["nbPages"] == math.ceil(len(rows) / 7)
    assert len(first["hits"]) == 7 and second["page"] == 1
    assert not {h["objectID"] for h in first["hits"]} & {h["objectID"] for h in second["hits"]}
    assert set(first["facets"]) == {"genre", "language"}  # "*": the configured facets
    past = search(client, hitsPerPage=20, page=600)  # past the result window: no hits
    assert past["hits"] == [] and past["nbHits"] == len(rows)


def test_everything_but_the_attributes_named_with_a_dash(client: TestClient[Any],
                                                        rows: list[Row],
                                                        ref: SimpleNamespace) -> None:
    """``attributesToRetrieve: ["*", "-year"]``: every attribute but ``year``, in the hits,
    their highlights and ``getObjects``; without ``*`` a dash means nothing."""
    body = search(client, query="castle", hitsPerPage=100, attributesToRetrieve=["*", "-year"])
    by_id = {str(r["id"]): r for r in rows}
    expected = {str(r["id"]) for r in rows if ref.text_matches(r, "castle")}
    assert {h["objectID"] for h in body["hits"]} == expected
    for hit in body["hits"]:
        row = by_id[hit["objectID"]]
        assert "year" not in hit and "year" not in hit["_highlightResult"]
        assert "title" in hit and hit["title"] == row["title"]
    some = next(r for r in rows if "year" in r)
    answer = client.post("/1/indexes/*/objects", json={"requests": [
        {"indexName": "books", "objectID": str(some["id"]),
         "attributesToRetrieve": ["*", "-year"]}]})
    assert answer.status_code == 200, answer.text
    (record,) = answer.json()["results"]
    assert "year" not in record and record["title"] == some["title"]
    plain = search(client, query="castle", hitsPerPage=100, attributesToRetrieve=["-year"])
    assert all(set(h) <= {"objectID", "_highlightResult", "_snippetResult"}
               for h in plain["hits"])


def test_hits_and_highlights(client: TestClient[Any], rows: list[Row],
                             ref: SimpleNamespace) -> None:
    body = search(client, query="castle", hitsPerPage=100,
                  attributesToRetrieve=["title", "year"], attributesToHighlight=["title"],
                  highlightPreTag="<b>", highlightPostTag="</b>")
    expected = {str(r["id"]) for r in rows if ref.text_matches(r, "castle")}
    assert {h["objectID"] for h in body["hits"]} == expected
    by_id = {str(r["id"]): r for r in rows}
    for hit in body["hits"]:
        assert set(hit) <= {"objectID", "title", "year", "_highlightResult"}
        title = hit["_highlightResult"]["title"]
        # the last query word also matches as a prefix ("castles")
        if any(w.startswith("castle") for w in ref.words(by_id[hit["objectID"]]["title"])):
            assert "<b>" in title["value"] and title["matchLevel"] == "full"
            assert title["matchedWords"] == ["castle"]
        else:
            assert title["matchLevel"] == "none"
    assert body["query"] == "castle" and "query=castle" in body["params"]


def test_multi_queries_on_several_handles_in_order(client: TestClient[Any],
                                                   rows: list[Row]) -> None:
    response = client.post("/1/indexes/*/queries", json={"requests": [
        {"indexName": "books", "params": "hitsPerPage=0&facets=%5B%22genre%22%5D"},
        {"indexName": "books", "query": "castle", "hitsPerPage": 1},
        {"indexName": "books", "type": "facet", "facet": "genre", "params": "facetQuery=fic"},
    ]})
    assert response.status_code == 200, response.text
    first, second, third = response.json()["results"]
    assert first["facets"]["genre"] == counts(rows, "genre")
    assert second["query"] == "castle" and len(second["hits"]) == 1
    fiction = counts(rows, "genre")
    assert third["facetHits"] == [
        {"value": v, "highlighted": v.replace("fic", "<em>fic</em>", 1), "count": fiction[v]}
        for v in sorted(fiction, key=lambda v: (-fiction[v], v)) if "fic" in v.lower()]


def test_facet_value_search_with_filters(client: TestClient[Any], rows: list[Row]) -> None:
    response = client.post("/1/indexes/books/facets/tags/query",
                           json={"params": "facetQuery=&maxFacetHits=3&filters=year%20%3E%201950"})
    assert response.status_code == 200, response.text
    tags = counts([r for r in rows if r.get("year", 0) > 1950], "tags")
    top = sorted(tags, key=lambda v: (-tags[v], v))[:3]
    assert [(h["value"], h["count"]) for h in response.json()["facetHits"]] == [
        (v, tags[v]) for v in top]


def test_facets_stats_of_numeric_facets(client: TestClient[Any], rows: list[Row]) -> None:
    body = search(client, facets=["price", "year", "genre"], filters="year >= 1900",
                  hitsPerPage=0)
    chosen = [r for r in rows if r.get("year", 0) >= 1900]
    for field in ("price", "year"):
        found = [float(r[field]) for r in chosen if field in r]
        stats = body["facets_stats"][field]
        assert stats["min"] == min(found) and stats["max"] == max(found)
        assert stats["sum"] == pytest.approx(sum(found))
        assert stats["avg"] == pytest.approx(sum(found) / len(found))
    assert "genre" not in body["facets_stats"]
    # maxValuesPerFacet cuts the values shown, not those the stats are computed from
    few = search(client, facets=["price"], maxValuesPerFacet=2, hitsPerPage=0)
    prices = [float(r["price"]) for r in rows if "price" in r]
    assert len(few["facets"]["price"]) == 2
    assert few["facets_stats"]["price"]["max"] == max(prices)


def test_around_radius_is_refused_naming_it_and_the_engine(client: TestClient[Any]) -> None:
    """tantivy has no exact distance filter: a radius is a 400, never an approximation."""
    response = client.post("/1/indexes/books/query", json={"params": {
        "aroundLatLng": "48.85, 2.35", "aroundRadius": 5000}})
    assert response.status_code == 400
    assert response.json()["error"] == "aroundRadius is not supported by the tantivy engine"


def test_ranking_by_distance_is_refused_naming_it_and_the_engine(
        client: TestClient[Any]) -> None:
    """``aroundRadius: "all"`` filters nothing but still asks for Algolia's ranking by
    distance, which tantivy cannot give: a 400, never a silent relevance order."""
    response = client.post("/1/indexes/books/query", json={"params": {
        "aroundLatLng": "48.85, 2.35", "aroundRadius": "all"}})
    assert response.status_code == 400
    assert response.json()["error"] == "aroundLatLng is not supported by the tantivy engine"


# ---------------------------------------------------------------- snippets


def castle_snippet(title: str, size: int) -> str:
    """The expected snippet of a title for the query "castle", from the title alone: the
    letters "castle" of the words castle* marked (a prefix match marks what was typed),
    ``(size - 1) // 2`` words before the first, ``…`` where words were left out,
    HTML-escaped (the default ``<em>`` tags are HTML)."""
    words = title.split()
    hit = [i for i, w in enumerate(words) if re.sub(r"\W", "", w).lower().startswith("castle")]
    start = max(0, min(hit[0] - (size - 1) // 2, len(words) - size))
    end = min(len(words), start + size)
    def marked(w: str) -> str:
        at = w.lower().index("castle")
        return (html.escape(w[:at]) + f"<em>{html.escape(w[at:at + 6])}</em>"
                + html.escape(w[at + 6:]))

    shown = " ".join(marked(w) if i in hit else html.escape(w)
                     for i, w in enumerate(words) if start <= i < end)
    return ("… " if start > 0 else "") + shown + (" …" if end < len(words) else "")


@pytest.mark.parametrize("size", [1, 2, 3, 10])
def test_snippets_are_windows_of_the_matched_words(client: TestClient[Any], rows: list[Row],
                                                   size: int) -> None:
    """``attributesToSnippet: ["title:N"]``: each hit's ``_snippetResult.title`` is N words
    of its title around the first match; an attribute snippeted but not highlighted gets no
    ``_highlightResult``."""
    body = search(client, query="castle", attributesToSnippet=[f"title:{size}"],
                  attributesToHighlight=["writer"], hitsPerPage=100)
    expected = {r["id"] for r in rows if "castle" in r["title"].lower()}
    assert {h["objectID"] for h in body["hits"]} == expected and len(expected) >= 4
    for hit in body["hits"]:
        assert hit["_snippetResult"] == {"title": {
            "value": castle_snippet(hit["title"], size), "matchLevel": "full"}}
        assert "title" not in hit["_highlightResult"]


def test_snippet_ellipsis_text_tags_and_no_match(client: TestClient[Any],
                                                 rows: list[Row]) -> None:
    # writer: the public name of author (BOOK_FIELDS)
    body = search(client, query="castle", attributesToSnippet=["title:1", "writer:2"],
                  snippetEllipsisText="[…]", highlightPreTag="__ais-highlight__",
                  highlightPostTag="__/ais-highlight__", hitsPerPage=100)
    by_id = {r["id"]: r for r in rows}
    otranto = next(h for h in body["hits"] if h["title"] == "The Castle of Otranto")
    assert otranto["_snippetResult"]["title"] == {
        "value": "[…] __ais-highlight__Castle__/ais-highlight__ […]", "matchLevel": "full"}
    author = by_id[otranto["objectID"]]["author"]  # no match: its first two words
    first_two = " ".join(author.split()[:2])
    assert otranto["_snippetResult"]["writer"] == {
        "value": first_two + (" […]" if len(author.split()) > 2 else ""), "matchLevel": "none"}
    plain = search(client, query="castle", hitsPerPage=3)
    assert all("_snippetResult" not in h for h in plain["hits"])


def test_a_bad_snippet_size_is_a_400_naming_the_parameter(client: TestClient[Any]) -> None:
    response = client.post("/1/indexes/books/query",
                           json={"params": {"attributesToSnippet": ["title:0"]}})
    assert response.status_code == 400
    assert "attributesToSnippet" in response.json()["error"]


def test_rendering_content_orders_the_handles_default_facets(client: TestClient[Any]) -> None:
    """InstantSearch's dynamicWidgets render the facets ``renderingContent`` names, in its
    order: the handle's ``defaults.facets``. No value ordering, which would override the
    widgets' own (refined values first)."""
    body = search(client, query="", hitsPerPage=0)
    assert body["renderingContent"] == {"facetOrdering": {
        "facets": {"order": ["genre", "language"]}}}
    multi = client.post("/1/indexes/*/queries", json={"requests": [
        {"indexName": "books", "params": "query=&hitsPerPage=0"}]})
    assert multi.status_code == 200
    assert multi.json()["results"][0]["renderingContent"] == body["renderingContent"]


def test_no_rendering_content_without_default_facets() -> None:
    from searchport.entrypoints.algolia.responses import (
        AlgoliaResult,
        Exhaustive,
        rendering_content,
    )

    assert rendering_content([]) is msgspec.UNSET
    result = AlgoliaResult(hits=[], nb_hits=0, nb_pages=0, page=0, hits_per_page=0, facets={},
                           exhaustive_nb_hits=True, exhaustive_facets_count=True,
                           exhaustive=Exhaustive(nb_hits=True, facets_count=True),
                           processing_time_ms=0, query="", params="", index="books",
                           rendering_content=rendering_content([]))
    assert "renderingContent" not in msgspec.json.decode(msgspec.json.encode(result))


@pytest.mark.parametrize(("query", "title", "value", "matched"), [
    # the word being typed: its letters marked, the word not fully highlighted
    ("otra", "The Castle of Otranto", "The Castle of <em>Otra</em>nto", ["otra"]),
    ("zur", "A Night in Zürich", "A Night in <em>Zür</em>ich", ["zur"]),
    # a typo match: the whole word, matched by the query word it is one typo from ("night",
    # an optional word, is not in this title)
    ("castel night", "The Castle of Otranto", "The <em>Castle</em> of Otranto", ["castel"]),
    ("otrnato", "The Castle of Otranto", "The Castle of <em>Otranto</em>", ["otrnato"]),
])
def test_highlight_results_say_what_matched(client: TestClient[Any], query: str, title: str,
                                            value: str, matched: list[str]) -> None:
    body = search(client, query=query, hitsPerPage=100, attributesToHighlight=["title"],
                  optionalWords=query.split()[1:])
    (hit,) = [h for h in body["hits"] if h["title"] == title]
    words = query.split()
    assert hit["_highlightResult"]["title"] == {
        "value": value, "matchedWords": matched, "fullyHighlighted": False,
        "matchLevel": "full" if len(matched) == len(words) else "partial"}
