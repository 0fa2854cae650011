"""Documents, field selection, mapping, raw queries and the port contract, on real tantivy."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import EngineUnavailable, InvalidQuery, InvalidRequest
from searchport.domain.query import FacetValuesQuery, FieldWeight, SearchQuery
from searchport.domain.results import Capabilities
from searchport.ports.engine import SearchEnginePort

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


def test_the_engine_satisfies_the_port(tmp_path: Path, ref: SimpleNamespace) -> None:
    engine: SearchEnginePort = TantivyEngine("books", ref.config(tmp_path / "i"), tmp_path)
    assert engine.name == "tantivy"
    assert engine.capabilities == Capabilities(
        suggest=True, boosts=True, histogram=True, geo_grid=True, geo_area=True, nested=False,
        multi_index=False, raw_query=True, exact_facet_counts=True)
    assert not (tmp_path / "i").exists()  # constructing does no I/O


async def test_hits_return_the_original_rows(books_engine: TantivyEngine,
                                             rows: list[Row], ref: SimpleNamespace) -> None:
    result = await books_engine.search(SearchQuery(limit=100))
    assert {hit.id: hit.source for hit in result.hits} == {ref.doc_id(r): r for r in rows}
    assert all(hit.index == "books" for hit in result.hits)
    integer_id = next(h for h in result.hits if h.id == "46")
    assert integer_id.source["id"] == 46  # types kept, unconfigured fields too
    assert "place" in integer_id.source or "location" not in integer_id.source


async def test_fields_select_stored_fields(books_engine: TantivyEngine,
                                           rows: list[Row], ref: SimpleNamespace) -> None:
    fields = ("title", "notes", "year", "objectID", "_score")  # notes: stored, not typed
    result = await books_engine.search(SearchQuery(limit=100, fields=fields))
    by_id = {ref.doc_id(r): r for r in rows}
    for hit in result.hits:
        assert hit.source == {k: v for k, v in by_id[hit.id].items() if k in fields}
    nothing = await books_engine.search(SearchQuery(limit=3, fields=()))
    assert all(hit.source == {} and hit.id for hit in nothing.hits)


@pytest.mark.parametrize("query", [
    SearchQuery(fields=("title", "nope")),
    SearchQuery(text="castle", fields=("nope",)),
    SearchQuery(highlight=True, highlight_fields=("nope",)),
    SearchQuery(text="castle", highlight=True, highlight_fields=("nope",)),
    SearchQuery(search_fields=(FieldWeight(field="nope", weight=2.0),)),
])
async def test_a_field_no_row_has_is_a_400_naming_it(books_engine: TantivyEngine,
                                                     rows: list[Row], query: SearchQuery) -> None:
    assert not any("nope" in row for row in rows)
    with pytest.raises(InvalidRequest, match='"nope"'):
        await books_engine.search(query)


async def test_only_text_fields_are_highlighted_whatever_the_words(
        books_engine: TantivyEngine) -> None:
    for text in ("", "castle"):
        with pytest.raises(InvalidRequest, match='Cannot highlight "year"'):
            await books_engine.search(SearchQuery(text=text, highlight=True,
                                                  highlight_fields=("year",)))


async def test_get_document(books_engine: TantivyEngine, rows: list[Row],
                            ref: SimpleNamespace) -> None:
    for row in rows[:10]:
        hit = await books_engine.get_document(ref.doc_id(row))
        assert hit is not None
        assert (hit.id, hit.index, hit.score, hit.source, hit.highlights) == (
            ref.doc_id(row), "books", None, row, {})
    assert await books_engine.get_document("no-such-id") is None
    assert await books_engine.get_document('b01" OR id:*') is None


async def test_mapping(books_engine: TantivyEngine, rows: list[Row]) -> None:
    mapping = await books_engine.get_mapping()
    assert mapping["engine"] == "tantivy"
    assert mapping["index"] == "books"
    assert mapping["numDocs"] == len(rows)
    assert mapping["idField"] == "id"
    assert {name: f["type"] for name, f in mapping["fields"].items()} == {
        "title": "text", "author": "text", "genre": "keyword", "tags": "keyword",
        "language": "keyword", "year": "integer", "pages": "integer", "price": "float",
        "available": "boolean", "published": "date", "location": "geo_point"}
    assert mapping["fields"]["genre"]["fast"] is True
    json.dumps(mapping)  # plain JSON


async def test_raw_query(books_engine: TantivyEngine, rows: list[Row],
                         ref: SimpleNamespace) -> None:
    body = {"query": "title:castle AND year:[1900 TO *]", "limit": 100}
    answer = json.loads(await books_engine.raw_query(body))
    want = {ref.doc_id(r) for r in rows
            if "castle" in ref.words(r["title"]) and r.get("year", 0) >= 1900}
    assert want
    assert answer["count"] == len(want)
    assert {hit["id"] for hit in answer["hits"]} == want
    by_id = {ref.doc_id(r): r for r in rows}
    assert all(hit["doc"] == by_id[hit["id"]] and hit["score"] > 0 for hit in answer["hits"])


async def test_raw_query_defaults_and_clamps(books_engine: TantivyEngine,
                                             rows: list[Row]) -> None:
    answer = json.loads(await books_engine.raw_query({"query": "night"}))
    assert len(answer["hits"]) == min(10, answer["count"])
    answer = json.loads(await books_engine.raw_query({"query": "*", "limit": 0}))
    assert (answer["count"], len(answer["hits"])) == (len(rows), 1)
    answer = json.loads(await books_engine.raw_query({"query": "*", "limit": 1000,
                                                      "offset": 40}))
    assert len(answer["hits"]) == len(rows) - 40


@pytest.mark.parametrize("query", ["title:(", "year:abc", "AND AND"])
async def test_raw_query_rejections_carry_tantivys_reason(books_engine: TantivyEngine,
                                                          query: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        await books_engine.raw_query({"query": query})
    assert caught.value.message.startswith("tantivy could not parse the query: ")


def present(row: Row, field: str) -> bool:
    value = row.get(field)
    return value not in (None, "", [])


@pytest.mark.parametrize("field", ["title", "author", "genre", "tags", "year", "price",
                                   "available", "published", "location"])
@pytest.mark.parametrize("form", ["{f}:*", "{f}:[* TO *]"])
async def test_raw_exists_works_on_every_field_type(books_engine: TantivyEngine,
                                                    rows: list[Row], field: str,
                                                    form: str) -> None:
    want = sum(present(r, field) for r in rows)
    assert 0 < want < len(rows) or field in ("title", "author", "location")
    answer = json.loads(await books_engine.raw_query({"query": form.format(f=field)}))
    assert answer["count"] == want
    missing = json.loads(await books_engine.raw_query({"query": f"* -{form.format(f=field)}"}))
    assert missing["count"] == len(rows) - want


async def test_raw_exists_combines_with_other_clauses(books_engine: TantivyEngine,
                                                      rows: list[Row],
                                                      ref: SimpleNamespace) -> None:
    answer = json.loads(await books_engine.raw_query(
        {"query": "+title:* +year:[1900 TO *] -price:*", "limit": 100}))
    want = {ref.doc_id(r) for r in rows
            if present(r, "title") and r.get("year", 0) >= 1900 and not present(r, "price")}
    assert {hit["id"] for hit in answer["hits"]} == want and answer["count"] == len(want)
    phrase = json.loads(await books_engine.raw_query({"query": 'title:"title:*"'}))
    assert phrase["count"] == 0  # inside quotes it is a phrase, not an exists


@pytest.mark.parametrize(("query", "says"), [
    ("nofield:x", "Unknown field nofield in the raw query; the fields it can name: title, "),
    ("__id:b01", "Unknown field __id"),
    ("title:castle AND writer:rice", "writer is an alias: raw queries use the index's own "
                                     "field names, here author"),
    ("id:b01", "id is the id field, not a searchable field: fetch one document with GET "),
    ("location:[0 TO 1]", "location is a geo_point field: the raw query can only test that "
                          "it exists (location:*)"),
    ("title:castle~1", "castle~1: the tantivy query language has no fuzzy terms"),
    ("castle~", "castle~: the tantivy query language has no fuzzy terms"),
    ("-title:castle", "tantivy could not parse the query: it only excludes (NOT or -): add "
                      "what to keep, e.g. * -name:paris"),
    ("title:/cast.*/", "tantivy could not parse the query: regular expressions are not "
                       "allowed"),
])
async def test_raw_query_refusals_say_what_works(books_engine: TantivyEngine, query: str,
                                                 says: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        await books_engine.raw_query({"query": query})
    assert caught.value.message.startswith(says), caught.value.message


async def test_raw_phrase_slop_and_boosts_run(books_engine: TantivyEngine) -> None:
    slop = json.loads(await books_engine.raw_query({"query": 'title:"castle air"~2'}))
    exact = json.loads(await books_engine.raw_query({"query": 'title:"castle air"'}))
    assert slop["count"] >= exact["count"]
    boosted = json.loads(await books_engine.raw_query(
        {"query": "title:castle^3 OR title:night", "limit": 100}))
    plain = json.loads(await books_engine.raw_query(
        {"query": "title:castle OR title:night", "limit": 100}))
    assert boosted["count"] == plain["count"] > 0
    sets = json.loads(await books_engine.raw_query({"query": "genre: IN [fiction history]"}))
    assert sets["count"] > 0


@pytest.mark.parametrize("body", [{}, {"query": 5}, {"query": "x", "limit": "5"},
                                  {"query": "x", "offset": 1.5}, {"query": "x", "size": 5}])
async def test_raw_query_bad_bodies(books_engine: TantivyEngine, body: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequest):
        await books_engine.raw_query(body)


async def test_ping(books_engine: TantivyEngine) -> None:
    await books_engine.ping()


async def test_an_engine_that_is_not_started_is_unavailable(tmp_path: Path,
                                                            ref: SimpleNamespace) -> None:
    engine = TantivyEngine("books", ref.config(tmp_path / "i"), tmp_path)
    with pytest.raises(EngineUnavailable):
        await engine.ping()
    with pytest.raises(EngineUnavailable):
        await engine.search(SearchQuery())
    with pytest.raises(EngineUnavailable):
        await engine.facet_values(FacetValuesQuery(field="genre"))


async def test_close_then_unavailable(tmp_path: Path, ref: SimpleNamespace) -> None:
    engine = TantivyEngine("books", ref.config(tmp_path / "i"), tmp_path)
    await engine.start()
    await engine.ping()
    await engine.close()
    with pytest.raises(EngineUnavailable):
        await engine.ping()


@pytest.mark.parametrize(("query", "says"), [
    ("title:cast*", "title:cast*: tantivy's query language has no prefix on a single word "
                    "(cast* finds only the word cast itself); use a range of words, as in "
                    "title:[cast TO casu}"),
    ("cast*", "cast*: tantivy's query language has no prefix on a single word"),
    ("year:[1900 TO *] AND (title:Cast* OR genre:x)", "title:Cast*: "),
    ("-title:cast* *", "title:cast*: "),
    ("title:castle^2 OR nigh*^3", "nigh*: "),
])
async def test_a_one_word_prefix_is_refused_with_the_range_that_works(
        books_engine: TantivyEngine, query: str, says: str) -> None:
    """tantivy 0.27 parses ``cast*`` as the term ``cast``: it would silently find no Castle."""
    with pytest.raises(InvalidQuery) as caught:
        await books_engine.raw_query({"query": query})
    assert caught.value.message.startswith(says), caught.value.message


async def test_the_advised_range_finds_the_words_of_the_prefix(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace) -> None:
    answer = json.loads(await books_engine.raw_query(
        {"query": "title:[cast TO casu}", "limit": 100}))
    want = {ref.doc_id(r) for r in rows
            if any(w.startswith("cast") for w in ref.words(str(r.get("title", ""))))}
    assert want and {hit["id"] for hit in answer["hits"]} == want


@pytest.mark.parametrize("query", ["*", "title:*", "title:[* TO *]", "year:[1900 TO *]",
                                   'title:"castle in"*', 'title:"cast*"', "* -title:castle"])
async def test_stars_that_are_not_a_word_prefix_still_run(books_engine: TantivyEngine,
                                                          query: str) -> None:
    answer = json.loads(await books_engine.raw_query({"query": query}))
    assert isinstance(answer["count"], int)
