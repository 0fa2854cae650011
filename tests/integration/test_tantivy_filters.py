"""Filters on a real tantivy index: every form, against a plain-Python reading of the rows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from searchport.adapters.tantivy import TantivyEngine
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    ExistsFilter,
    Filter,
    GeoRadiusFilter,
    GeoSort,
    NotFilter,
    RangeFilter,
    SearchQuery,
    TermFilter,
)

pytestmark = pytest.mark.anyio
Row = dict[str, Any]


async def matching_ids(engine: TantivyEngine, *filters: Filter) -> set[str]:
    result = await engine.search(SearchQuery(filters=filters, limit=100, fields=()))
    assert result.total == len(result.hits)
    return {hit.id for hit in result.hits}


def day_start(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


CASES: list[tuple[str, Filter, Callable[[Row, SimpleNamespace], bool]]] = [
    ("keyword equals", TermFilter(field="genre", values=("fiction",)),
     lambda r, ref: r.get("genre") == "fiction"),
    ("keyword is case-sensitive", TermFilter(field="genre", values=("art",)),
     lambda r, ref: r.get("genre") == "art"),
    ("keyword any of", TermFilter(field="genre", values=("fiction", "Art")),
     lambda r, ref: r.get("genre") in ("fiction", "Art")),
    ("keyword array element", TermFilter(field="tags", values=("gothic",)),
     lambda r, ref: "gothic" in r.get("tags", [])),
    ("keyword array any of", TermFilter(field="tags", values=("sea", "night")),
     lambda r, ref: bool({"sea", "night"} & set(r.get("tags", [])))),
    ("integer", TermFilter(field="year", values=(1999,)), lambda r, ref: r.get("year") == 1999),
    ("integer any of, as strings", TermFilter(field="year", values=("1850", 2004)),
     lambda r, ref: r.get("year") in (1850, 2004)),
    ("float", TermFilter(field="price", values=(10,)), lambda r, ref: r.get("price") == 10.0),
    ("boolean", TermFilter(field="available", values=(True,)),
     lambda r, ref: r.get("available") is True),
    ("boolean as text", TermFilter(field="available", values=("false",)),
     lambda r, ref: r.get("available") is False),
    ("date: a whole day", TermFilter(field="published", values=("2020-05-10",)),
     lambda r, ref: "published" in r and ref.parse_date(r["published"]).date().isoformat()
     == "2020-05-10"),
    ("text: words as a phrase", TermFilter(field="title", values=("the castle",)),
     lambda r, ref: " the castle " in f" {' '.join(ref.words(r['title']))} "),
    ("range integer", RangeFilter(field="year", min=1900, max=2000),
     lambda r, ref: "year" in r and 1900 <= r["year"] <= 2000),
    ("range integer, float bounds", RangeFilter(field="year", min=1899.5, max=1950.5),
     lambda r, ref: "year" in r and 1900 <= r["year"] <= 1950),
    ("range open above", RangeFilter(field="price", min=12.5),
     lambda r, ref: "price" in r and r["price"] >= 12.5),
    ("range open below", RangeFilter(field="price", max=9.99),
     lambda r, ref: "price" in r and r["price"] <= 9.99),
    ("range empty", RangeFilter(field="year", min=2000, max=1990), lambda r, ref: False),
    ("range integer, strict bounds",
     RangeFilter(field="year", min=1850, max=2004, min_exclusive=True, max_exclusive=True),
     lambda r, ref: "year" in r and 1850 < r["year"] < 2004),
    ("range integer, strict float bounds",
     RangeFilter(field="year", min=1899.5, max=1950.5, min_exclusive=True, max_exclusive=True),
     lambda r, ref: "year" in r and 1900 <= r["year"] <= 1950),
    ("range integer, strict lower only", RangeFilter(field="year", min=1999, min_exclusive=True),
     lambda r, ref: "year" in r and r["year"] > 1999),
    ("range float, strict lower", RangeFilter(field="price", min=10, min_exclusive=True),
     lambda r, ref: "price" in r and r["price"] > 10),
    ("range float, strict upper", RangeFilter(field="price", max=10, max_exclusive=True),
     lambda r, ref: "price" in r and r["price"] < 10),
    ("range float, strict upper, inclusive lower",
     RangeFilter(field="price", min=10, max=12.5, max_exclusive=True),
     lambda r, ref: "price" in r and 10 <= r["price"] < 12.5),
    ("range one point, strict: empty",
     RangeFilter(field="price", min=10, max=10, min_exclusive=True), lambda r, ref: False),
    ("range integer one point, strict: empty",
     RangeFilter(field="year", min=1999, max=1999, max_exclusive=True), lambda r, ref: False),
    ("range no bounds: has a value", RangeFilter(field="price"), lambda r, ref: "price" in r),
    ("range of dates, whole days", RangeFilter(field="published", min="2005-01-01",
                                                max="2015-12-31"),
     lambda r, ref: "published" in r and day_start("2005-01-01")
     <= ref.parse_date(r["published"]) < day_start("2016-01-01")),
    ("range of dates, year and instant",
     RangeFilter(field="published", min="2010", max="2020-06-01T00:00:00+02:00"),
     lambda r, ref: "published" in r and day_start("2010-01-01")
     <= ref.parse_date(r["published"]) <= datetime(2020, 5, 31, 22, tzinfo=UTC)),
    ("not keyword, missing included", NotFilter(field="genre", values=("fiction", "travel")),
     lambda r, ref: r.get("genre") not in ("fiction", "travel")),
    ("not boolean", NotFilter(field="available", values=(True,)),
     lambda r, ref: r.get("available") is not True),
    ("not array", NotFilter(field="tags", values=("city",)),
     lambda r, ref: "city" not in r.get("tags", [])),
    ("exists", ExistsFilter(field="genre", exists=True), lambda r, ref: "genre" in r),
    ("missing", ExistsFilter(field="year", exists=False), lambda r, ref: "year" not in r),
    ("exists: an empty array is missing", ExistsFilter(field="tags", exists=True),
     lambda r, ref: bool(r.get("tags"))),
    ("exists geo", ExistsFilter(field="location", exists=True), lambda r, ref: "location" in r),
    ("exists text", ExistsFilter(field="author", exists=False), lambda r, ref: "author" not in r),
]


@pytest.mark.parametrize(("name", "flt", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_each_filter_form(books_engine: TantivyEngine, rows: list[Row],
                                ref: SimpleNamespace, name: str, flt: Filter,
                                expected: Callable[[Row, SimpleNamespace], bool]) -> None:
    want = {ref.doc_id(r) for r in rows if expected(r, ref)}
    assert await matching_ids(books_engine, flt) == want
    assert name  # the id names the case


async def test_filters_and_together(books_engine: TantivyEngine, rows: list[Row],
                                    ref: SimpleNamespace) -> None:
    filters = (RangeFilter(field="year", min=1900), NotFilter(field="genre", values=("Art",)),
               ExistsFilter(field="price", exists=True))
    want = {ref.doc_id(r) for r in rows
            if r.get("year", 0) >= 1900 and r.get("genre") != "Art" and "price" in r}
    assert await matching_ids(books_engine, *filters) == want


async def test_filters_do_not_change_relevance(books_engine: TantivyEngine) -> None:
    plain = await books_engine.search(SearchQuery(text="castle", limit=100))
    filtered = await books_engine.search(SearchQuery(
        text="castle", limit=100, filters=(ExistsFilter(field="title", exists=True),)))
    assert [(h.id, h.score) for h in filtered.hits] == [(h.id, h.score) for h in plain.hits]


BAD: list[tuple[Filter, str]] = [
    (TermFilter(field="nope", values=("x",)), '"nope"'),
    (TermFilter(field="year", values=("abc",)), '"year"'),
    (TermFilter(field="year", values=(19.5,)), '"year"'),
    (TermFilter(field="price", values=(True,)), '"price"'),
    (TermFilter(field="available", values=("maybe",)), '"available"'),
    (TermFilter(field="published", values=("yesterday",)), '"published"'),
    (TermFilter(field="published", values=("1200-01-01",)), '"published"'),
    (RangeFilter(field="genre", min="a", max="b"), '"genre"'),
    (RangeFilter(field="title", min=1), '"title"'),
    (RangeFilter(field="year", min="soon"), '"year"'),
    (RangeFilter(field="published", min=2020), '"published"'),
    (TermFilter(field="location", values=("1,2",)), '"location"'),
    (NotFilter(field="pages", values=("many",)), '"pages"'),
    (ExistsFilter(field="place", exists=True), '"place"'),  # stored but not configured
]


@pytest.mark.parametrize(("flt", "named"), BAD, ids=[repr(b[0]) for b in BAD])
async def test_bad_filters_are_invalid_requests_naming_the_field(
        books_engine: TantivyEngine, flt: Filter, named: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        await books_engine.search(SearchQuery(filters=(flt,)))
    assert named in caught.value.message


async def test_filter_values_cannot_inject_query_syntax(books_engine: TantivyEngine) -> None:
    for value in ('fiction" OR genre:"Art', "*", "genre:*", "(", "fiction OR Art"):
        assert await matching_ids(books_engine, TermFilter(field="genre", values=(value,))) \
            == set()


async def test_a_geo_radius_is_refused_naming_it(books_engine: TantivyEngine) -> None:
    """Whatever asks: the adapter never reads a radius filter as another filter."""
    flt = GeoRadiusFilter(field="location", lat=48.85, lon=2.35, radius_m=5000)
    with pytest.raises(UnsupportedFeature) as caught:
        await books_engine.search(SearchQuery(filters=(flt,)))
    assert (caught.value.feature, caught.value.engine) == ("aroundRadius", "tantivy")


async def test_a_geo_sort_is_refused_naming_it(books_engine: TantivyEngine) -> None:
    """Whatever asks: the adapter never answers a distance sort in relevance order."""
    with pytest.raises(UnsupportedFeature) as caught:
        await books_engine.search(SearchQuery(geo_sort=GeoSort(field="location", lat=48.85,
                                                               lon=2.35)))
    assert (caught.value.feature, caught.value.engine) == ("aroundLatLng", "tantivy")
