"""ClickPositions: ``GET /2/clicks/positions``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import ClickPosition, ClickPositionsAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading

# Algolia's twelve ranges: each of the first ten positions, then 11 to 20, then 21 on
RANGES = [(p, p) for p in range(1, 11)] + [(11, 20), (21, -1)]


class ClickPositions(AnalyticsReading):
    """The clicks on one handle in the period, by position range."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> ClickPositionsAnswer:
        period = self.period(request, access)
        counts = [0] * len(RANGES)
        for found in await self._store.click_positions(period.handle, period.start,
                                                       period.end, segment=period.segment):
            at = next(i for i, (low, high) in enumerate(RANGES)
                      if low <= found.position and (high == -1 or found.position <= high))
            counts[at] += found.clicks
        return ClickPositionsAnswer(positions=[
            ClickPosition(position=[low, high], click_count=n)
            for (low, high), n in zip(RANGES, counts, strict=True)])
