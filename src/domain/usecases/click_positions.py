"""ClickPositions: ``GET /2/clicks/positions``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import ClickPosition, ClickPositionsAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading
from searchport.domain.analytics.reports import CLICK_RANGES, click_range


class ClickPositions(AnalyticsReading):
    """The clicks on one handle in the period, by position range."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> ClickPositionsAnswer:
        period = self.period(request, access)
        counts = [0] * len(CLICK_RANGES)
        for found in await self._store.click_positions(period.handle, period.start,
                                                       period.end, segment=period.segment):
            counts[click_range(found.position)] += found.clicks
        return ClickPositionsAnswer(positions=[
            ClickPosition(position=[low, high], click_count=n)
            for (low, high), n in zip(CLICK_RANGES, counts, strict=True)])
