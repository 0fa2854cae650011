"""A virtual replica's relevant sort over a scripted engine: the strictness cut, the
ranking, the pages and the counts, computed here independently from the scripted hits."""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.query import SearchQuery, SortClause
from searchport.domain.replicas import (
    CHUNK,
    RelevantSort,
    Replica,
    rank_value,
    relevant_search,
    replica_searcher,
)
from searchport.domain.results import EngineResult, FacetValue, Hit


class Scripted:
    """An engine answering from a fixed relevance order: (id, score, price)."""

    def __init__(self, rows: list[tuple[str, float | None, float | None]]) -> None:
        self.rows = rows
        self.asked: list[SearchQuery] = []

    async def search(self, query: SearchQuery) -> EngineResult:
        self.asked.append(query)
        rows = self.rows if query.ids is None else [r for r in self.rows if r[0] in query.ids]
        if query.sort:
            clause = query.sort[0]
            rows = sorted(rows, key=lambda r: (r[2] is None, (r[2] or 0) * (
                -1 if clause.order == "desc" else 1)))
        page = rows[query.offset:query.offset + query.limit]
        return EngineResult(
            hits=[Hit(id=i, index="x", score=s, source={} if p is None else {"price": p})
                  for i, s, p in page],
            total=len(rows), facets={"kind": [FacetValue(value="a", count=len(rows))]}
            if query.facets else {})


PRICE_DESC = (SortClause(field="price", order="desc"),)


def expected(rows: list[tuple[str, float | None, float | None]], strictness: int,
             max_hits: int) -> list[str]:
    pool = rows[:max_hits]
    scores = [s for _, s, _ in pool if s is not None]
    best = max(scores) if scores else None
    # at least strictness % of the best, compared without a division (the best itself is
    # always kept: best * 100 / 100 is not always best in floating point)
    kept = [r for r in pool if strictness == 0 or best is None or r[1] is None
            or r[1] * 100 >= best * strictness]
    with_price = sorted((r for r in kept if r[2] is not None), key=lambda r: -(r[2] or 0))
    # a stable sort: equal prices keep the relevance order
    return [r[0] for r in with_price] + [r[0] for r in kept if r[2] is None]


rows_strategy = st.lists(
    st.tuples(st.floats(1, 100, allow_nan=False) | st.none(),
              st.sampled_from([None, 5.0, 10.0, 20.0, 7.5])), max_size=40).map(
    lambda rs: [(f"r{i}", s, p) for i, (s, p) in enumerate(
        sorted(rs, key=lambda r: -(r[0] or 0)))])


@settings(max_examples=200, deadline=None)
@given(rows=rows_strategy, strictness=st.integers(0, 100), per_page=st.integers(1, 9),
       max_hits=st.integers(1, 50))
