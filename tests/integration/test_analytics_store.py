"""The ``AnalyticsStore`` adapters against the real thing: an SQLite file and a real
PostgreSQL server of the tests' own. Every expected figure is computed here, in plain
Python, from the rows written."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from pathlib import Path

import psycopg
import pytest

from searchport.adapters.analytics import schema
from searchport.adapters.analytics.none import NullAnalyticsStore
from searchport.adapters.analytics.postgres import PostgresAnalyticsStore
from searchport.adapters.analytics.sqlite import SqliteAnalyticsStore
from searchport.adapters.analytics.store import QueueOptions
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import (
    ObservedSearch,
    Refinement,
    SearchRecord,
    pseudonym,
)
from searchport.domain.errors import AnalyticsUnavailable
from searchport.ports.analytics import AnalyticsStore
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.anyio

DAY0 = date(2026, 3, 1)
HANDLES = ("books", "films")
QUERIES = ("paris", "lyon", "", "new york", "zurich")


def open_store(kind: str, tmp_path: Path, postgres: PostgresServer | None,
               timeout: float = 5.0) -> AnalyticsStore:
    if kind == "sqlite":
        store: AnalyticsStore = SqliteAnalyticsStore(tmp_path / "log" / "analytics.sqlite3",
                                                     timeout=timeout)
        return store
    assert postgres is not None
    store = PostgresAnalyticsStore(postgres.create_database(), timeout=timeout)
    return store


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AnalyticsStore]:
    server = request.getfixturevalue("postgres") if request.param == "postgres" else None
    opened = open_store(request.param, tmp_path, server)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


def at(day: date, second: int = 0) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + second


def rows() -> list[SearchRecord]:
    """Searches over five days, two handles, some with a query id; nb_hits varied so that
    averages need rounding (and some are 0)."""
    made = []
    for n in range(140):
        day = DAY0 + timedelta(days=n % 5)
        made.append(SearchRecord(
            at=at(day, 3600 + n * 7), handle=HANDLES[n % 3 == 0], query=QUERIES[n % 5 if n % 7
                                                                            else (n // 7) % 5],
            nb_hits=(n * 13) % 9 if n % 4 else 0, page=n % 3,
            refinements=(Refinement("genre", ":", f"g{n % 2}"),) if n % 2 else (),
            tags=("mobile",) if n % 6 == 0 else (), user_token=f"user-{n % 11}",
            latency_ms=1.5 + n, query_id=f"{n:032x}" if n % 5 in (1, 3) else None,
        ))
    return made


def clicks(searches: list[SearchRecord]) -> list[InsightsEvent]:
    """Click events on some tracked searches (one, two or none each), and a view."""
    made = []
    tracked = [s for s in searches if s.query_id]
    for i, search in enumerate(tracked):
        for k in range(i % 3):
            made.append(InsightsEvent(
                at=search.at + 5 + k, handle=search.handle, type="click", subtype=None,
                name="Hit Clicked", user_token=search.user_token, object_ids=(f"o{k}",),
                positions=(k + 1,), query_id=search.query_id))
    made.append(InsightsEvent(at=at(DAY0), handle="books", type="view", subtype=None,
                              name="Viewed", user_token="u", object_ids=("o1",),
                              query_id=tracked[0].query_id))
    return made


def half_up(value: Fraction) -> int:
    return int(value + Fraction(1, 2)) if value >= 0 else -int(-value + Fraction(1, 2))


async def test_searches_per_day_and_top_searches(store: AnalyticsStore) -> None:
    searches = rows()
    await store.write_searches(searches[:70])
    await store.write_searches(searches[70:])
    start, end = DAY0 + timedelta(days=1), DAY0 + timedelta(days=3)
    for handle in HANDLES:
        mine = [s for s in searches if s.handle == handle and start <= s.day <= end]
        per_day = Counter(s.day for s in mine)
        empty = Counter(s.day for s in mine if s.nb_hits == 0)
        found = await store.searches_by_day(handle, start, end)
        assert [(d.day, d.count, d.no_results) for d in found] == [
            (day, n, empty[day]) for day, n in sorted(per_day.items())]
        assert any(d.no_results for d in found)

        for no_results in (False, True):
            kept = [s for s in mine if not no_results or s.nb_hits == 0]
            by_query: defaultdict[str, list[SearchRecord]] = defaultdict(list)
            for s in kept:
                by_query[s.query].append(s)
            expected = sorted(
                ((q, len(r), half_up(Fraction(sum(s.nb_hits for s in r), len(r))),
                  sum(1 for s in r if s.refinements)) for q, r in by_query.items()),
                key=lambda t: (-t[1], t[0]))
            top = await store.top_searches(handle, start, end, limit=3, offset=1,
                                           no_results=no_results)
            assert [(t.query, t.count, t.nb_hits, t.with_filters) for t in top] == expected[1:4]
            assert expected[1:4], "the rows should leave something to rank"


async def test_top_searches_without_clicks(store: AnalyticsStore) -> None:
    searches = rows()
    await store.write_searches(searches)
    await store.write_events(clicks(searches))
    clicked = {e.query_id for e in clicks(searches) if e.type == "click"}
    ranked = 0
    for handle in HANDLES:
        kept = [s for s in searches if s.handle == handle and s.query_id
                and s.query_id not in clicked]
        by_query: defaultdict[str, list[SearchRecord]] = defaultdict(list)
        for s in kept:
            by_query[s.query].append(s)
        expected = sorted(((q, len(r), half_up(Fraction(sum(s.nb_hits for s in r), len(r))))
                           for q, r in by_query.items()), key=lambda t: (-t[1], t[0]))
        top = await store.top_searches(handle, DAY0, DAY0 + timedelta(days=9), limit=100,
                                       no_clicks=True)
        assert [(t.query, t.count, t.nb_hits) for t in top] == expected
        ranked += len(expected)
    assert ranked, "the rows should leave tracked searches without clicks"


async def test_distinct_users_over_the_period_and_per_day(store: AnalyticsStore) -> None:
    searches = rows()
    await store.write_searches(searches)
    start, end = DAY0 + timedelta(days=1), DAY0 + timedelta(days=3)
    for handle in HANDLES:
        mine = [s for s in searches if s.handle == handle and start <= s.day <= end]
        per_day: defaultdict[date, set[str]] = defaultdict(set)
        for s in mine:
            per_day[s.day].add(s.user_token)
        total, days = await store.users(handle, start, end)
        assert total == len({s.user_token for s in mine})
        assert [(d.day, d.users) for d in days] == [
            (day, len(tokens)) for day, tokens in sorted(per_day.items())]
        assert total < sum(d.users for d in days), "some users come back another day"


async def test_clicks_per_day_follow_the_query_ids(store: AnalyticsStore) -> None:
    searches = rows()
    events = clicks(searches)
    await store.write_searches(searches)
    await store.write_events(events)
    click_count = Counter(e.query_id for e in events if e.type == "click")
    for handle in HANDLES:
        tracked = [s for s in searches if s.handle == handle and s.query_id]
        expected = defaultdict(lambda: [0, 0, 0])
        for s in tracked:
            figures = expected[s.day]
            figures[0] += 1
            figures[1] += click_count[s.query_id] > 0
            figures[2] += click_count[s.query_id]
        found = await store.clicks_by_day(handle, DAY0, DAY0 + timedelta(days=10))
        assert [(d.day, d.tracked_searches, d.clicked_searches, d.clicks) for d in found] == [
            (day, *figures) for day, figures in sorted(expected.items())]
        assert any(d.clicks for d in found)


def conversions(searches: list[SearchRecord]) -> list[InsightsEvent]:
    """Conversions naming their search by queryID, purchases naming it per object (twice
    the same search in one event, which counts once), and one naming none."""
    tracked = [s for s in searches if s.query_id]
    made = []
    for i, search in enumerate(tracked[::2]):
        made.append(InsightsEvent(at=search.at + 60, handle=search.handle, type="conversion",
                                  subtype=None, name="Liked", user_token="u",
                                  object_ids=("o1",), query_id=search.query_id))
        if i % 3 == 0:
            other = tracked[(2 * i + 1) % len(tracked)].query_id or ""
            made.append(InsightsEvent(
                at=search.at + 90, handle=search.handle, type="conversion",
                subtype="purchase", name="Bought", user_token="u",
                object_ids=("o1", "o2", "o3"),
                object_query_ids=(search.query_id or "", search.query_id or "", other)))
    made.append(InsightsEvent(at=at(DAY0), handle="books", type="conversion", subtype=None,
                              name="Liked", user_token="u", object_ids=("o9",)))
    return made


async def test_conversions_per_day_follow_query_ids_and_objects(store: AnalyticsStore) -> None:
    searches = rows()
    events = conversions(searches)
    await store.write_searches(searches)
    await store.write_events([*events, *clicks(searches)])  # clicks are not conversions
    named: Counter[str] = Counter()
    for e in events:
        named.update({e.query_id} if e.query_id else set(e.object_query_ids) - {""})
    for handle in HANDLES:
        expected: defaultdict[date, list[int]] = defaultdict(lambda: [0, 0, 0])
        for s in searches:
            if s.handle == handle and s.query_id:
                figures = expected[s.day]
                figures[0] += 1
                figures[1] += named[s.query_id] > 0
                figures[2] += named[s.query_id]
        found = await store.conversions_by_day(handle, DAY0, DAY0 + timedelta(days=10))
        assert [(d.day, d.tracked_searches, d.clicked_searches, d.clicks) for d in found] == [
            (day, *figures) for day, figures in sorted(expected.items())]
        assert any(d.clicks for d in found)


async def test_click_positions_per_day(store: AnalyticsStore) -> None:
    searches = rows()
    events = [*clicks(searches), InsightsEvent(
        at=at(DAY0, 50), handle="books", type="click", subtype=None, name="c", user_token="u",
        object_ids=("a", "b"), positions=(3, 12), query_id=searches[1].query_id)]
    await store.write_events(events)
    for handle in HANDLES:
        expected: Counter[tuple[date, int]] = Counter()
        for e in events:
            day = datetime.fromtimestamp(e.at, UTC).date()
            if e.handle == handle and e.type == "click":
                expected.update((day, p) for p in e.positions)
        found = await store.click_positions(handle, DAY0, DAY0 + timedelta(days=10))
        assert [(d.day, d.position, d.clicks) for d in found] == sorted(
            (day, p, n) for (day, p), n in expected.items())
        assert found


async def test_purge_removes_the_days_before(store: AnalyticsStore) -> None:
    searches = rows()
    events = clicks(searches)
    await store.write_searches(searches)
    await store.write_events(events)
    before = DAY0 + timedelta(days=2)
    expected = (sum(s.day < before for s in searches)
                + sum(datetime.fromtimestamp(e.at, UTC).date() < before for e in events))
    assert await store.purge(before) == expected > 0
    left = await store.searches_by_day("books", DAY0, DAY0 + timedelta(days=9))
    assert left and min(d.day for d in left) == before
    assert await store.purge(before) == 0


async def test_last_update_is_the_latest_search(store: AnalyticsStore) -> None:
    assert await store.last_update("books") is None
    searches = rows()
    await store.write_searches(searches)
    assert await store.last_update("books") == max(s.at for s in searches
                                                   if s.handle == "books")


async def test_day_salts_are_kept_one_day_back(store: AnalyticsStore) -> None:
    first = await store.day_salt(DAY0)
    assert len(first) == 32
    assert await store.day_salt(DAY0) == first
    second = await store.day_salt(DAY0 + timedelta(days=1))
    assert second != first
    await store.day_salt(DAY0 + timedelta(days=2))  # forgets DAY0, keeps DAY0 + 1
    assert await store.day_salt(DAY0 + timedelta(days=1)) == second
    assert await store.day_salt(DAY0) != first


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_schema_has_a_version_and_another_one_is_refused(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    server = request.getfixturevalue("postgres") if kind == "postgres" else None
    store = open_store(kind, tmp_path, server)
    await store.open()
    await store.write_searches(rows()[:3])
    await store.close()
    again = reopen(kind, store)
    await again.open()  # the same version: nothing to change, nothing lost
    assert await total(again) == 3
    await again.close()
    assert version_of(kind, store) == schema.VERSION == 1
    for unknown in (schema.VERSION + 1, 0):
        set_version(kind, store, unknown)
        other = reopen(kind, store)
        with pytest.raises(AnalyticsUnavailable) as refused:
            await other.open()
        message = refused.value.message
        assert f"schema version {unknown}," in message and "\n" not in message
        with pytest.raises(AnalyticsUnavailable, match=f"schema version {unknown},"):
            await other.write_searches(rows()[3:4])  # nothing written to it, ever
        await other.close()
    set_version(kind, store, schema.VERSION)
    kept = reopen(kind, store)
    await kept.open()
    assert await total(kept) == 3
    await kept.close()


async def total(store: AnalyticsStore) -> int:
    """Every search kept, both handles, all days of the rows."""
    found = 0
    for handle in HANDLES:
        found += sum(d.count for d in await store.searches_by_day(
            handle, DAY0, DAY0 + timedelta(days=9)))
    return found


def reopen(kind: str, store: AnalyticsStore) -> AnalyticsStore:
    """A new store on ``store``'s database (``kind``: unused, the store says it)."""
    if isinstance(store, SqliteAnalyticsStore):
        return SqliteAnalyticsStore(store.path)
    assert isinstance(store, PostgresAnalyticsStore)
    return PostgresAnalyticsStore(store.url)


