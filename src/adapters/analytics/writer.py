"""``QueryLogWriter``: the searches and events recorded, in a bounded queue that one task
writes to the store every ``interval`` seconds, or as soon as a batch is full, a batch per
transaction. A request adds to the queue and goes on; when the queue is full, or the store
fails, records are dropped and counted (``dropped``, ``on_drop``). ``close`` writes what
is left, within a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Protocol, TypeVar

import msgspec

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch, SearchRecord, to_record, utc_day
from searchport.domain.errors import AnalyticsUnavailable

logger = logging.getLogger("searchport.analytics")
T = TypeVar("T")

RETRY_AFTER = 1.0  # seconds between writes while the store is failing
_json = msgspec.json.Encoder()


class BatchStore(Protocol):
    """What the writer writes to: one transaction per call."""

    async def day_salt(self, day: date) -> bytes: ...

    async def write_searches(self, records: Sequence[SearchRecord]) -> None: ...

    async def write_events(self, events: Sequence[InsightsEvent]) -> None: ...


class QueryLogWriter:
    def __init__(self, store: BatchStore, *, capacity: int = 50_000, batch: int = 5000,
                 interval: float = 1.0, on_drop: Callable[[int], None] | None = None
                 ) -> None:
        self._store = store
        self._capacity = capacity
        self._batch = batch
        self._interval = interval
        self._on_drop = on_drop
        self._searches: deque[ObservedSearch] = deque()
        self._events: deque[InsightsEvent] = deque()
        self._salts: dict[date, bytes] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failing = False
        self._closing = False
        self.dropped = 0

    def add_search(self, search: ObservedSearch) -> None:
        if self.pending >= self._capacity:
            self._drop(1)
            return
        self._searches.append(search)
        if len(self._searches) >= self._batch:
            self._wake.set()

    def add_events(self, events: Sequence[InsightsEvent]) -> bool:
        if self.pending + len(events) > self._capacity:
            return False
        self._events.extend(events)
        if len(self._events) >= self._batch:
            self._wake.set()
        return True

    @property
    def pending(self) -> int:
        return len(self._searches) + len(self._events)

    def _drop(self, count: int) -> None:
        self.dropped += count
        if self._on_drop is not None:
            self._on_drop(count)

    def start(self, failing: bool = False) -> None:
        """Start the task; ``failing``: the store could not be opened."""
        self._failing = failing
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), context=contextvars.Context())

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RETRY_AFTER if self._failing else self._interval):
                    await self._wake.wait()
            self._wake.clear()
            if self._closing:
                await self.flush()
                return
            await self.flush(self.pending)

    async def flush(self, count: int | None = None) -> None:
        """Write what is queued, batch by batch; what fails is dropped. ``count``: only
        those queued when a round begins, so that a steady stream of searches is written in
        a few large batches, not in a run of small ones each as it comes."""
        while self.pending and (count is None or count > 0):
            size = self._batch if count is None else min(count, self._batch)
            taken = await self._write_one(size)
            if taken is None:
                return
            if count is not None:
                count -= taken

    async def _write_one(self, size: int) -> int | None:
        """One batch of at most ``size`` records: how many it took; None when the store
        failed (they are dropped)."""
        searches = _take(self._searches, size)
        events = _take(self._events, size - len(searches))
        written = 0
        try:
            if searches:
                records = self._storable(await self._records(searches))
                if records:
                    await self._store.write_searches(records)
                written = len(searches)
            if events:
                await self._store.write_events(events)
        except asyncio.CancelledError:  # stopped past the shutdown deadline: say what is lost
            self._drop(len(searches) + len(events) - written)
            raise
        except AnalyticsUnavailable as exc:
            self._drop(len(searches) + len(events) - written)
            if not self._failing:
                logger.warning("analytics: %s; records are dropped (counted in "
                               "searchport_analytics_dropped_total) until it works", exc.message)
            self._failing = True
            return None
        if self._failing:
            logger.warning("analytics: the store works again")
        self._failing = False
        return len(searches) + len(events)

    async def _records(self, searches: list[ObservedSearch]) -> list[SearchRecord]:
        """The records of ``searches``, under the salts of their days (asked of the store
        for a new day, forgotten after the next)."""
        days = {utc_day(s.at) for s in searches}
        for day in sorted(days - self._salts.keys()):
            self._salts[day] = await self._store.day_salt(day)
        for old in [d for d in self._salts if d < max(days) - timedelta(days=1)]:
            del self._salts[old]
        return [to_record(s, self._salts[utc_day(s.at)]) for s in searches]

    def _storable(self, records: list[SearchRecord]) -> list[SearchRecord]:
        """``records`` but those no database could keep (a lone surrogate has no UTF-8),
        dropped and counted: one would fail its whole batch."""
        try:
            _json.encode(records)
            return records
        except UnicodeEncodeError:
            kept = [r for r in records if _encodes(r)]
            self._drop(len(records) - len(kept))
            return kept

    async def close(self, deadline: float = 10.0) -> None:
        """Stop the task once it has written what is queued (within ``deadline`` seconds,
        what is left counted as dropped)."""
        task, self._task = self._task, None
        self._closing = True
        self._wake.set()
        if task is not None:
            try:
                async with asyncio.timeout(deadline):
                    await asyncio.shield(task)  # its last round writes what is queued
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        elif self.pending:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(deadline):
                    await self.flush()
        left = self.pending
        if left:
            self._searches.clear()
            self._events.clear()
            self._drop(left)
        self._capacity = 0  # a record arriving after the close is dropped, and counted


def _encodes(record: SearchRecord) -> bool:
    try:
        _json.encode(record)
    except UnicodeEncodeError:
        return False
    return True


def _take(queue: deque[T], count: int) -> list[T]:
    return [queue.popleft() for _ in range(min(count, len(queue)))]
