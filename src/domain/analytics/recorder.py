"""``AnalyticsRecorder``: searches and events go from the requests to the analytics store
without a request ever waiting on the store.

A request appends to a bounded buffer in memory (``record``: no I/O, no hashing; the
searches packed into bytes, ``SearchBuffer``, not kept as objects). A task of the
recorder's own hands what is buffered to the store in batches, every ``interval`` seconds
or as soon as a batch is full: still packed, with the salts of their days (asked of the
store first), as an ``ObservedBatch``, whose ``SearchRecord``s the store makes as it
writes them (``records_of``), in this process or in a writer process of its own. When the
buffer is full, or the store fails or is too slow, records are dropped and counted
(``dropped``, and ``on_drop`` for the metrics), and the searches go on. The same task
purges the days past the retention once a day. ``close`` writes what is left (graceful
shutdown) within a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from searchport.domain.analytics.buffer import ObservedBatch, SearchBuffer, days_of
from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import (
    ObservedSearch,
    Tracking,
    Visitor,
    hit_ids_of,
    nb_hits_of,
    new_query_id,
    utc_day,
)
from searchport.domain.analytics.refinements import refinements_of
from searchport.domain.errors import AnalyticsUnavailable
from searchport.domain.response_cache import Summary

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore

logger = logging.getLogger("searchport.analytics")
T = TypeVar("T")

PURGE_EVERY = 86_400.0  # seconds
_NOBODY = Visitor()
RETRY_AFTER = 1.0  # seconds between writes while the store is failing


class AnalyticsRecorder:
    def __init__(
        self,
        *,
        store: AnalyticsStore,
        capacity: int = 50_000,
        batch: int = 5000,
        interval: float = 1.0,
        retention_days: int = 90,
        on_drop: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.time,
        enabled: bool = True,
    ) -> None:
        self.store = store
        self.enabled = enabled  # False: record nothing (analytics.backend none)
        self._capacity = capacity
        self._batch = batch
        self._interval = interval
        self._retention = retention_days
        self._on_drop = on_drop
        self._clock = clock
        self._searches = SearchBuffer()
        self._events: deque[InsightsEvent] = deque()
        self._salts: dict[date, bytes] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._purged_at: float | None = None
        self._failing = False
        self._closing = False
        self.dropped = 0

    # -- the request side: never waits, never raises ---------------------------------------

    def record(self, seen: ObservedSearch) -> None:
        """Buffer one search (dropped and counted when the buffer is full)."""
        if not self.enabled:
            return
        searches = self._searches
        if len(searches) + len(self._events) >= self._capacity:
            self._drop(1)
            return
        try:
            searches.append(seen)
        except ValueError:  # a text no store could keep: counted, the search goes on
            self._drop(1)
            return
        if len(searches) >= self._batch:  # a batch is full
            self._wake.set()

    def query_id(self, tracking: Tracking) -> str | None:
        """A new ``queryID`` for a search that asks for ``clickAnalytics`` (and the recorder
        is enabled: analytics off, no queryID either), else None: made before the search
        runs, so that its answer can be encoded with it (``observe`` then records it)."""
        return new_query_id() if self.enabled and tracking.click_analytics else None

    def observe(self, *, handle: str, query: str, tracking: Tracking, visitor: Visitor | None,
                summary: Summary | None = None, answer: bytes | None = None, page: int = 0,
                filters: tuple[Any, ...] = (), public: Callable[[str], str] | None = None,
                query_id: str | None = None) -> str | None:
        """Record one search as its request and answer say (unless ``analytics`` is false);
        its ``queryID`` when it asked for ``clickAnalytics`` (and the recorder is enabled):
        ``query_id`` (from ``self.query_id``), else a new one; otherwise None. The hit count
        and the hits' object IDs come from ``summary`` (kept when the answer was computed),
        else are read from ``answer`` (a cached answer); ``filters`` (domain filters, real
        names) become refinements through ``public`` here: only what is written is kept
        until the write."""
        if not self.enabled:  # analytics off: no log, no queryID either
            return None
        if not tracking.click_analytics:
            query_id = None
        elif query_id is None:
            query_id = new_query_id()
        if not tracking.analytics:
            return query_id
        visitor = visitor or _NOBODY
        started = visitor.started
        self.record(ObservedSearch(
            at=time.time(), handle=handle, query=query,
            nb_hits=summary.nb_hits if summary is not None else nb_hits_of(answer or b"{}"),
            page=page, refinements=refinements_of(filters, public or str) if filters else (),
            tags=tracking.tags, user_token=tracking.user_token or visitor.user_token,
            client=visitor.client, query_id=query_id,
            hits=(summary.hit_ids if summary is not None
                  else hit_ids_of(answer) if answer else ()),
            latency_ms=(time.perf_counter() - started) * 1000 if started is not None else 0.0,
        ))
        return query_id

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        """Buffer a batch of events, all or none: False when the buffer has no room for
        them (nothing is buffered then)."""
        if not self.enabled:
            return True
        if len(self._searches) + len(self._events) + len(events) > self._capacity:
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

    # -- the background side ---------------------------------------------------------------

    async def start(self) -> None:
        """Open the store (a failure is logged: records are dropped until it works) and
        start the writing task."""
        if not self.enabled or self._task is not None:
            return
        try:
            await self.store.open()
        except AnalyticsUnavailable as exc:
            self._failing = True
            logger.warning("analytics: %s; searches are not recorded until it works",
                           exc.message)
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
            await self._purge_when_due()

    async def flush(self, count: int | None = None) -> None:
        """Write what is buffered, batch by batch, until nothing is; what fails is dropped.
        ``count``: only that many, the records already buffered when a round begins:
        those arriving meanwhile wait for the next round, so that a steady stream of
        searches is written in a few large batches, not in a run of small ones each as it
        comes."""
        self._searches.seal()  # those arriving meanwhile after these
        while self.pending and (count is None or count > 0):
            size = self._batch if count is None else min(count, self._batch)
            taken = await self._write_one(size)
            if taken is None:
                return
            if count is not None:
                count -= taken

    async def _write_one(self, size: int) -> int | None:
        """One write of at most ``size`` records: how many it took (written, or dropped
        past the shutdown deadline); None when the store failed (they are dropped)."""
        searches = self._searches.take(size)
        found = sum(p.count for p in searches)
        events = _take(self._events, size - found)
        taken = found + len(events)
        try:
            if searches:
                days = days_of(searches)
                await self._salts_for(days)
                await self.store.write_observed(ObservedBatch(
                    [bytes(p.data) for p in searches], {d: self._salts[d] for d in days}))
                del searches
            if events:
                await self.store.write_events(events)
        except asyncio.CancelledError:  # stopped past the shutdown deadline: say what is lost
            self._drop(taken)
            raise
        except AnalyticsUnavailable as exc:
            self._drop(taken)
            if not self._failing:
                logger.warning("analytics: %s; records are dropped (counted in "
                               "searchport_analytics_dropped_total) until it works", exc.message)
            self._failing = True
            return None
        if self._failing:
            logger.warning("analytics: the store works again")
        self._failing = False
        return taken

    async def _salts_for(self, days: list[date]) -> None:
        """The salts of ``days`` at hand (asked of the store for a new day), those of the
        days before the day before them forgotten."""
        for day in days:
            if day not in self._salts:
                self._salts[day] = await self.store.day_salt(day)
        if days:
            for old in [d for d in self._salts if d < days[-1] - timedelta(days=1)]:
                del self._salts[old]

    async def _purge_when_due(self) -> None:
        now = self._clock()
        if self._failing or (self._purged_at is not None
                             and now - self._purged_at < PURGE_EVERY):
            return
        self._purged_at = now
        before = utc_day(now) - timedelta(days=self._retention)
        try:
            removed = await self.store.purge(before)
        except AnalyticsUnavailable as exc:
            logger.warning("analytics: the daily purge failed: %s", exc.message)
            return
        if removed:
            logger.info("analytics: %d records before %s purged", removed, before)

    async def close(self, deadline: float = 10.0) -> None:
        """Stop the task, write what is buffered (within ``deadline`` seconds; what cannot
        be written is counted as dropped), close the store."""
        task, self._task = self._task, None
        self._closing = True
        self._wake.set()
        if task is not None:
            try:
                async with asyncio.timeout(deadline):
                    await asyncio.shield(task)  # its last round writes what is buffered
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
        with contextlib.suppress(AnalyticsUnavailable):
            await self.store.close()


def _take(queue: deque[T], count: int) -> list[T]:
    return [queue.popleft() for _ in range(min(count, len(queue)))]
