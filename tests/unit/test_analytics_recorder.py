"""``AnalyticsRecorder``: a bounded buffer between the requests and the store, written in
batches in the background, drops counted, a flush on close."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from searchport.domain.access import Access
from searchport.domain.analytics import buffer as buffer_module
from searchport.domain.analytics.buffer import CHUNK
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import ObservedSearch, SearchRecord, pseudonym
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.domain.errors import AnalyticsUnavailable, Forbidden
from searchport.domain.usecases.send_events import SendEvents
from searchport.ports.analytics import AnalyticsStore
from tests.fakes import FakeAnalyticsStore, FakeEngine

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


def recorder(store: FakeAnalyticsStore, **options: object) -> AnalyticsRecorder:
    """A recorder whose clock says NOON (its daily purge keeps the rows of these tests)."""
    typed: AnalyticsStore = store
    options.setdefault("clock", lambda: NOON)
    return AnalyticsRecorder(store=typed, **options)  # type: ignore[arg-type]


async def test_searches_are_written_normalised_and_pseudonymised() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store)
    for n in range(6):
        rec.record(seen(n, token="user-9" if n == 5 else None))
    rec.record(seen(6, at=NOON + 86_400))  # the next day: its own salt
    assert rec.record_events([click(1), click(2)])
    assert store.searches == [] and rec.pending == 9  # nothing written by recording
    await rec.flush()
    assert [s.query for s in store.searches] == [f"query {n % 3}" for n in range(7)]
    expected = [pseudonym(f"192.0.2.{n % 4}", DAY, b"salt-2026-03-01") for n in range(5)]
    expected += ["user-9", pseudonym("192.0.2.2", DAY + timedelta(days=1), b"salt-2026-03-02")]
    assert [s.user_token for s in store.searches] == expected
    assert not any("192.0.2" in repr(s) for s in store.searches)
    assert store.events == [click(1), click(2)]
    assert rec.pending == 0 and rec.dropped == 0


class SlicingStore(FakeAnalyticsStore):
    """Reads the records handed over as the SQL stores do, a slice at a time, noting how
    many records the recorder had made each time a slice was read whole."""

    def __init__(self, made: list[int]) -> None:
        super().__init__()
        self.made = made
        self.seen_made: list[int] = []

    async def write_searches(self, records: Iterable[SearchRecord]) -> None:
        found = iter(records)
        while part := list(itertools.islice(found, 100)):
            self.seen_made.append(len(self.made))
            self.searches.extend(part)
            await asyncio.sleep(0)


async def test_a_batch_is_made_into_records_as_the_store_reads_it_not_all_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    real = buffer_module.to_record

    def counted(*args: Any, **kwargs: Any) -> SearchRecord:
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(buffer_module, "to_record", counted)
    store = SlicingStore(made)
    rec = recorder(store, batch=2000)
    for n in range(1000):
        rec.record(seen(n % 50))
    await rec.flush()
    assert [s.query for s in store.searches] == [f"query {n % 50 % 3}" for n in range(1000)]
    # each slice of 100 read with at most a chunk (CHUNK) of records made ahead of it
    assert len(store.seen_made) == 10
    assert all(100 * (k + 1) <= m <= 100 * (k + 1) + CHUNK
               for k, m in enumerate(store.seen_made)), store.seen_made
    assert store.seen_made[0] < 1000


async def test_the_buffer_is_bounded_and_drops_are_counted() -> None:
    store = FakeAnalyticsStore()
    counted: list[int] = []
    rec = recorder(store, capacity=3, on_drop=counted.append)
    for n in range(5):
        rec.record(seen(n))
    assert (rec.pending, rec.dropped, sum(counted)) == (3, 2, 2)
    assert not rec.record_events([click(1)])  # no room: refused whole, nothing buffered
    assert rec.pending == 3
    await rec.flush()
    assert rec.record_events([click(1), click(2), click(3)])
    assert not rec.record_events([click(4)])
    await rec.flush()
    assert len(store.searches) == 3 and len(store.events) == 3 and rec.dropped == 2


async def test_a_search_no_store_could_keep_is_dropped_and_counted() -> None:
    store = FakeAnalyticsStore()
    counted: list[int] = []
    rec = recorder(store, on_drop=counted.append)
    rec.record(seen(1))
    rec.record(ObservedSearch(at=NOON, handle="books", query="lone \ud800", nb_hits=1))
    rec.record(seen(2))
    assert (rec.pending, rec.dropped, counted) == (2, 1, [1])
    await rec.flush()
    assert [s.query for s in store.searches] == ["query 1", "query 2"]


async def test_a_failing_store_loses_records_not_searches() -> None:
    store = FakeAnalyticsStore()
    store.failing = True
    counted: list[int] = []
    rec = recorder(store, interval=0.01, on_drop=counted.append)
    await rec.start()  # the store cannot be opened: logged, the recorder runs on
    for n in range(4):
        rec.record(seen(n))
    await wait_for(lambda: rec.pending == 0)
    assert rec.dropped == 4 == sum(counted) and store.searches == []
    store.failing = False
    rec.record(seen(9))
    await wait_for(lambda: len(store.searches) == 1)
    assert rec.dropped == 4
    await rec.close()
    assert store.closed


async def test_a_full_batch_is_written_at_once() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store, batch=5, interval=60)
    await rec.start()
    for n in range(4):
        rec.record(seen(n))
    await asyncio.sleep(0.05)
    assert store.searches == []  # not a batch yet, not the interval yet
    rec.record(seen(4))
    await wait_for(lambda: len(store.searches) == 5)
    assert store.writes == 1
    await rec.close()


async def test_a_round_writes_what_it_found_buffered_and_leaves_later_arrivals() -> None:
    """Searches keep arriving while a write is under way: the round does not chase them
    (a steady stream would become a run of small writes); the next round takes them in
    one write."""
    store = FakeAnalyticsStore()
    store.hold = asyncio.Event()
    rec = recorder(store, batch=100, interval=0.2)
    await rec.start()
    for n in range(10):
        rec.record(seen(n))
    store.hold.set()  # the round's write waits while more searches arrive
    await wait_for(lambda: rec.pending == 0)  # the round took all ten
    for n in range(10, 40):
        rec.record(seen(n))
    store.hold.clear()
    await wait_for(lambda: len(store.searches) == 10)
    await asyncio.sleep(0.05)
    assert store.writes == 1 and rec.pending == 30  # left for the next round
    await wait_for(lambda: len(store.searches) == 40)
    assert store.writes == 2  # the thirty in one write
    await rec.close()


async def test_close_writes_what_is_buffered() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store, batch=2, interval=60)
    await rec.start()
    for n in range(5):
        rec.record(seen(n))
    rec.record_events([click(1)])
    await rec.close()
    assert len(store.searches) == 5 and len(store.events) == 1 and rec.dropped == 0
    assert store.closed


async def test_close_gives_up_at_its_deadline_and_counts_what_is_lost() -> None:
    store = FakeAnalyticsStore()
    store.hold = asyncio.Event()
    store.hold.set()  # every write waits
    counted: list[int] = []
    rec = recorder(store, batch=2, interval=60, on_drop=counted.append)
    await rec.start()
    for n in range(5):
        rec.record(seen(n))
    started = time.monotonic()
    await rec.close(deadline=0.1)
    assert time.monotonic() - started < 2
    assert store.searches == [] and rec.dropped == 5 == sum(counted) and rec.pending == 0


async def test_the_days_past_the_retention_are_purged() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store, interval=0.01, retention_days=30, clock=lambda: NOON)
    await rec.start()
    await wait_for(lambda: bool(store.purged))
    await asyncio.sleep(0.05)
    assert store.purged == [DAY - timedelta(days=30)]  # once a day, not every round
    await rec.close()


async def test_a_disabled_recorder_records_nothing() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store, enabled=False)
    await rec.start()
    rec.record(seen(1))
    assert rec.record_events([click(1)])
    assert rec.pending == 0 and not store.opened
    await rec.close()


async def wait_for(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the recorder did not get there in time"
        await asyncio.sleep(0.005)


async def test_send_events_buffers_a_batch_or_says_the_buffer_is_full() -> None:
    store = FakeAnalyticsStore()
    rec = recorder(store, capacity=2)
    config = IndexConfig(engine="tantivy", path="idx")
    books = Catalog({h: IndexEntry(h, config, FakeEngine()) for h in ("books", "films")})
    send = SendEvents(catalog=books, recorder=rec, clock=lambda: NOON)
    event = {"eventName": "Clicked", "eventType": "click", "index": "books",
             "userToken": "u-1", "objectIDs": ["o1"]}
    usage = {"eventName": "__start__", "eventType": "instantsearch"}
    sent = json.dumps({"events": [event, usage, event]}).encode()
    assert await send(sent, Access(handles=("books",))) == 2
    with pytest.raises(Forbidden, match=r"events\[0\]\.index"):
        await send(sent, Access(handles=("films",)))
    unknown = json.dumps({"events": [{**event, "index": "nope"}]}).encode()
    with pytest.raises(Forbidden, match=r"events\[0\]\.index"):
        await send(unknown)  # an unknown handle is refused as one the key may not read
    with pytest.raises(AnalyticsUnavailable, match="buffer is full"):
        await send(sent)
    await rec.flush()
    assert [(e.handle, e.object_ids, e.at) for e in store.events] == [
        ("books", ("o1",), NOON)] * 2
