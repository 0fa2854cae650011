"""SendEvents: ``POST /1/events``, Algolia's Insights API."""

from __future__ import annotations

import time
from collections.abc import Callable

from searchport.domain.analytics.insights import read_events
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.errors import AnalyticsUnavailable


class SendEvents:
    """Take a batch of Insights events for the log, all or none: each event's handle must
    be one the caller may read (``may_read``)."""

    def __init__(self, *, recorder: AnalyticsRecorder,
                 clock: Callable[[], float] = time.time) -> None:
        self._recorder = recorder
        self._clock = clock

    async def __call__(self, body: bytes, may_read: Callable[[str], bool]) -> int:
        """How many events were kept (``instantsearch`` usage events are not)."""
        events = read_events(body, self._clock(), may_read)
        if not self._recorder.record_events(events):
            raise AnalyticsUnavailable("The analytics buffer is full: send the events again "
                                       "in a moment")
        return len(events)
