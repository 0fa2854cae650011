"""Numeric field stats (min, max, avg, sum, count) on a real tantivy index of books.jsonl."""

from __future__ import annotations

import math
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import RangeFilter, SearchQuery, TermFilter
from searchport.domain.results import FieldStats

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


def expected_stats(rows: list[Row], field: str) -> FieldStats | None:
    values = [float(r[field]) for r in rows if isinstance(r.get(field), int | float)]
    if not values:
        return None
    return FieldStats(min=min(values), max=max(values), avg=sum(values) / len(values),
                      sum=sum(values), count=len(values))


def assert_stats(found: FieldStats | None, expected: FieldStats | None) -> None:
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (found.min, found.max, found.count) == (expected.min, expected.max, expected.count)
    assert found.sum is not None and expected.sum is not None
    assert math.isclose(found.sum, expected.sum, rel_tol=1e-9)
    assert found.avg is not None and expected.avg is not None
    assert math.isclose(found.avg, expected.avg, rel_tol=1e-9)


@pytest.mark.parametrize("field", ["year", "price", "pages"])
async def test_stats_over_the_whole_index(books_engine: TantivyEngine, rows: list[Row],
                                          field: str) -> None:
    result = await books_engine.search(SearchQuery(stats=(field,), limit=0))
    assert_stats(result.stats.get(field), expected_stats(rows, field))


async def test_stats_follow_the_text_and_every_filter(books_engine: TantivyEngine,
                                                      rows: list[Row]) -> None:
    filters = (TermFilter(field="genre", values=("fiction",)),
               RangeFilter(field="price", min=5, max=20))
    query = SearchQuery(filters=filters, stats=("price", "pages"), disjunctive_facets=False)
    result = await books_engine.search(query)
    kept = [r for r in rows if r.get("genre") == "fiction"
            and isinstance(r.get("price"), float) and 5 <= r["price"] <= 20]
    assert kept
    assert result.total == len(kept)
    for field in ("price", "pages"):
        assert_stats(result.stats.get(field), expected_stats(kept, field))


async def test_disjunctive_stats_ignore_their_own_filters(books_engine: TantivyEngine,
                                                          rows: list[Row]) -> None:
    filters = (TermFilter(field="genre", values=("fiction",)),
               RangeFilter(field="price", min=5, max=20))
    result = await books_engine.search(SearchQuery(filters=filters, stats=("price", "pages")))
    fiction = [r for r in rows if r.get("genre") == "fiction"]
    kept = [r for r in fiction if isinstance(r.get("price"), float) and 5 <= r["price"] <= 20]
    assert_stats(result.stats.get("price"), expected_stats(fiction, "price"))
    assert_stats(result.stats.get("pages"), expected_stats(kept, "pages"))


async def test_no_matching_value_means_no_stats(books_engine: TantivyEngine) -> None:
    query = SearchQuery(filters=(TermFilter(field="genre", values=("no such genre",)),),
                        stats=("price",))
    assert (await books_engine.search(query)).stats == {}


async def test_stats_of_a_text_field_are_refused(books_engine: TantivyEngine) -> None:
    with pytest.raises(InvalidRequest, match="stats"):
        await books_engine.search(SearchQuery(stats=("genre",)))
