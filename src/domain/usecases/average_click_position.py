"""AverageClickPosition: ``GET /2/clicks/averageClickPosition``."""

from __future__ import annotations

from collections import defaultdict

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import AverageClickPositionAnswer, DailyAverageClicks
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading, rate


class AverageClickPosition(AnalyticsReading):
    """The mean position of the clicks on one handle: for the period, and per day."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> AverageClickPositionAnswer:
        period = self.period(request, access)
        clicks: defaultdict[str, int] = defaultdict(int)
        total: defaultdict[str, int] = defaultdict(int)
        for found in await self._store.click_positions(period.handle, period.start,
                                                       period.end, segment=period.segment):
            day = found.day.isoformat()
            clicks[day] += found.clicks
            total[day] += found.position * found.clicks
        dates = [DailyAverageClicks(average=rate(total[d], clicks[d]), click_count=clicks[d],
                                    date=d) for d in (day.isoformat() for day in period.days())]
        count = sum(clicks.values())
        return AverageClickPositionAnswer(average=rate(sum(total.values()), count),
                                          click_count=count, dates=dates)
