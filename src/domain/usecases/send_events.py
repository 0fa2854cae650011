"""SendEvents: ``POST /1/events``, Algolia's Insights API."""

from __future__ import annotations

import time
from collections.abc import Callable

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.insights import read_events
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.catalog import Catalog
from searchport.domain.errors import AnalyticsUnavailable


class SendEvents:
    """Take a batch of Insights events for the log, all or none: each event's handle must
    be a configured handle the key may read."""

    def __init__(self, *, catalog: Catalog, recorder: AnalyticsRecorder,
                 clock: Callable[[], float] = time.time) -> None:
        self._catalog = catalog
        self._recorder = recorder
        self._clock = clock

    async def __call__(self, body: bytes, access: Access = FULL_ACCESS) -> int:
        """How many events were kept (``instantsearch`` usage events are not)."""

        def may_send(handle: str) -> bool:
            return handle in self._catalog and access.allows(handle)

        events = read_events(body, self._clock(), may_send)
        if not self._recorder.record_events(events):
            raise AnalyticsUnavailable("The analytics buffer is full: send the events again "
                                       "in a moment")
        return len(events)