def test_pages_hold_the_kept_hits_in_ranking_order(
        rows: list[tuple[str, float | None, float | None]], strictness: int, per_page: int,
        max_hits: int) -> None:
    engine = Scripted(rows)
    order = RelevantSort(ranking=PRICE_DESC, strictness=100, max_hits=max_hits)
    want = expected(rows, strictness, max_hits)
    shown: list[str] = []
    for page in range(len(want) // per_page + 2):
        result = asyncio.run(relevant_search(engine.search, SearchQuery(
            text="x", offset=page * per_page, limit=per_page, facets=("kind",)), order,
            strictness))
        assert result.sorted_total == len(want)
        assert result.total == len(rows)
        assert result.facets == ({"kind": [FacetValue(value="a", count=len(rows))]}
                                 if rows else {"kind": [FacetValue(value="a", count=0)]})
        shown += [h.id for h in result.hits]
    assert shown == want


def test_the_pool_is_read_a_chunk_at_a_time() -> None:
    rnd = random.Random(7)
    rows: list[tuple[str, float | None, float | None]] = [
        (f"r{i}", float(1000 - i), float(rnd.randint(1, 50))) for i in range(CHUNK * 3 + 5)]
    engine = Scripted(rows)
    order = RelevantSort(ranking=PRICE_DESC, strictness=0, max_hits=CHUNK * 2 + 10)
    result = asyncio.run(relevant_search(engine.search, SearchQuery(text="x", limit=5,
                                                                    facets=("kind",)),
                                         order, 0))
    assert result.sorted_total == CHUNK * 2 + 10
    pool = [q for q in engine.asked if q.ids is None]
    assert [(q.offset, q.limit) for q in pool] == [(0, CHUNK), (CHUNK, CHUNK),
                                                    (2 * CHUNK, 10)]
    assert pool[0].facets == ("kind",) and all(not q.facets for q in pool[1:])
    assert all(q.fields == ("price",) and not q.highlight for q in pool)
    assert [h.id for h in result.hits] == expected(rows, 0, CHUNK * 2 + 10)[:5]


def test_an_engine_with_a_smaller_largest_page_is_read_in_its_pages() -> None:
    rows: list[tuple[str, float | None, float | None]] = [
        (f"r{i}", float(100 - i), float(i % 7)) for i in range(40)]
    engine = Scripted(rows)
    search = replica_searcher(engine.search, Replica(primary="p", relevant=RelevantSort(
        ranking=PRICE_DESC, strictness=0, max_hits=30)), max_page=8)
    result = asyncio.run(search(SearchQuery(text="x", limit=5)))
    pool = [q for q in engine.asked if q.ids is None]
    assert [(q.offset, q.limit) for q in pool] == [(0, 8), (8, 8), (16, 8), (24, 6)]
    assert [h.id for h in result.hits] == expected(rows, 0, 30)[:5]


def test_a_standard_replica_sorts_unless_the_search_sorts_itself() -> None:
    engine = Scripted([("a", 1.0, 5.0), ("b", 2.0, 20.0)])
    search = replica_searcher(engine.search, Replica(primary="p", sort=PRICE_DESC))
    assert [h.id for h in asyncio.run(search(SearchQuery())).hits] == ["b", "a"]
    asc = (SortClause(field="price", order="asc"),)
    assert asyncio.run(search(SearchQuery(sort=asc))).hits[0].id == "a"


def test_records_read_by_id_or_a_search_sorted_its_own_way_are_not_reordered() -> None:
    engine = Scripted([("a", 1.0, 5.0), ("b", 2.0, 20.0)])
    search = replica_searcher(engine.search, Replica(primary="p", relevant=RelevantSort(
        ranking=PRICE_DESC, strictness=100, max_hits=10)))
    result = asyncio.run(search(SearchQuery(ids=("a",))))
    assert [h.id for h in result.hits] == ["a"] and result.sorted_total is None
    asc = (SortClause(field="price", order="asc"),)
    result = asyncio.run(search(SearchQuery(text="x", sort=asc)))
    assert [h.id for h in result.hits] == ["a", "b"] and result.sorted_total is None
    assert len(engine.asked) == 2


@pytest.mark.parametrize(("value", "number"), [
    (3, 3.0), (2.5, 2.5), ("7", 7.0), ([None, 4], 4.0), (True, 1.0), (None, None),
    ("2020-01-01T00:00:00Z", 1577836800.0), ("2020-01-01", 1577836800.0), ("soon", None),
    (float("nan"), None), ({"a": 1}, None)])
def test_ranking_values_are_numbers_or_dates(value: object, number: float | None) -> None:
    assert rank_value(value) == number


def test_a_copy_of_the_query_keeps_what_the_page_needs() -> None:
    engine = Scripted([("a", 1.0, 5.0), ("b", 1.0, 20.0)])
    order = RelevantSort(ranking=PRICE_DESC, strictness=100, max_hits=10)
    query = SearchQuery(text="x", limit=1, highlight=True, fields=("title",))
    asyncio.run(relevant_search(engine.search, query, order, 100))
    page = engine.asked[-1]
    assert page.ids == ("b",)
    assert page == msgspec.structs.replace(query, ids=("b",), exact_total=False)
