"""AnalyticsStatus: ``GET /2/status``."""

from __future__ import annotations

from datetime import UTC, datetime

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import StatusAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading
from searchport.domain.errors import InvalidRequest


class AnalyticsStatus(AnalyticsReading):
    """When the last search of one handle was logged (null before the first)."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> StatusAnswer:
        if not request.index:
            raise InvalidRequest("index is required: the handle whose analytics to read")
        access.analytics_entry(self._catalog, request.index)
        last = await self._store.last_update(request.index)
        if last is None:
            return StatusAnswer(updated_at=None)
        stamp = datetime.fromtimestamp(last, UTC).isoformat(timespec="seconds")
        return StatusAnswer(updated_at=stamp.replace("+00:00", "Z"))
