"""``QueryLogWriter``: a bounded queue between the requests and the store, written in
batches by one task, drops counted, what is queued written on close."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest

from searchport.adapters.analytics.writer import BatchStore, QueryLogWriter
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch, pseudonym
from tests.fakes import FakeAnalyticsStore

pytestmark = pytest.mark.anyio

DAY = date(2026, 3, 1)
NOON = datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def seen(n: int, at: float = NOON, token: str | None = None) -> ObservedSearch:
    return ObservedSearch(at=at + n, handle="books", query=f"  Query {n % 3} ", nb_hits=n,
                          user_token=token, client=f"192.0.2.{n % 4}")


def click(n: int) -> InsightsEvent:
    return InsightsEvent(at=NOON, handle="books", type="click", subtype=None, name="c",
                         user_token="u", object_ids=(f"o{n}",))


def writer(store: FakeAnalyticsStore, **options: object) -> QueryLogWriter:
    typed: BatchStore = store
    return QueryLogWriter(typed, **options)  # type: ignore[arg-type]


async def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the writer did not get there in time"
        await asyncio.sleep(0.005)


async def test_searches_are_written_normalised_and_pseudonymised() -> None:
    store = FakeAnalyticsStore()
    log = writer(store)
    for n in range(6):
        log.add_search(seen(n, token="user-9" if n == 5 else None))
    log.add_search(seen(6, at=NOON + 86_400))  # the next day: its own salt
    assert log.add_events([click(1), click(2)])
    assert store.searches == [] and log.pending == 9  # nothing written by queueing
    await log.flush()
    assert [s.query for s in store.searches] == [f"query {n % 3}" for n in range(7)]
    expected = [pseudonym(f"192.0.2.{n % 4}", DAY, b"salt-2026-03-01") for n in range(5)]
    expected += ["user-9", pseudonym("192.0.2.2", DAY + timedelta(days=1), b"salt-2026-03-02")]
    assert [s.user_token for s in store.searches] == expected
    assert not any("192.0.2" in repr(s) for s in store.searches)
    assert store.events == [click(1), click(2)]
    assert log.pending == 0 and log.dropped == 0


async def test_the_queue_is_bounded_and_drops_are_counted() -> None:
    store = FakeAnalyticsStore()
    counted: list[int] = []
    log = writer(store, capacity=3, on_drop=counted.append)
    for n in range(5):
        log.add_search(seen(n))
    assert (log.pending, log.dropped, sum(counted)) == (3, 2, 2)
    assert not log.add_events([click(1)])  # no room: refused whole, nothing queued
    assert log.pending == 3
    await log.flush()
    assert log.add_events([click(1), click(2), click(3)])
    assert not log.add_events([click(4)])
    await log.flush()
    assert len(store.searches) == 3 and len(store.events) == 3 and log.dropped == 2


async def test_a_search_no_store_could_keep_is_dropped_and_counted() -> None:
    store = FakeAnalyticsStore()
    counted: list[int] = []
    log = writer(store, on_drop=counted.append)
    log.add_search(seen(1))
    log.add_search(ObservedSearch(at=NOON, handle="books", query="lone \ud800", nb_hits=1))
    log.add_search(seen(2))
    await log.flush()
    assert [s.query for s in store.searches] == ["query 1", "query 2"]
    assert (log.pending, log.dropped, counted) == (0, 1, [1])


async def test_a_failing_store_loses_records_not_searches() -> None:
    store = FakeAnalyticsStore()
    store.failing = True
    counted: list[int] = []
    log = writer(store, interval=0.01, on_drop=counted.append)
    log.start(failing=True)
    for n in range(4):
        log.add_search(seen(n))
    await wait_for(lambda: log.pending == 0)
    assert log.dropped == 4 == sum(counted) and store.searches == []
    store.failing = False
    log.add_search(seen(9))
    await wait_for(lambda: len(store.searches) == 1)
    assert log.dropped == 4
    await log.close()


async def test_searches_written_before_events_that_fail_are_not_counted_as_dropped() -> None:
    class EventsFail(FakeAnalyticsStore):
        async def write_events(self, events: object) -> None:  # type: ignore[override]
            self.failing = True
            self._check()

    store = EventsFail()
    log = writer(store)
    log.add_search(seen(1))
    log.add_events([click(1), click(2)])
    await log.flush()
    assert len(store.searches) == 1 and log.dropped == 2


async def test_a_full_batch_is_written_at_once() -> None:
    store = FakeAnalyticsStore()
    log = writer(store, batch=5, interval=60)
    log.start()
    for n in range(4):
        log.add_search(seen(n))
    await asyncio.sleep(0.05)
    assert store.searches == []  # not a batch yet, not the interval yet
    log.add_search(seen(4))
    await wait_for(lambda: len(store.searches) == 5)
    assert store.writes == 1
    await log.close()


async def test_a_round_writes_what_it_found_queued_and_leaves_later_arrivals() -> None:
    """Searches keep arriving while a write is under way: the round does not chase them
    (a steady stream would become a run of small writes); the next round takes them in
    one write."""
    store = FakeAnalyticsStore()
    store.hold = asyncio.Event()
    log = writer(store, batch=100, interval=0.2)
    log.start()
    for n in range(10):
        log.add_search(seen(n))
    store.hold.set()  # the round's write waits while more searches arrive
    await wait_for(lambda: log.pending == 0)  # the round took all ten
    for n in range(10, 40):
        log.add_search(seen(n))
    store.hold.clear()
    await wait_for(lambda: len(store.searches) == 10)
    await asyncio.sleep(0.05)
    assert store.writes == 1 and log.pending == 30  # left for the next round
    await wait_for(lambda: len(store.searches) == 40)
    assert store.writes == 2  # the thirty in one write
    await log.close()


async def test_close_writes_what_is_queued() -> None:
    store = FakeAnalyticsStore()
    log = writer(store, batch=2, interval=60)
    log.start()
    for n in range(5):
        log.add_search(seen(n))
    log.add_events([click(1)])
    await log.close()
    assert len(store.searches) == 5 and len(store.events) == 1 and log.dropped == 0
    log.add_search(seen(9))  # after the close: dropped, and counted
    assert log.dropped == 1


async def test_close_gives_up_at_its_deadline_and_counts_what_is_lost() -> None:
    store = FakeAnalyticsStore()
    store.hold = asyncio.Event()
    store.hold.set()  # every write waits
    counted: list[int] = []
    log = writer(store, batch=2, interval=60, on_drop=counted.append)
    log.start()
    for n in range(5):
        log.add_search(seen(n))
    started = time.monotonic()
    await log.close(deadline=0.1)
    assert time.monotonic() - started < 2
    assert store.searches == [] and log.dropped == 5 == sum(counted) and log.pending == 0
