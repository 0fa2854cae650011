"""Properties of secured keys on the real tantivy index and the real Typesense server: for a
generated forced filter (Algolia syntax, minted into a key by the stock client) and a
generated request (Algolia ``filters``, ``facetFilters``, ``numericFilters``; searchport's
``filters``), every hit satisfies the forced filter and the counts are those of an evaluator
written here over the rows: the request narrows, never widens. A request an engine refuses
(a 400 naming why) is a failure that stays inside too; nothing else may happen.

The filter trees are rendered to text and evaluated in Python from the same tree, so the
expectation never goes through searchport's parser.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from algoliasearch.search.client import SearchClientSync
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.access import Access, filters_by_handle
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import Config, IndexConfig
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.search import Search
from searchport.entrypoints.container import create_container
from searchport.entrypoints.http.app import create_app
from tests.integration.conftest import BOOK_FIELDS, BOOKS, books_config, load_rows
from tests.integration.typesense_server import index_settings
from tests.typesense_server import TypesenseServer

Row = dict[str, Any]
Tree = tuple[Any, ...]
MASTER = "master-Vb7"
ALGOLIA = SearchClientSync("app", "unused")
ROWS = load_rows()
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def values(row: Row, field: str) -> list[Any]:
    value = row.get(field)
    return [] if value is None else value if isinstance(value, list) else [value]


def seen(field: str) -> list[Any]:
    return sorted({v for r in ROWS for v in values(r, field)}, key=str)


FACETS = {"genre": seen("genre"), "language": seen("language"), "tags": seen("tags")}
NUMBERS = {"year": seen("year"), "price": seen("price"), "pages": seen("pages")}

# ----------------------------------------------------------------- Algolia filter trees

facet_atom = st.sampled_from(sorted(FACETS)).flatmap(
    lambda f: st.sampled_from([*FACETS[f], "zzz"]).map(lambda v: ("facet", f, v)))
bool_atom = st.sampled_from(["true", "false"]).map(lambda v: ("facet", "available", v))
number = st.sampled_from(sorted(NUMBERS)).flatmap(
    lambda f: st.tuples(st.just(f), st.one_of(st.sampled_from(NUMBERS[f]),
                                              st.integers(-5, 2100))))
compare_atom = st.tuples(number, st.sampled_from(["<", "<=", "=", "!=", ">=", ">"])).map(
    lambda t: ("num", t[0][0], t[1], t[0][1]))
range_atom = st.tuples(number, st.integers(0, 200)).map(
    lambda t: ("range", t[0][0], t[0][1], t[0][1] + t[1]))
atom = st.one_of(facet_atom, bool_atom, compare_atom, range_atom)
literal = st.one_of(atom, atom.map(lambda a: ("not", a)))
trees = st.recursive(literal, lambda kids: st.tuples(st.sampled_from(["and", "or"]), kids, kids),
                     max_leaves=5)


def render(tree: Tree) -> str:
    match tree:
        case ("facet", field, value):
            return f'{field}:"{value}"'
        case ("num", field, op, value):
            return f"{field} {op} {value}"
        case ("range", field, low, high):
            return f"{field}:{low} TO {high}"
        case ("not", inner):
            return f"NOT {render(inner)}"
        case (op, left, right):
            return f"({render(left)} {op.upper()} {render(right)})"
    raise AssertionError(tree)


OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}


def holds(tree: Tree, row: Row) -> bool:
    match tree:
        case ("facet", "available", value):
            return any(str(v).lower() == value for v in values(row, "available"))
        case ("facet", field, value):
            return value in values(row, field)
        case ("num", field, "!=", value):  # Algolia's != is NOT =
            return not any(v == value for v in values(row, field))
        case ("num", field, op, value):
            return any(OPS[op](v, value) for v in values(row, field))
        case ("range", field, low, high):
            return any(low <= v <= high for v in values(row, field))
        case ("not", inner):
            return not holds(inner, row)
        case ("and", left, right):
            return holds(left, row) and holds(right, row)
        case ("or", left, right):
            return holds(left, row) or holds(right, row)
    raise AssertionError(tree)


# facetFilters: groups of "field:value" / "field:-value" (OR inside a group, AND across)
facet_item = st.tuples(facet_atom, st.booleans())
facet_filters = st.lists(st.lists(facet_item, min_size=1, max_size=3), max_size=2)
numeric_filters = st.lists(st.lists(compare_atom.filter(lambda a: a[2] != "!="), min_size=1,
                                    max_size=2), max_size=2)


def facet_text(item: tuple[Tree, bool]) -> str:
    (_, field, value), negated = item
    return f"{field}:{'-' if negated else ''}{value}"


def facet_holds(item: tuple[Tree, bool], row: Row) -> bool:
    return holds(item[0], row) != item[1]


# ----------------------------------------------------------------- native filters

native_value = st.sampled_from(sorted(FACETS)).flatmap(lambda f: st.tuples(st.just(f), st.one_of(
    st.sampled_from(FACETS[f]).map(lambda v: ("term", [v])),
    st.lists(st.sampled_from(FACETS[f]), min_size=1, max_size=3).map(lambda v: ("term", v)),
    st.sampled_from(FACETS[f]).map(lambda v: ("not", [v])))))
native_range = st.sampled_from(sorted(NUMBERS)).flatmap(lambda f: st.tuples(
    st.just(f), st.tuples(st.sampled_from(NUMBERS[f]), st.integers(0, 300)).map(
        lambda t: ("range", [t[0], t[0] + t[1]]))))
native_filters = st.lists(st.one_of(native_value, native_range), max_size=3).map(dict)


def native_json(filters: dict[str, tuple[str, list[Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, (kind, items) in filters.items():
        if kind == "term":
            out[field] = items if len(items) > 1 else items[0]
        elif kind == "not":
            out[field] = {"not": items}
        else:
            out[field] = {"min": items[0], "max": items[1]}
    return out


def native_holds(filters: dict[str, tuple[str, list[Any]]], row: Row,
                 skip: str | None = None) -> bool:
    for field, (kind, items) in filters.items():
        if field == skip:
            continue
        got = values(row, field)
        if kind == "term" and not any(v in items for v in got):
            return False
        if kind == "not" and any(v in items for v in got):
            return False
        if kind == "range" and not any(items[0] <= v <= items[1] for v in got):
            return False
    return True


# ----------------------------------------------------------------- the engines

@pytest.fixture(scope="module", params=["tantivy", "typesense"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[TestClient[Any]]:
    base = tmp_path_factory.mktemp("scoped-properties")
    if request.param == "tantivy":
        index = {"engine": "tantivy", "path": str(base / "books"), "source": str(BOOKS),
                 "fields": BOOK_FIELDS}
    else:
        server: TypesenseServer = request.getfixturevalue("server")
        index = index_settings(server)
    config = msgspec.convert({"apiKey": MASTER, "indexes": {"books": index}}, Config)
    with TestClient(create_app(create_container(config, Path(base)))) as client:
        yield client


def books_engine_config() -> IndexConfig:
    return books_config(Path("unused"))  # the entry's fields; the engine is built already


def ok_or_refused(response: Any) -> dict[str, Any] | None:
    """The body of a 200, or None for a 400 that says why (an engine refusing a form)."""
    if response.status_code == 400:
        assert response.json()["error"]
        event("refused by the engine")
        return None
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def key_for(forced: Tree) -> str:
    return ALGOLIA.generate_secured_api_key(MASTER, {"filters": render(forced)})


@PROPERTY
@given(forced=trees, asked=st.one_of(st.none(), trees), facets=facet_filters,
       numeric=numeric_filters)
def test_algolia_requests_stay_inside_the_forced_filter(
        client: TestClient[Any], forced: Tree, asked: Tree | None,
        facets: list[list[tuple[Tree, bool]]], numeric: list[list[Tree]]) -> None:
    params: dict[str, Any] = {"hitsPerPage": 100, "facets": ["genre"]}
    if asked is not None:
        params["filters"] = render(asked)
    if facets:
        params["facetFilters"] = [[facet_text(i) for i in group] for group in facets]
    if numeric:
        params["numericFilters"] = [[f"{f} {op} {v}" for _, f, op, v in group]
                                    for group in numeric]

    def wanted(row: Row) -> bool:
        return ((asked is None or holds(asked, row))
                and all(any(facet_holds(i, row) for i in group) for group in facets)
                and all(any(holds(a, row) for a in group) for group in numeric))

    headers = {"X-Algolia-API-Key": key_for(forced), "X-Algolia-Application-Id": "app"}
    body = ok_or_refused(client.post("/1/indexes/books/query", json=params, headers=headers))
    if body is None:
        return
    inside = [r for r in ROWS if holds(forced, r)]
    expected = [r for r in inside if wanted(r)]
    assert {h["objectID"] for h in body["hits"]} == {str(r["id"]) for r in expected}
    assert body["nbHits"] == len(expected)
    genres = Counter(g for r in expected for g in values(r, "genre"))
    assert body.get("facets", {}).get("genre", {}) == dict(genres)
    # the facet-value search of the same request
    found = ok_or_refused(client.post("/1/indexes/books/facets/genre/query", headers=headers,
                                      json={**params, "facetQuery": "", "maxFacetHits": 100}))
    if found is not None:
        assert {h["value"]: h["count"] for h in found["facetHits"]} == dict(genres)


@PROPERTY
@given(forced=trees, filters=native_filters, row=st.sampled_from(ROWS))
def test_native_requests_stay_inside_the_forced_filter(
        client: TestClient[Any], forced: Tree, filters: dict[str, Any], row: Row) -> None:
    headers = {"Authorization": f"Bearer {key_for(forced)}"}
    response = client.get("/books/search", headers=headers, params={
        "perPage": 100, "facets": "genre,language",
        "filters": json.dumps(native_json(filters))})
    body = ok_or_refused(response)
    if body is not None:
        inside = [r for r in ROWS if holds(forced, r)]
        expected = [r for r in inside if native_holds(filters, r)]
        assert {h["objectID"] for h in body["hits"]} == {str(r["id"]) for r in expected}
        assert body["totalHits"] == len(expected)
        for facet in ("genre", "language"):  # disjunctive: the facet's own filter dropped,
            own = [r for r in inside if native_holds(filters, r, skip=facet)]  # never forced
            counted = Counter(v for r in own for v in values(r, facet))
            assert {v["value"]: v["count"] for v in body["facets"][facet]} == dict(counted)
    # a document by id: one outside the forced filter is not found
    document = client.get(f"/books/documents/{row['id']}", headers=headers)
    if not holds(forced, row):
        assert document.status_code == 404
    else:
        assert document.status_code in (200, 404)
        event(f"document inside: {document.status_code}")
    typed = ok_or_refused(client.get("/books/autocomplete", headers=headers,
                                     params={"q": "the", "perPage": 20, "facets": "genre"}))
    if typed is not None:
        assert {h["objectID"] for h in typed["hits"]} <= {str(r["id"]) for r in ROWS
                                                         if holds(forced, r)}
        allowed = {g for r in ROWS if holds(forced, r) for g in values(r, "genre")}
        assert {v["value"] for v in typed.get("facets", {}).get("genre", [])} <= allowed


@PROPERTY
@given(forced=native_filters.filter(bool), filters=native_filters)
def test_a_named_keys_forced_filters_hold_in_the_use_case(
        books_engine: TantivyEngine, forced: dict[str, Any], filters: dict[str, Any]) -> None:
    """A named key's ``filters`` (the native grammar) through the ``Search`` use case on the
    real tantivy index: hits, totals and disjunctive facet counts of forced AND asked."""
    access = Access(forced=filters_by_handle({"books": native_json(forced)}), filtered=True)
    search = Search(catalog=Catalog({"books": IndexEntry("books", books_engine_config(),
                                                         books_engine)}))
    answer = asyncio.run(search(SearchRequest(
        handle="books", per_page=100, facets="genre,language",
        filters=json.dumps(native_json(filters))), access))
    inside = [r for r in ROWS if native_holds(forced, r)]
    expected = [r for r in inside if native_holds(filters, r)]
    assert {h["objectID"] for h in answer.hits} == {str(r["id"]) for r in expected}
    assert answer.total_hits == len(expected)
    for facet in ("genre", "language"):
        own = [r for r in inside if native_holds(filters, r, skip=facet)]
        counted = Counter(v for r in own for v in values(r, facet))
        assert {v.value: v.count for v in answer.facets[facet]} == dict(counted)
