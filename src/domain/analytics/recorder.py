"""``AnalyticsRecorder``: the searches and events of the requests handed to the analytics
store without a request ever waiting for it, and the daily purge of the days past the
retention."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import (
    ObservedSearch,
    Tracking,
    Visitor,
    kept_hit_ids,
    new_query_id,
    utc_day,
)
from searchport.domain.analytics.refinements import refinements_of
from searchport.domain.errors import AnalyticsUnavailable

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore

logger = logging.getLogger("searchport.analytics")
_NOBODY = Visitor()
PURGE_EVERY = 86_400.0  # seconds
PURGE_RETRY = 3_600.0  # seconds after a purge that failed
A = TypeVar("A", bound=msgspec.Struct)  # a search's answer, with a ``query_id`` field


class AnalyticsRecorder:
    def __init__(self, *, store: AnalyticsStore, retention_days: int = 90,
                 clock: Callable[[], float] = time.time, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled  # False: record nothing (analytics.backend none)
        self._retention = retention_days
        self._clock = clock
        self._purging: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the store (saying why when it cannot be used yet: it tries again as it
        writes), then purge the days past the retention, now and once a day."""
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

    def searched(self, answer: A, *, handle: str, query: str, tracking: Tracking,
                 visitor: Visitor | None, nb_hits: int,
                 hits: Sequence[Mapping[str, Any]] = (), page: int = 0,
                 filters: tuple[Any, ...] = (),
                 public: Callable[[str], str] | None = None) -> A:
        """Record one search (unless ``analytics`` is false); ``answer`` again, with a new
        ``queryID`` when the search asked for ``clickAnalytics`` and the recorder is
        enabled. ``filters`` (domain filters, real names) become refinements through
        ``public``."""
        if not self.enabled:
            return answer
        query_id = new_query_id() if tracking.click_analytics else None
        if tracking.analytics:
            visitor = visitor or _NOBODY
            started = visitor.started
            self.store.record_search(ObservedSearch(
                at=time.time(), handle=handle, query=query, nb_hits=nb_hits, page=page,
                refinements=refinements_of(filters, public or str) if filters else (),
                tags=tracking.tags, user_token=tracking.user_token or visitor.user_token,
                client=visitor.client, query_id=query_id, hits=kept_hit_ids(hits),
                latency_ms=(time.perf_counter() - started) * 1000 if started is not None
                else 0.0,
            ))
        if query_id is None:
            return answer
        return msgspec.structs.replace(answer, query_id=query_id)

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        """Hand a batch of events to the store, all or none: False when it has no room."""
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