def version_of(kind: str, store: AnalyticsStore) -> int:
    if isinstance(store, SqliteAnalyticsStore):
        with sqlite3.connect(store.path) as db:
            return int(db.execute("SELECT version FROM analytics_schema").fetchone()[0])
    assert isinstance(store, PostgresAnalyticsStore)
    with psycopg.connect(store.url) as db:
        row = db.execute("SELECT version FROM analytics_schema").fetchone()
        assert row is not None
        return int(row[0])


def set_version(kind: str, store: AnalyticsStore, version: int) -> None:
    if isinstance(store, SqliteAnalyticsStore):
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE analytics_schema SET version = ?", (version,))
        return
    assert isinstance(store, PostgresAnalyticsStore)
    with psycopg.connect(store.url) as db:
        db.execute("UPDATE analytics_schema SET version = %s", (version,))


async def test_sqlite_is_in_wal_mode_and_keeps_json(tmp_path: Path) -> None:
    store = SqliteAnalyticsStore(tmp_path / "a.sqlite3")
    await store.open()
    await store.write_searches(rows()[1:2])
    await store.close()
    with sqlite3.connect(tmp_path / "a.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        refinements, tags = db.execute(
            "SELECT refinements, tags FROM analytics_searches").fetchone()
    assert (refinements, tags) == ('[["genre",":","g1"]]', "[]")


