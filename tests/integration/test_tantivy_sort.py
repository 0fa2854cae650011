"""Sort orders and pagination on a real tantivy index."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SearchQuery, SortClause, TermFilter

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


def sort_value(row: Row, field: str, order: str, ref: SimpleNamespace,
               scores: dict[str, float] | None = None) -> Any:
    """The value a row sorts by: an array by its smallest value, in both directions;
    ``None`` when missing."""
    if field == "_score":
        return (scores or {})[ref.doc_id(row)]
    found = ref.listed(row.get(field))
    if not found:
        return None
    if field == "published":
        found = [ref.parse_date(v) for v in found]
    return min(found)


def expected_order(rows: list[Row], keys: list[tuple[str, str]], ref: SimpleNamespace,
                   scores: dict[str, float] | None = None) -> list[list[Any]]:
    """The sort values of ``rows`` in the expected order, missing values last in either
    direction. Values, not ids: equal keys may come in any order."""
    ordered = list(rows)
    for field, order in reversed(keys):  # stable sorts, last key first
        present = [r for r in ordered if sort_value(r, field, order, ref, scores) is not None]
        missing = [r for r in ordered if sort_value(r, field, order, ref, scores) is None]
        present.sort(key=functools.partial(sort_value, field=field, order=order, ref=ref,
                                           scores=scores),
                     reverse=order == "desc")
        ordered = present + missing
    return [[sort_value(r, f, o, ref, scores) for f, o in keys] for r in ordered]


def key_values(hits: list[Any], rows: list[Row], keys: list[tuple[str, str]],
               ref: SimpleNamespace, scores: dict[str, float] | None = None) -> list[list[Any]]:
    by_id = {ref.doc_id(r): r for r in rows}
    return [[sort_value(by_id[h.id], f, o, ref, scores) for f, o in keys] for h in hits]


async def sorted_hits(engine: TantivyEngine, keys: list[tuple[str, str]], **query: Any
                      ) -> list[Any]:
    sort = tuple(SortClause(field=f, order=o) for f, o in keys)  # type: ignore[arg-type]
    result = await engine.search(SearchQuery(sort=sort, limit=100, **query))
    assert result.total == len(result.hits)
    return result.hits


@pytest.mark.parametrize("keys", [
    [("year", "asc")], [("year", "desc")], [("price", "asc")], [("price", "desc")],
    [("genre", "asc")], [("genre", "desc")], [("published", "asc")], [("published", "desc")],
    [("available", "desc")], [("pages", "asc")], [("tags", "asc")], [("tags", "desc")],
])
async def test_single_key_sorts_put_missing_values_last(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace,
        keys: list[tuple[str, str]]) -> None:
    hits = await sorted_hits(books_engine, keys)
    assert key_values(hits, rows, keys, ref) == expected_order(rows, keys, ref)
    assert all(hit.score is None for hit in hits)


@pytest.mark.parametrize("keys", [
    [("genre", "asc"), ("year", "desc")],
    [("available", "asc"), ("price", "desc"), ("pages", "asc")],
    [("year", "desc"), ("genre", "asc")],
    [("tags", "asc"), ("pages", "desc")],
    [("tags", "desc"), ("pages", "asc")],
    [("published", "desc"), ("pages", "asc")],
])
async def test_multi_key_sorts(books_engine: TantivyEngine, rows: list[Row],
                               ref: SimpleNamespace, keys: list[tuple[str, str]]) -> None:
    hits = await sorted_hits(books_engine, keys)
    assert key_values(hits, rows, keys, ref) == expected_order(rows, keys, ref)


async def test_sorts_with_the_score(books_engine: TantivyEngine, rows: list[Row],
                                    ref: SimpleNamespace) -> None:
    relevance = await books_engine.search(SearchQuery(text="night castle", limit=100))
    scores = {hit.id: hit.score or 0.0 for hit in relevance.hits}
    matched = [r for r in rows if ref.doc_id(r) in scores]
    for keys in ([("_score", "asc")], [("genre", "asc"), ("_score", "desc")],
                 [("_score", "desc"), ("pages", "asc")]):
        hits = await sorted_hits(books_engine, keys, text="night castle")
        assert key_values(hits, rows, keys, ref, scores) == expected_order(
            matched, keys, ref, scores)
        if keys[0][0] == "_score":
            assert [h.score for h in hits] == [scores[h.id] for h in hits]
    default = await sorted_hits(books_engine, [("_score", "desc")], text="night castle")
    assert [h.id for h in default] == [h.id for h in relevance.hits]


async def test_pagination_walks_the_same_order(books_engine: TantivyEngine,
                                               rows: list[Row]) -> None:
    for sort in ((), (SortClause(field="pages", order="asc"),),
                 (SortClause(field="genre", order="asc"), SortClause(field="pages", order="desc"))):
        everything = await books_engine.search(SearchQuery(sort=sort, text="the", limit=100))
        pages: list[str] = []
        for offset in range(0, everything.total + 7, 7):
            page = await books_engine.search(SearchQuery(sort=sort, text="the", offset=offset,
                                                         limit=7))
            assert page.total == everything.total
            pages.extend(hit.id for hit in page.hits)
        assert pages == [hit.id for hit in everything.hits]


async def test_limit_zero_counts_only(books_engine: TantivyEngine, rows: list[Row]) -> None:
    for sort in ((), (SortClause(field="year", order="asc"),),
                 (SortClause(field="year", order="asc"), SortClause(field="pages", order="asc"))):
        result = await books_engine.search(SearchQuery(limit=0, sort=sort))
        assert (result.total, result.hits) == (len(rows), [])


async def test_a_page_past_the_end_is_empty(books_engine: TantivyEngine, rows: list[Row]) -> None:
    result = await books_engine.search(SearchQuery(offset=len(rows) + 5, limit=10))
    assert (result.total, result.hits) == (len(rows), [])


async def test_sorted_search_with_filters(books_engine: TantivyEngine, rows: list[Row],
                                          ref: SimpleNamespace) -> None:
    keys = [("year", "asc")]
    hits = await sorted_hits(books_engine, keys,
                             filters=(TermFilter(field="language", values=("en", "fr")),))
    subset = [r for r in rows if r["language"] in ("en", "fr")]
    assert key_values(hits, rows, keys, ref) == expected_order(subset, keys, ref)


@pytest.mark.parametrize("field", ["title", "location", "nope", "place"])
async def test_sorting_on_text_geo_or_unknown_fields_is_invalid(
        books_engine: TantivyEngine, field: str) -> None:
    with pytest.raises(InvalidRequest, match=f'"{field}"'):
        await books_engine.search(SearchQuery(sort=(SortClause(field=field, order="asc"),)))
