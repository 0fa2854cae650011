"""NoClickRate: ``GET /2/searches/noClickRate``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import DailyNoClickRate, NoClickRateAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class NoClickRate(AnalyticsReading):
    """Tracked searches that got no click, divided by tracked searches: for the period, and
    for every day of it."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> NoClickRateAnswer:
        period = self.period(request, access)
        days = await self.clicks_per_day(period)
        dates = [DailyNoClickRate(
            rate=(d.tracked_searches - d.clicked_searches) / d.tracked_searches
            if d.tracked_searches else 0.0,
            count=d.tracked_searches, no_click_count=d.tracked_searches - d.clicked_searches,
            date=d.day.isoformat()) for d in days]
        tracked = sum(d.tracked_searches for d in days)
        none = tracked - sum(d.clicked_searches for d in days)
        return NoClickRateAnswer(rate=none / tracked if tracked else 0.0, count=tracked,
                                 no_click_count=none, dates=dates)
