"""The reads behind ``/2/searches``, ``/2/hits`` and ``/2/filters...``, and the ``tags``
segments of every read, on a real SQLite file and a real PostgreSQL server: each answer
is held against the same figures computed in plain Python from the rows written
(``tests.fakes.FakeAnalyticsStore``, which never runs SQL), over many parameters, and a
few against figures counted by hand."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import msgspec
import psycopg
import pytest

from searchport.adapters.analytics import rollups, totals
from searchport.adapters.analytics.dialect import POSTGRES, SQLITE
from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.period import MAX_OFFSET
from searchport.domain.analytics.records import Refinement, SearchRecord
from searchport.domain.analytics.reports import DayClicks, DayPosition
from searchport.domain.analytics.segments import read_segment
from searchport.ports.analytics import AnalyticsStore
from tests.fakes import FakeAnalyticsStore
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.anyio

DAY0 = date(2026, 3, 1)
QUERIES = ("paris", "lyon", "", "new york", "zurich", "oslo")
TAGS = ((), ("mobile",), ("desktop", "lang:en"), ("mobile", "lang:en"),
        ("device:mobile phone",))
SEGMENTS = ("", "mobile", "mobile OR desktop", "lang:en AND mobile",
            "(mobile OR desktop) AND lang:en", "device:mobile phone", "nobody")


def at(day: date, second: int = 0) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + second


def searches() -> list[SearchRecord]:
    """Searches over six days on two handles: tags, refinements (some with no results),
    hits, and a query id on about half."""
    made = []
    for n in range(300):
        day = DAY0 + timedelta(days=n % 6)
        refinements: tuple[Refinement, ...] = ()
        if n % 3:
            refinements = (Refinement("genre", ":", f"g{n % 4}"),)
        if n % 5 == 0:
            refinements += (Refinement("price", ">=", str(n % 3 * 10)),)
        if n % 7 == 0:
            refinements += (Refinement("genre", "!=", "g9"),)
        nb_hits = 0 if n % 4 == 0 else (n * 7) % 23
        made.append(SearchRecord(
            at=at(day, 60 + n), handle="books" if n % 9 else "films",
            query=QUERIES[(n * n) % len(QUERIES)], nb_hits=nb_hits, page=0,
            refinements=refinements, tags=TAGS[n % len(TAGS)], user_token=f"u{n % 13}",
            latency_ms=1.0, query_id=f"{n:032x}" if n % 2 else None,
            hits=tuple(f"o{(n + k * k) % 17}" for k in range(min(nb_hits, 4))),
        ))
    return made


def events(rows: list[SearchRecord]) -> list[InsightsEvent]:
    """Clicks (one or two positions), conversions by queryID (some add-to-carts, some
    purchases with a value), purchases naming searches per object, on tracked searches."""
    made = []
    tracked = [s for s in rows if s.query_id and s.hits]
    for i, s in enumerate(tracked):
        base = {"handle": s.handle, "user_token": s.user_token, "name": "e"}
        if i % 4 != 3:
            picked = s.hits[: 1 + i % 2]
            made.append(InsightsEvent(
                at=s.at + 5, type="click", subtype=None, object_ids=picked,
                positions=tuple(1 + (i + k) % 25 for k in range(len(picked))),
                query_id=s.query_id, **base))  # type: ignore[arg-type]
        if i % 3 == 0:
            made.append(InsightsEvent(
                at=s.at + 9, type="conversion", subtype=("addToCart", "purchase", None)[i % 9 // 3],
                object_ids=s.hits[:1], query_id=s.query_id,
                revenue=10.5 + i if i % 2 else None, currency=("EUR", "USD")[i % 2],
                **base))  # type: ignore[arg-type]
        if i % 5 == 0 and i + 1 < len(tracked):
            other = tracked[i + 1]
            made.append(InsightsEvent(
                at=s.at + 20, type="conversion", subtype="purchase",
                object_ids=(s.hits[0], other.hits[0]),
                object_query_ids=(s.query_id or "", other.query_id or ""),
                revenue=99.0, currency="EUR", object_revenues=(40.0, 59.0),
                **base))  # type: ignore[arg-type]
    return made


@pytest.fixture(params=["sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path
                 ) -> AsyncIterator[tuple[AnalyticsStore, FakeAnalyticsStore]]:
    if request.param == "sqlite":
        store: AnalyticsStore = SqliteAnalyticsStore(tmp_path / "analytics.sqlite3")
    else:
        server: PostgresServer = request.getfixturevalue("postgres")
        store = PostgresAnalyticsStore(server.create_database())
    await store.open()
    reference = FakeAnalyticsStore()
    rows = searches()
    for target in (store, reference):
        await target.write_searches(rows[:150])
        await target.write_searches(rows[150:])
        await target.write_events(events(rows))
    try:
        yield store, reference
    finally:
        await store.close()


def ordered(found: Sequence[msgspec.Struct]) -> list[tuple[object, ...]]:
    """Rows in one order, revenues to the cent's millionth (sums of floats)."""
    return sorted(tuple(round(v, 6) if isinstance(v, float) else v
                        for v in msgspec.structs.astuple(one)) for one in found)


