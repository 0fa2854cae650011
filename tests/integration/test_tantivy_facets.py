"""Facet counts (disjunctive), facet-value search and histograms on a real tantivy index."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import (
    FacetValuesQuery,
    HistogramSpec,
    NotFilter,
    RangeFilter,
    SearchQuery,
    TermFilter,
)
from searchport.domain.results import Bucket, FacetValue

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


def as_facet_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def expected_facet(rows: Iterable[Row], field: str, limit: int = 100,
                   natural: Callable[[Any], Any] = lambda v: v) -> list[FacetValue]:
    counts: Counter[Any] = Counter()
    for row in rows:
        value = row.get(field)
        for item in set(value) if isinstance(value, list) else ([] if value is None else [value]):
            counts[item] += 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], natural(kv[0])))
    return [FacetValue(value=as_facet_text(v), count=c) for v, c in ordered[:limit]]


@pytest.mark.parametrize("field", ["genre", "tags", "language", "year", "price", "available"])
async def test_facet_counts_and_order(books_engine: TantivyEngine, rows: list[Row],
                                      field: str) -> None:
    result = await books_engine.search(SearchQuery(facets=(field,), limit=0))
    assert result.facets[field] == expected_facet(rows, field)


async def test_date_facets_are_iso_strings(books_engine: TantivyEngine, rows: list[Row],
                                           ref: SimpleNamespace) -> None:
    result = await books_engine.search(SearchQuery(facets=("published",), limit=0))
    instants = Counter(ref.parse_date(r["published"]).astimezone(UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ") for r in rows if "published" in r)
    want = sorted(instants.items(), key=lambda kv: (-kv[1], kv[0]))
    assert [(f.value, f.count) for f in result.facets["published"]] == want


async def test_max_facet_values_cuts_after_ordering_ties(books_engine: TantivyEngine,
                                                         rows: list[Row]) -> None:
    for limit in (1, 2, 3, 5):
        result = await books_engine.search(SearchQuery(facets=("year", "tags"), limit=0,
                                                       max_facet_values=limit))
        assert result.facets["year"] == expected_facet(rows, "year", limit)
        assert result.facets["tags"] == expected_facet(rows, "tags", limit)


async def test_facets_follow_text_and_other_filters_but_not_their_own(
        books_engine: TantivyEngine, rows: list[Row], ref: SimpleNamespace) -> None:
    filters = (TermFilter(field="genre", values=("fiction",)),
               RangeFilter(field="year", min=1900))
    result = await books_engine.search(SearchQuery(
        text="the", filters=filters, facets=("genre", "language", "year"), limit=100))
    texty = [r for r in rows if ref.text_matches(r, "the")]
    in_years = [r for r in texty if r.get("year", 0) >= 1900]
    fiction = [r for r in texty if r.get("genre") == "fiction"]
    both = [r for r in in_years if r.get("genre") == "fiction"]
    assert result.total == len(both)
    assert result.facets["genre"] == expected_facet(in_years, "genre")  # own filter dropped
    assert result.facets["year"] == expected_facet(fiction, "year")
    assert result.facets["language"] == expected_facet(both, "language")


async def test_not_filters_are_a_facets_own_filters_too(books_engine: TantivyEngine,
                                                        rows: list[Row]) -> None:
    result = await books_engine.search(SearchQuery(
        filters=(NotFilter(field="language", values=("en",)),), facets=("language", "genre"),
        limit=0))
    assert result.facets["language"] == expected_facet(rows, "language")
    assert result.facets["genre"] == expected_facet(
        [r for r in rows if r["language"] != "en"], "genre")


async def test_facets_of_nothing_are_empty(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(text="xyzzy", facets=("genre",)))
    assert result.total == 0
    assert result.facets == {"genre": []}


@pytest.mark.parametrize("field", ["title", "location", "nope", "place"])
async def test_facets_on_text_geo_or_unknown_fields_are_invalid(
        books_engine: TantivyEngine, field: str) -> None:
    with pytest.raises(InvalidRequest, match=f'"{field}"'):
        await books_engine.search(SearchQuery(facets=(field,)))


async def test_facet_values_contain_the_text(books_engine: TantivyEngine,
                                             rows: list[Row]) -> None:
    values = await books_engine.facet_values(FacetValuesQuery(field="tags", text="RA", limit=10))
    everything = expected_facet(rows, "tags")
    assert values == [v for v in everything if "ra" in v.value.lower()]
    assert values  # "travel", "translated"

    available = [r for r in rows if r.get("available") is True]
    values = await books_engine.facet_values(FacetValuesQuery(
        field="genre", text="", limit=2, filters=(TermFilter(field="available", values=(True,)),)))
    assert values == expected_facet(available, "genre", 2)


async def test_facet_values_of_numbers(books_engine: TantivyEngine, rows: list[Row]) -> None:
    values = await books_engine.facet_values(FacetValuesQuery(field="year", text="19", limit=50))
    assert values == [v for v in expected_facet(rows, "year") if "19" in v.value]


# --- histograms -------------------------------------------------------------------------

def expected_histogram(values: list[float], interval: float) -> list[Bucket]:
    if not values:
        return []
    counts = Counter(math.floor(v / interval) for v in values)
    low, high = min(counts), max(counts)
    return [Bucket(key=k * interval, count=counts.get(k, 0)) for k in range(low, high + 1)]


@pytest.mark.parametrize(("field", "interval"), [("year", 50), ("year", 100), ("price", 5),
                                                  ("price", 2.5), ("pages", 100)])
async def test_histograms_fill_empty_buckets(books_engine: TantivyEngine, rows: list[Row],
                                             field: str, interval: float) -> None:
    result = await books_engine.search(SearchQuery(histograms=(HistogramSpec(
        field=field, interval=interval),), limit=0))
    want = expected_histogram([r[field] for r in rows if field in r], interval)
    assert result.histograms[field] == want
    if field == "year" and interval == 50:
        assert any(b.count == 0 for b in want)  # the filling is exercised


async def test_histograms_follow_every_filter(books_engine: TantivyEngine,
                                              rows: list[Row]) -> None:
    result = await books_engine.search(SearchQuery(
        filters=(RangeFilter(field="year", min=1950),), limit=0,
        histograms=(HistogramSpec(field="year", interval=10),)))
    want = expected_histogram([r["year"] for r in rows if r.get("year", 0) >= 1950], 10)
    assert result.histograms["year"] == want


async def test_histogram_of_no_matches_is_empty(books_engine: TantivyEngine) -> None:
    result = await books_engine.search(SearchQuery(
        text="xyzzy", histograms=(HistogramSpec(field="year", interval=10),)))
    assert result.histograms == {"year": []}


@pytest.mark.parametrize("field", ["genre", "published", "title", "nope"])
async def test_histogram_of_a_non_number_is_invalid(books_engine: TantivyEngine,
                                                    field: str) -> None:
    with pytest.raises(InvalidRequest, match=f'"{field}"'):
        await books_engine.search(SearchQuery(histograms=(HistogramSpec(
            field=field, interval=1),)))


async def test_histogram_with_too_many_buckets_is_invalid(books_engine: TantivyEngine) -> None:
    with pytest.raises(InvalidRequest, match="buckets"):
        await books_engine.search(SearchQuery(histograms=(HistogramSpec(
            field="year", interval=0.001),)))
