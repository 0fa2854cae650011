"""``AnalyticsRecorder``: searches and events handed to the store without waiting, the
store opened (or not: the searches go on), the days past the retention purged daily."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest

from searchport.domain.access import Access
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import Tracking, Visitor
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.config import IndexConfig
from searchport.domain.errors import AnalyticsUnavailable, Forbidden
from searchport.domain.responses import AutocompleteResponse
from searchport.domain.usecases.analytics import SendEvents
from tests.fakes import FakeAnalyticsStore, FakeEngine

pytestmark = pytest.mark.anyio

DAY = date(2026, 3, 1)
NOON = datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def click(n: int) -> InsightsEvent:
    return InsightsEvent(at=NOON, handle="books", type="click", subtype=None, name="c",
                         user_token="u", object_ids=(f"o{n}",))


async def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the recorder did not get there in time"
        await asyncio.sleep(0.005)


def observe(recorder: AnalyticsRecorder, query: str) -> str | None:
    """Record a search with ``clickAnalytics``: the ``queryID`` its answer got, if any."""
    answer = recorder.searched(
        AutocompleteResponse(hits=[], total_hits=3), handle="books", query=query,
        tracking=Tracking(click_analytics=True), visitor=Visitor(client="192.0.2.1"),
        nb_hits=3)
    return answer.query_id if isinstance(answer.query_id, str) else None


async def test_a_store_that_cannot_be_opened_costs_no_search() -> None:
    store = FakeAnalyticsStore()
    store.failing = True
    recorder = AnalyticsRecorder(store=store, clock=lambda: NOON)
    await recorder.start()  # logged, not raised
    store.failing = False
    observe(recorder, "Paris")
    assert [(s.query, s.nb_hits) for s in store.searches] == [("paris", 3)]
    await recorder.close()
    assert store.closed


async def test_the_days_past_the_retention_are_purged() -> None:
    store = FakeAnalyticsStore()
    recorder = AnalyticsRecorder(store=store, retention_days=30, clock=lambda: NOON)
    await recorder.start()
    await wait_for(lambda: bool(store.purged))
    await asyncio.sleep(0.05)
    assert store.purged == [DAY - timedelta(days=30)]  # once a day, not more
    await recorder.close()


async def test_a_disabled_recorder_records_nothing() -> None:
    store = FakeAnalyticsStore()
    recorder = AnalyticsRecorder(store=store, enabled=False)
    await recorder.start()
    assert observe(recorder, "x") is None
    assert recorder.record_events([click(1)])
    assert store.searches == [] and store.events == [] and not store.opened
    await recorder.close()
    assert not store.closed and store.purged == []


async def test_send_events_hands_a_batch_over_or_says_the_store_is_full() -> None:
    store = FakeAnalyticsStore()
    recorder = AnalyticsRecorder(store=store)
    config = IndexConfig(engine="tantivy", path="idx")
    books = Catalog({h: IndexEntry(h, config, FakeEngine()) for h in ("books", "films")})
    send = SendEvents(catalog=books, recorder=recorder, clock=lambda: NOON)
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
    store.full = True
    with pytest.raises(AnalyticsUnavailable, match="buffer is full"):
        await send(sent)
    assert [(e.handle, e.object_ids, e.at) for e in store.events] == [
        ("books", ("o1",), NOON)] * 2