async def test_a_sqlite_write_waits_for_another_writer_then_lands(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    store = SqliteAnalyticsStore(path)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # as the purge or another process writing
    writing = asyncio.create_task(store.write_searches(rows()[:20]))
    await asyncio.sleep(0.1)
    assert not writing.done()  # waiting for the lock, without holding the event loop
    other.execute("COMMIT")
    await writing
    other.close()
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == 20


async def test_two_sqlite_stores_on_one_file_write_in_turn(tmp_path: Path) -> None:
    """Two processes' stores on one file (here two stores on one event loop, a connection
    each): their batches wait for each other and both land whole."""
    path = tmp_path / "a.sqlite3"
    first = SqliteAnalyticsStore(path)
    second = SqliteAnalyticsStore(path)
    await first.open()
    await second.open()
    searches = rows()
    await asyncio.gather(first.write_searches(searches[:70]),
                         second.write_searches(searches[70:]))
    await first.close()
    await second.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == 140
        per_day = dict(db.execute("SELECT day, sum(searches) FROM analytics_days GROUP BY day"))
    assert per_day == {d.isoformat(): n for d, n in Counter(s.day for s in searches).items()}


async def test_a_sqlite_write_locked_out_past_its_timeout_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    store = SqliteAnalyticsStore(path, timeout=0.3)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(AnalyticsUnavailable, match=r"within 0\.3 s"):
        await store.write_searches(rows()[:20])
    other.execute("COMMIT")
    other.close()
    await store.write_searches(rows()[20:30])  # the store works again
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == 10
        assert db.execute("SELECT sum(searches) FROM analytics_days").fetchone()[0] == 10


async def test_a_sqlite_write_given_up_on_is_not_kept(tmp_path: Path) -> None:
    """A batch its caller gives up on while it waits for the file (the store's writer
    stopped past its shutdown deadline): nothing of it is kept, and the next batch lands."""
    path = tmp_path / "a.sqlite3"
    store = SqliteAnalyticsStore(path)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write waits for it
    writing = asyncio.create_task(store.write_searches(rows()))
    await asyncio.sleep(0.3)
    assert not writing.done()
    writing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writing
    other.execute("COMMIT")  # had the write gone on, its batch would land now
    other.close()
    await store.write_searches(rows()[:3])
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == 3
        assert db.execute("SELECT sum(searches) FROM analytics_days").fetchone()[0] == 3


async def test_sqlite_batches_are_written_beside_the_event_loop(tmp_path: Path) -> None:
    """The statements of a batch run in a thread of the store's: the event loop runs other
    tasks all along, and every search lands."""
    store = SqliteAnalyticsStore(tmp_path / "a.sqlite3")
    await store.open()
    turns = 0
    done = asyncio.Event()

    async def other_task() -> None:
        nonlocal turns
        while not done.is_set():
            turns += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(other_task())
    await asyncio.sleep(0)
    before = turns
    searches = rows() * 20
    await store.write_searches(searches)
    done.set()
    await ticking
    await store.close()
    assert turns - before >= 10
    with sqlite3.connect(tmp_path / "a.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == len(
            searches)


def observed(n: int) -> ObservedSearch:
    day = DAY0 + timedelta(days=n % 2)
    return ObservedSearch(at=at(day, 60 + n), handle="books", query=f" Query {n % 3} ",
                          nb_hits=n % 4, client=f"192.0.2.{n % 5}",
                          user_token="user-1" if n % 7 == 0 else None,
                          query_id=f"{n:032x}" if n % 2 else None, hits=("o1", "o2"))


async def test_what_is_recorded_is_written_by_the_store_and_kept_at_close(
        store: AnalyticsStore) -> None:
    """Searches and events handed to the store are written by its own writer: the query
    normalised, a pseudonym under the salt of the day kept in the store; those still
    queued when it closes are written first."""
    for n in range(40):
        store.record_search(observed(n))
    assert store.record_events([InsightsEvent(
        at=at(DAY0, 500), handle="books", type="click", subtype=None, name="c",
        user_token="u", object_ids=("o1",), positions=(1,), query_id=f"{1:032x}")])
    await store.close()  # the writer's interval has not come: written by the close
    again = reopen("", store)
    await again.open()
    try:
        for day in (DAY0, DAY0 + timedelta(days=1)):
            mine = [observed(n) for n in range(40) if observed(n).at // 86400 == at(day) // 86400]
            expected = sorted(
                (q, sum(1 for s in mine if s.query.strip().lower() == q))
                for q in {s.query.strip().lower() for s in mine})
            top = await again.top_searches("books", day, day, limit=10)
            assert sorted((t.query, t.count) for t in top) == expected
            total_users, _ = await again.users("books", day, day)
            salt = await again.day_salt(day)
            assert total_users == len({s.user_token or pseudonym(s.client or "", day, salt)
                                       for s in mine})
        clicked = await again.clicks_by_day("books", DAY0, DAY0 + timedelta(days=1))
        assert sum(d.clicks for d in clicked) == 1
    finally:
        await again.close()


async def test_a_full_queue_drops_and_counts(tmp_path: Path) -> None:
    counted: list[int] = []
    store = SqliteAnalyticsStore(tmp_path / "a.sqlite3", queue=QueueOptions(
        capacity=5, interval=60, on_drop=counted.append))
    await store.open()
    for n in range(8):
        store.record_search(observed(n))
    assert not store.record_events([InsightsEvent(
        at=at(DAY0), handle="books", type="view", subtype=None, name="v", user_token="u",
        object_ids=("o1",))])
    assert sum(counted) == 3
    await store.close()
    with sqlite3.connect(tmp_path / "a.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM analytics_searches").fetchone()[0] == 5
        assert db.execute("SELECT count(*) FROM analytics_events").fetchone()[0] == 0


async def test_an_unusable_sqlite_path_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the folder should be")
    store = SqliteAnalyticsStore(tmp_path / "taken" / "analytics.sqlite3")
    with pytest.raises(AnalyticsUnavailable, match="cannot be used"):
        await store.open()
    with pytest.raises(AnalyticsUnavailable):
        await store.write_searches(rows()[:1])
    await store.close()


async def test_postgres_down_then_back(tmp_path: Path) -> None:
    server = PostgresServer()
    server.start()
    try:
        store = PostgresAnalyticsStore(server.create_database(), timeout=2)
        await store.open()
        await store.write_searches(rows()[:2])
        server.stop()
        with pytest.raises(AnalyticsUnavailable, match="cannot be used"):
            await store.write_searches(rows()[2:4])
        server.start()
        await store.write_searches(rows()[4:6])  # a new connection, nothing to configure
        assert await total(store) == 4
        server.pause()
        with pytest.raises(AnalyticsUnavailable, match="within 2 s"):
            await store.write_searches(rows()[6:8])
        server.resume()
        await store.write_searches(rows()[8:9])
        assert await total(store) == 5
        await store.close()
    finally:
        server.remove()


async def test_two_instances_share_one_postgres(postgres: PostgresServer) -> None:
    url = postgres.create_database()
    first, second = PostgresAnalyticsStore(url), PostgresAnalyticsStore(url)
    await asyncio.gather(first.open(), second.open())  # tables made once, under the lock
    searches = rows()
    await asyncio.gather(first.write_searches(searches[::2]),
                         second.write_searches(searches[1::2]))
    assert await first.day_salt(DAY0) == await second.day_salt(DAY0)
    for handle in HANDLES:
        per_day = Counter(s.day for s in searches if s.handle == handle)
        found = await second.searches_by_day(handle, DAY0, DAY0 + timedelta(days=9))
        assert [(d.day, d.count) for d in found] == sorted(per_day.items())
    await first.close()
    await second.close()


async def test_the_none_store_keeps_nothing() -> None:
    store: AnalyticsStore = NullAnalyticsStore()
    await store.open()
    await store.write_searches(rows())
    assert await store.searches_by_day("books", DAY0, DAY0 + timedelta(days=9)) == []
    assert await store.top_searches("books", DAY0, DAY0, limit=10) == []
    assert await store.last_update("books") is None
    assert await store.day_salt(DAY0) == await store.day_salt(DAY0 + timedelta(days=1))