PERIODS = ((DAY0, DAY0 + timedelta(days=5)), (DAY0 + timedelta(days=1), DAY0 + timedelta(days=3)))


async def test_every_read_of_a_segment_is_the_reference_s(
        stores: tuple[AnalyticsStore, FakeAnalyticsStore]) -> None:
    store, reference = stores
    for handle in ("books", "films"):
        for start, end in PERIODS:
            for text in SEGMENTS:
                segment = read_segment(text)
                span = (handle, start, end)
                for name in ("searches_by_day", "users", "clicks_by_day",
                             "conversions_by_day", "click_positions"):
                    assert (await getattr(store, name)(*span, segment=segment)
                            == await getattr(reference, name)(*span, segment=segment)), name
                for flags in ({"no_results": True}, {"no_clicks": True}, {}):
                    assert (await store.top_searches(*span, limit=4, segment=segment,
                                                     **flags)
                            == await reference.top_searches(*span, limit=4, segment=segment,
                                                            **flags))


def made(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> AnalyticsStore:
    if backend == "sqlite":
        return SqliteAnalyticsStore(tmp_path / "analytics.sqlite3")
    server: PostgresServer = request.getfixturevalue("postgres")
    return PostgresAnalyticsStore(server.create_database())


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_events_kept_before_their_searches_count_as_after(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Clicks and conversions naming a queryID, or (conversions) naming searches per
    object, that reach the store before the searches they name (another instance's, or
    this one's next batch) are applied when those searches are written: the positions of
    the clicks too, under the analyticsTags of their searches."""
    store = made(backend, request, tmp_path)
    await store.open()
    reference = FakeAnalyticsStore()
    rows = searches()
    later = {s.query_id for s in rows[150:] if s.query_id}
    every = events(rows)
    try:
        for target in (store, reference):
            await target.write_searches(rows[:150])
            await target.write_events(every)  # those of rows[150:] before them
            await target.write_searches(rows[150:])
        assert sum(e.query_id in later for e in every) > 20
        assert sum(not e.query_id and bool(set(e.object_query_ids) & later)
                   for e in every) > 3
        await assert_same_events(store, reference)
    finally:
        await store.close()


async def assert_same_events(store: AnalyticsStore, reference: FakeAnalyticsStore) -> None:
    """What the events did, in every read that counts it, is the reference's."""
    for handle in ("books", "films"):
        for start, end in PERIODS:
            for text in ("", "mobile", "lang:en AND mobile", "desktop"):
                span = (handle, start, end)
                segment = read_segment(text)
                for name in ("searches_by_day", "clicks_by_day", "conversions_by_day",
                             "click_positions"):
                    assert (await getattr(store, name)(*span, segment=segment)
                            == await getattr(reference, name)(*span, segment=segment)
                            ), (name, text)
                for flags in ({"no_clicks": True}, {}):
                    assert (await store.top_searches(*span, limit=4, segment=segment,
                                                     **flags)
                            == await reference.top_searches(*span, limit=4,
                                                            segment=segment, **flags))
                asked = {"limit": 10, "segment": segment, "with_events": True}
                assert (await store.search_stats(*span, **asked)
                        == await reference.search_stats(*span, **asked))
                hits = await store.hit_stats(*span, **asked)
                assert hits == await reference.hit_stats(*span, **asked)
                assert (ordered(await store.hit_revenue(
                            *span, [h.hit for h in hits], segment=segment))
                        == ordered(await reference.hit_revenue(
                            *span, [h.hit for h in hits], segment=segment)))


LONG_AGO = date(2000, 1, 1)  # a purge before it forgets nothing, and adds up the blocks


def blocks_of(store: AnalyticsStore) -> int:
    """How many blocks of days the store has added up."""
    statement = "SELECT count(*) FROM analytics_span_blocks"
    if isinstance(store, SqliteAnalyticsStore):
        with sqlite3.connect(store.path) as db:
            return int(db.execute(statement).fetchone()[0])
    assert isinstance(store, PostgresAnalyticsStore)
    with psycopg.connect(store.url) as db:
        row = db.execute(statement).fetchone()
        assert row is not None
        return int(row[0])


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_early_click_and_an_early_conversion_by_object_count_by_hand(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A click (queryID, position 3) and a conversion naming its search only through
    ``objectData[].queryID``, both kept before their searches: once the searches are
    written, the click's position counts in its search's segment and the conversion
    counts."""
    store = made(backend, request, tmp_path)
    await store.open()
    tagged, plain = "a" * 32, "b" * 32
    base = {"handle": "books", "page": 0, "refinements": (), "user_token": "u",
            "latency_ms": 1.0, "nb_hits": 5, "query": "paris", "hits": ("o1", "o2")}
    rows = [SearchRecord(at=at(DAY0, 10), tags=("mobile",), query_id=tagged, **base),
            SearchRecord(at=at(DAY0, 11), tags=(), query_id=plain, **base)]
    early = [
        InsightsEvent(at=at(DAY0, 20), handle="books", type="click", subtype=None, name="c",
                      user_token="u", object_ids=("o2",), positions=(3,), query_id=tagged),
        InsightsEvent(at=at(DAY0, 30), handle="books", type="conversion", subtype=None,
                      name="v", user_token="u", object_ids=("o1", "o2"),
                      object_query_ids=(tagged, plain)),
    ]
    mobile = read_segment("mobile")
    span = ("books", DAY0, DAY0)
    try:
        await store.write_events(early)
        await store.write_searches(rows)
        assert await store.click_positions(*span, segment=mobile) == [
            DayPosition(DAY0, 3, 1)]
        assert await store.click_positions(*span) == [DayPosition(DAY0, 3, 1)]
        assert await store.click_positions(*span, segment=read_segment("desktop")) == []
        # two tracked searches, each converted once by the one conversion
        assert await store.conversions_by_day(*span) == [DayClicks(DAY0, 2, 2, 2)]
        assert await store.conversions_by_day(*span, segment=mobile) == [
            DayClicks(DAY0, 1, 1, 1)]
        assert await store.clicks_by_day(*span, segment=mobile) == [DayClicks(DAY0, 1, 1, 1)]
        [stats] = await store.search_stats(*span, limit=10, segment=mobile,
                                           with_events=True)
        assert (stats.events.clicked_positions, stats.events.positions,
                stats.events.converted) == (1, 3, 1)
        found = {h.hit: h.events.converted
                 for h in await store.hit_stats(*span, limit=10, with_events=True)}
        assert found == {"o1": 1, "o2": 1}  # o1 after the tagged search, o2 the other
        more = SearchRecord(at=at(DAY0, 40), tags=(), query_id="c" * 32, **base)
        await store.write_searches([more])  # applied once: not again with a later batch
        assert await store.conversions_by_day(*span) == [DayClicks(DAY0, 3, 2, 2)]
        assert await store.click_positions(*span, segment=mobile) == [
            DayPosition(DAY0, 3, 1)]
    finally:
        await store.close()


async def test_top_searches_in_every_order(
        stores: tuple[AnalyticsStore, FakeAnalyticsStore]) -> None:
    store, reference = stores
    start, end = PERIODS[0]
    seen_events = False
    for segment in (read_segment(""), read_segment("mobile OR lang:en")):
        for order_by in ("searchCount", "clickThroughRate", "conversionRate",
                         "averageClickPosition"):
            for descending in (False, True):
                for limit, offset in ((10, 0), (2, 1)):
                    asked = {"limit": limit, "offset": offset, "segment": segment,
                             "order_by": order_by, "descending": descending,
                             "with_events": True}
                    found = await store.search_stats("books", start, end, **asked)
                    assert found == await reference.search_stats("books", start, end,
                                                                 **asked)
                    seen_events |= any(s.events.clicks and s.events.purchases for s in found)
        plain = await store.search_stats("books", start, end, limit=10, segment=segment)
        assert plain == await reference.search_stats("books", start, end, limit=10,
                                                     segment=segment)
        queries = [s.query for s in plain]
        assert queries, "the rows should leave queries to rank"
        for name in ("query_revenue",):
            got = await getattr(store, name)("books", start, end, queries, segment=segment)
            expected = await getattr(reference, name)("books", start, end, queries,
                                                      segment=segment)
            assert ordered(got) == ordered(expected), name
    assert seen_events, "the rows should give clicks and purchases"


async def test_top_hits_with_and_without_events(
        stores: tuple[AnalyticsStore, FakeAnalyticsStore]) -> None:
    store, reference = stores
    start, end = PERIODS[0]
    for segment in (read_segment(""), read_segment("desktop")):
        for search in (None, "paris", "nothing like it"):
            for with_events in (False, True):
                asked = {"limit": 8, "offset": 1, "segment": segment, "search": search,
                         "with_events": with_events}
                found = await store.hit_stats("books", start, end, **asked)
                assert found == await reference.hit_stats("books", start, end, **asked)
                assert bool(found) == (search != "nothing like it")
            hits = [h.hit for h in found]
            got = await store.hit_revenue("books", start, end, hits, segment=segment,
                                          search=search)
            expected = await reference.hit_revenue("books", start, end, hits,
                                                   segment=segment, search=search)
            assert ordered(got) == ordered(expected)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_one_querys_hits_of_days_not_added_up_yet_end_where_their_days_end(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The days not added up yet are read from the log: searches on either side of
    midnight, one a fraction of a microsecond before it (its day is the next one, as
    ``utc_day`` rounds), count in the day each belongs to."""
    store = made(backend, request, tmp_path)
    await store.open()
    reference = FakeAnalyticsStore()
    midnight, next_midnight = at(DAY0 + timedelta(days=1)), at(DAY0 + timedelta(days=2))
    instants = {"before": midnight - 0.01, "rounded": midnight - 3e-7, "at": midnight,
                "last": next_midnight - 0.01, "next": next_midnight, "other": midnight + 60}
    rows = [SearchRecord(at=instant, handle="books", query="paris" if name != "other"
                         else "lyon", nb_hits=3, page=0, refinements=(), tags=(),
                         user_token="u", latency_ms=1.0, query_id=None,
                         hits=(f"o-{name}", "o-shared"))
            for name, instant in instants.items()]
    days = {r.hits[0]: r.day for r in rows}
    assert days["o-rounded"] == DAY0 + timedelta(days=1) == days["o-last"]
    assert days["o-before"] == DAY0 and days["o-next"] == DAY0 + timedelta(days=2)
    try:
        for target in (store, reference):
            await target.write_searches(rows)
        for start, end in ((DAY0 + timedelta(days=1),) * 2, (DAY0, DAY0 + timedelta(days=1)),
                           (DAY0 + timedelta(days=2),) * 2):
            for with_events in (False, True):
                found = await store.hit_stats("books", start, end, limit=10, search="paris",
                                              with_events=with_events)
                assert found == await reference.hit_stats(
                    "books", start, end, limit=10, search="paris", with_events=with_events)
                expected = {hit for hit, day in days.items()
                            if start <= day <= end and hit != "o-other"}
                assert {h.hit for h in found} == expected | {"o-shared"}
                assert {h.hit: h.count for h in found}["o-shared"] == len(expected)
    finally:
        await store.close()


async def test_filters_and_the_filters_of_searches_without_results(
        stores: tuple[AnalyticsStore, FakeAnalyticsStore]) -> None:
    store, reference = stores
    start, end = PERIODS[0]
    for segment in (read_segment(""), read_segment("mobile")):
        for search in (None, "lyon"):
            for attribute in (None, "genre", "price", "nothing"):
                asked = {"limit": 5, "offset": 0, "segment": segment, "search": search,
                         "attribute": attribute}
                assert (await store.filter_counts("books", start, end, **asked)
                        == await reference.filter_counts("books", start, end, **asked))
            asked = {"limit": 6, "offset": 1, "segment": segment, "search": search}
            assert (await store.no_result_filters("books", start, end, **asked)
                    == await reference.no_result_filters("books", start, end, **asked))


async def test_a_few_figures_counted_by_hand(tmp_path: Path) -> None:
    store = SqliteAnalyticsStore(tmp_path / "hand.sqlite3")
    await store.open()
    genre = Refinement("genre", ":", "sf")
    cheap = Refinement("price", "<", "10")
    made = [
        SearchRecord(at=at(DAY0, n), handle="books", query=q, nb_hits=hits, page=0,
                     refinements=refine, tags=tags, user_token="u", latency_ms=1.0,
                     query_id=qid, hits=shown)
        for n, (q, hits, refine, tags, qid, shown) in enumerate([
            ("dune", 3, (genre,), ("mobile",), "a" * 32, ("d1", "d2", "d3")),
            ("dune", 1, (), ("desktop",), "b" * 32, ("d1",)),
            ("dune", 0, (genre, cheap), ("mobile",), None, ()),
            ("emma", 0, (genre, cheap), ("mobile", "lang:en"), None, ()),
            ("emma", 2, (cheap,), (), "c" * 32, ("e1", "d1")),
        ])]
    await store.write_searches(made)
    await store.write_events([
        InsightsEvent(at=at(DAY0, 50), handle="books", type="click", subtype=None, name="c",
                      user_token="u", object_ids=("d2",), positions=(2,), query_id="a" * 32),
        InsightsEvent(at=at(DAY0, 60), handle="books", type="conversion",
                      subtype="purchase", name="p", user_token="u", object_ids=("d2",),
                      query_id="a" * 32, revenue=12.5, currency="EUR"),
    ])
    try:
        top = await store.search_stats("books", DAY0, DAY0, limit=10, with_events=True,
                                       descending=True)
        assert [(s.query, s.count, s.nb_hits) for s in top] == [("dune", 3, 1), ("emma", 2, 1)]
        dune = top[0].events
        assert (dune.tracked, dune.clicked, dune.clicks, dune.purchased, dune.positions,
                dune.clicked_positions) == (2, 1, 1, 1, 2, 1)
        assert [(r.key, r.currency, r.revenue) for r in await store.query_revenue(
            "books", DAY0, DAY0, ["dune", "emma"])] == [("dune", "EUR", 12.5)]
        hits = await store.hit_stats("books", DAY0, DAY0, limit=2, with_events=True)
        assert [(h.hit, h.count, h.events.tracked, h.events.clicked) for h in hits] == [
            ("d1", 3, 3, 0), ("d2", 1, 1, 1)]
        attributes = await store.filter_counts("books", DAY0, DAY0, limit=10)
        assert [(f.attribute, f.count) for f in attributes] == [("genre", 3), ("price", 3)]
        values = await store.filter_counts("books", DAY0, DAY0, limit=10, attribute="price")
        assert [(f.operator, f.value, f.count) for f in values] == [("<", "10", 3)]
        none = await store.no_result_filters("books", DAY0, DAY0, limit=10)
        assert [(f.refinements, f.count) for f in none] == [
            ((("genre", ":", "sf"), ("price", "<", "10")), 2)]
        mobile = read_segment("mobile AND lang:en OR desktop")
        counted = await store.searches_by_day("books", DAY0, DAY0, segment=mobile)
        assert [(d.count, d.no_results) for d in counted] == [(2, 1)]
    finally:
        await store.close()


async def test_an_offset_past_every_row_reads_an_empty_page(
        stores: tuple[AnalyticsStore, FakeAnalyticsStore]) -> None:
    """The largest offset a request may carry (``period.MAX_OFFSET``, what any larger one
    reads as) goes through either SQL dialect and leaves no row."""
    store, _ = stores
    start, end = PERIODS[0]
    paged = {"limit": 10, "offset": MAX_OFFSET, "segment": read_segment("")}
    assert await store.top_searches("books", start, end, **paged) == []
    assert await store.search_stats("books", start, end, **paged) == []
    assert await store.hit_stats("books", start, end, **paged) == []
    assert await store.filter_counts("books", start, end, **paged) == []
    assert await store.no_result_filters("books", start, end, **paged) == []
    unpaged = {**paged, "offset": 0}
    assert await store.top_searches("books", start, end, **unpaged), "the rows hold searches"


def months() -> list[SearchRecord]:
    """``searches()`` spread over 45 days instead of 6 (the period reads whole blocks of 4
    and 16 days where they fit)."""
    return [msgspec.structs.replace(s, at=s.at + 86400 * (n % 45 - n % 6),
                                    query_id=f"{n:032x}" if s.query_id else None)
            for n, s in enumerate(searches() * 4)][:1000]


def spans_periods() -> list[tuple[date, date]]:
    """Periods of 1 to 46 days, starting on days of every remainder of 16 (the first the
    day before the searches: 2026-02-28, the first day of a block of 16)."""
    found = []
    for first in range(-1, 18):
        for length in (1, 3, 5, 16, 17, 27):
            start = DAY0 + timedelta(days=first)
            found.append((start, start + timedelta(days=length - 1)))
    found.append((DAY0 - timedelta(days=1), DAY0 + timedelta(days=44)))
    return found


async def assert_same_rankings(store: AnalyticsStore, reference: FakeAnalyticsStore,
                               periods: Sequence[tuple[date, date]]) -> int:
    """The rankings that add up the queries' and objects' rows over each period are the
    reference's, in every order; how many queries they ranked."""
    ranked = 0
    for start, end in periods:
        for text in ("", "mobile OR lang:en"):
            span = ("books", start, end)
            segment = read_segment(text)
            for flags in ({"no_results": True}, {"no_clicks": True}, {}):
                found = await store.top_searches(*span, limit=8, segment=segment, **flags)
                assert found == await reference.top_searches(*span, limit=8,
                                                             segment=segment, **flags)
                ranked += len(found)
            for order_by in ("searchCount", "clickThroughRate", "conversionRate",
                             "averageClickPosition"):
                for descending in (False, True):
                    asked = {"limit": 5, "offset": 1, "segment": segment,
                             "order_by": order_by, "descending": descending,
                             "with_events": True}
                    assert (await store.search_stats(*span, **asked)
                            == await reference.search_stats(*span, **asked)), asked
            for with_events, offset, search in ((True, 0, None), (True, 2, None),
                                                (False, 1, None), (True, 0, "paris"),
                                                (False, 2, "paris"), (True, 1, "lyon")):
                asked = {"limit": 6, "offset": offset, "segment": segment,
                         "with_events": with_events, "search": search}
                assert (await store.hit_stats(*span, **asked)
                        == await reference.hit_stats(*span, **asked)), asked
        assert (await store.popular_queries("books", start, end, min_count=2, limit=5)
                == await reference.popular_queries("books", start, end, min_count=2,
                                                   limit=5))
    return ranked


async def written_months(store: AnalyticsStore) -> FakeAnalyticsStore:
    reference = FakeAnalyticsStore()
    rows = sorted(months(), key=lambda s: s.at)
    for target in (store, reference):
        for part in (rows[:400], rows[400:]):
            await target.write_searches(part)
            await target.write_events(events(part))
    return reference


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_rankings_over_blocks_of_days_are_the_reference_s(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Periods that hold blocks of 4 and 16 days (read from their own rows) and days at
    their edges rank the queries and objects as the rows of each day would."""
    store = made(backend, request, tmp_path)
    await store.open()
    try:
        reference = await written_months(store)
        assert len({s.at // 86400 for s in reference.searches}) == 45
        await assert_same_rankings(store, reference, spans_periods()[::5])  # days only
        assert blocks_of(store) == 0
        assert await store.purge(LONG_AGO) == 0  # the blocks added up
        # days 2026-03-01 to 04-14: the blocks of 4 days from 02-28 to 04-13, of 16 from
        # 02-28 to 04-01 (every one ended)
        assert blocks_of(store) == 12 + 3
        assert await assert_same_rankings(store, reference, spans_periods()) > 500
        # late searches and events on days of blocks added up: read from their days
        late = [msgspec.structs.replace(s, at=s.at + 3600, query_id=f"{9_000 + n:032x}")
                for n, s in enumerate(months()[20:60]) if s.query_id]
        for target in (store, reference):
            await target.write_searches(late)
            await target.write_events(events(late))
        assert blocks_of(store) < 15
        await assert_same_rankings(store, reference, spans_periods()[::4])
        assert await store.purge(LONG_AGO) == 0
        assert blocks_of(store) == 15
        await assert_same_rankings(store, reference, spans_periods()[::3])
        # a purge within a block: what is left of its days, no more
        after = DAY0
        for before in (DAY0 + timedelta(days=9), DAY0 + timedelta(days=15)):
            gone = sum(after <= datetime.fromtimestamp(e.at, UTC).date() < before
                       for e in reference.events)  # the reference keeps its events
            assert await store.purge(before) == await reference.purge(before) + gone > 0
            await assert_same_rankings(store, reference, spans_periods()[3::7])
            after = before
    finally:
        await store.close()


def run_sql(store: AnalyticsStore, statement: str, params: Sequence[object] = ()
            ) -> list[tuple[object, ...]]:
    """``statement`` (``?`` placeholders) run on the store's database, its rows."""
    if isinstance(store, SqliteAnalyticsStore):
        with sqlite3.connect(store.path) as db:
            return list(db.execute(statement, [p.isoformat() if isinstance(p, date) else p
                                               for p in params]).fetchall())
    assert isinstance(store, PostgresAnalyticsStore)
    with psycopg.connect(store.url) as db:
        cursor = db.execute(POSTGRES.sql(statement), params)
        return list(cursor.fetchall()) if cursor.description else []


CHAINED = date(2026, 4, 1)  # the first day of a chain of running totals (totals.CHAIN)


async def written_chains(store: AnalyticsStore) -> FakeAnalyticsStore:
    """``months()`` moved to begin on ``CHAINED``: 45 days, a whole chain of 32 days of
    running totals and 13 of the next."""
    shift = 86400 * (CHAINED - DAY0).days
    rows = sorted((msgspec.structs.replace(s, at=s.at + shift) for s in months()),
                  key=lambda s: s.at)
    reference = FakeAnalyticsStore()
    for target in (store, reference):
        for part in (rows[:400], rows[400:]):
            await target.write_searches(part)
            await target.write_events(events(part))
    return reference


def chains_periods() -> list[tuple[date, date]]:
    """Periods of 2 to 46 days over both chains, starting on their first days and
    within them."""
    found = []
    for first in (-1, 0, 1, 6, 13, 30, 31, 32, 33, 40):
        for length in (2, 5, 9, 20, 33, 46):
            start = CHAINED + timedelta(days=first)
            found.append((start, start + timedelta(days=length - 1)))
    return found


async def tampered(store: AnalyticsStore, table: str, figure: str, where: str,
                   params: Sequence[object], read: Callable[[], Awaitable[object]]) -> bool:
    """Whether ``read`` answers otherwise once 1000 is added to ``figure`` of the rows of
    ``table`` that ``where`` says (then taken away again): that the read uses them."""
    assert run_sql(store, f"SELECT count(*) FROM {table} WHERE {where}", params)[0][0]
    change = f"UPDATE {table} SET {figure} = {figure} + ? WHERE {where}"
    before = await read()
    run_sql(store, change, [1000, *params])
    changed = await read() != before
    run_sql(store, change, [-1000, *params])
    assert await read() == before
    return changed


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_running_totals_and_objects_per_query_rank_as_the_reference(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Added up by the daily build, the queries' running totals (two rows per query and
    chain instead of one per day) and each query's objects per day answer the rankings as
    the searches would, in every order, segment and period; late writes forget what they
    change until the next build; a purge forgets the chains that hold its days."""
    store = made(backend, request, tmp_path)
    await store.open()
    try:
        reference = await written_chains(store)
        assert await store.purge(LONG_AGO) == 0
        # every day ended: a chain of 32 days and 13 of the next (queries' and objects'),
        # every day's objects per query
        assert run_sql(store, "SELECT count(*) FROM analytics_totals_built") == [(90,)]
        assert run_sql(store, "SELECT count(*) FROM analytics_query_hits_built") == [(45,)]
        assert await assert_same_rankings(store, reference, chains_periods()) > 1000
        # the reads use them: a figure added to the totals at the end of a chain, or to
        # one query's objects of a day, shows in the answers (taken away again after)
        end = CHAINED + timedelta(days=31)

        async def ranked() -> object:
            return await store.top_searches("books", CHAINED + timedelta(days=3), end,
                                            limit=8)

        async def shown() -> object:
            return await store.hit_stats("books", CHAINED + timedelta(days=3), end, limit=8)

        async def objects() -> object:
            return await store.hit_stats("books", CHAINED, end, limit=8, search="paris",
                                         with_events=True)

        assert await tampered(store, "analytics_query_totals", "searches",
                              "day = ? AND query = ?", [end, "paris"], ranked)
        hit = (await store.hit_stats("books", CHAINED, end, limit=1))[0].hit
        assert await tampered(store, "analytics_object_totals", "count",
                              "day = ? AND hit = ?", [end, hit], shown)
        for figure in ("count", "clicks"):
            assert await tampered(store, "analytics_query_hit_days", figure,
                                  "handle = ? AND query = ?", ["books", "paris"], objects)
        # late searches and events on days added up: forgotten until the next build
        late = [msgspec.structs.replace(s, at=s.at + 86400 * (CHAINED - DAY0).days + 3600,
                                        query_id=f"{9_000 + n:032x}")
                for n, s in enumerate(months()[20:60]) if s.query_id]
        for target in (store, reference):
            await target.write_searches(late)
            await target.write_events(events(late))
        assert run_sql(store, "SELECT count(*) FROM analytics_totals_built")[0][0] < 90
        assert run_sql(store, "SELECT count(*) FROM analytics_query_hits_built")[0][0] < 45
        await assert_same_rankings(store, reference, chains_periods()[::3])
        assert await store.purge(LONG_AGO) == 0
        assert run_sql(store, "SELECT count(*) FROM analytics_totals_built") == [(90,)]
        await assert_same_rankings(store, reference, chains_periods()[1::3])
        # a purge within the first chain: its totals forgotten, the days after it kept
        before = CHAINED + timedelta(days=5)
        gone = sum(CHAINED <= datetime.fromtimestamp(e.at, UTC).date() < before
                   for e in reference.events)
        assert await store.purge(before) == await reference.purge(before) + gone > 0
        assert run_sql(store, "SELECT min(day), count(*) FROM analytics_totals_built") == [
            (CHAINED + timedelta(days=32) if backend == "postgres"
             else (CHAINED + timedelta(days=32)).isoformat(), 26)]
        await assert_same_rankings(store, reference, chains_periods()[2::3])
    finally:
        await store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_write_between_the_parts_of_a_days_build_leaves_the_day_to_the_next(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A day's objects per query are added up in several transactions; a write to the day
    after the first (a late search) leaves the later ones without effect and the day not
    marked, and another build begun meanwhile takes it over: the next build adds it up
    whole, as the searches give it."""
    store = made(backend, request, tmp_path)
    await store.open()
    try:
        reference = await written_chains(store)
        d = SQLITE if isinstance(store, SqliteAnalyticsStore) else POSTGRES
        day = CHAINED + timedelta(days=3)
        kept = [(d.day(CHAINED), d.day(CHAINED + timedelta(days=44)))]
        plan = rollups.builds(d, [kept, [], [], []], CHAINED + timedelta(days=60))
        parts = [statements for statements in plan
                 if any("analytics_query_hit_days" in s and d.day(day) in p
                        for s, p in statements)]
        assert len(parts) == totals.HIT_PARTS
        for statement, params in parts[0]:  # the first part, then a late search
            run_sql(store, statement, params)
        late = [msgspec.structs.replace(s, at=at(day, 7200 + n), query_id=None)
                for n, s in enumerate(months()[:30])]
        for target in (store, reference):
            await target.write_searches(late)
        for statements in parts[1:]:
            for statement, params in statements:
                run_sql(store, statement, params)
        assert run_sql(store, "SELECT count(*) FROM analytics_query_hits_built "
                       "WHERE building IS NULL") == [(0,)]
        # a build begun meanwhile (another instance's), then the one before it goes on
        again = rollups.builds(d, [kept, [], [], []], CHAINED + timedelta(days=60))
        other = [statements for statements in again
                 if any("analytics_query_hit_days" in s and d.day(day) in p
                        for s, p in statements)]
        for statement, params in other[0]:
            run_sql(store, statement, params)
        for statements in parts:  # the older build's parts: without effect now
            for statement, params in statements[2 if statements is parts[0] else 0:]:
                run_sql(store, statement, params)
        for statements in other[1:]:
            for statement, params in statements:
                run_sql(store, statement, params)
        asked = {"limit": 8, "search": "paris", "with_events": True}
        period = ("books", CHAINED, CHAINED + timedelta(days=6))
        assert await store.hit_stats(*period, **asked) == await reference.hit_stats(
            *period, **asked)
        assert await store.purge(LONG_AGO) == 0
        assert run_sql(store, "SELECT count(*) FROM analytics_query_hits_built "
                       "WHERE building IS NULL") == [(45,)]
        await assert_same_rankings(store, reference, chains_periods()[::5])
    finally:
        await store.close()
