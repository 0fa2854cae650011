"""``AnalyticsRecorder``: what the searches and events of the requests leave in the query
log, handed to the analytics store without a request ever waiting for it.

A search is recorded as its request saw it (``ObservedSearch``: no hashing, no string work
on the request's path); the store makes its record and writes it later, or drops and
counts it when it cannot keep up. A task of the recorder's own purges the days past the
retention, once a day.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

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
_NOBODY = Visitor()
PURGE_EVERY = 86_400.0  # seconds
PURGE_RETRY = 3_600.0  # seconds after a purge that failed


class AnalyticsRecorder:
    def __init__(self, *, store: AnalyticsStore, retention_days: int = 90,
                 clock: Callable[[], float] = time.time, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled  # False: record nothing (analytics.backend none)
        self._retention = retention_days
        self._clock = clock
        self._purging: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the store (when it cannot be used yet, say why: it tries again as it
        writes, and the records it cannot keep are counted as dropped), then purge the
        days past the retention, now and once a day."""
        if not self.enabled or self._purging is not None:
            return
        try:
            await self.store.open()
        except AnalyticsUnavailable as exc:
            logger.warning("analytics: %s; searches are not recorded until it works",
                           exc.message)
        self._purging = asyncio.get_running_loop().create_task(
            self._purge_daily(), context=contextvars.Context())

    async def _purge_daily(self) -> None:
        while True:
            before = utc_day(self._clock()) - timedelta(days=self._retention)
            try:
                removed = await self.store.purge(before)
            except AnalyticsUnavailable as exc:
                logger.warning("analytics: the daily purge failed: %s", exc.message)
                await asyncio.sleep(PURGE_RETRY)
                continue
            if removed:
                logger.info("analytics: %d records before %s purged", removed, before)
            await asyncio.sleep(PURGE_EVERY)

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
        self.store.record_search(ObservedSearch(
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
        """Hand a batch of events to the store, all or none: False when it has no room for
        them (none is kept then)."""
        return self.store.record_events(events) if self.enabled else True

    async def close(self) -> None:
        """Stop purging; close the store, which writes what it was handed first."""
        task, self._purging = self._purging, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.enabled:
            try:
                await self.store.close()
            except AnalyticsUnavailable as exc:
                logger.warning("analytics: %s", exc.message)
