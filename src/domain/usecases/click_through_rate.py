"""ClickThroughRate: ``GET /2/clicks/clickThroughRate``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import ClickThroughRateAnswer, DailyClickThroughRate
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading, rate


class ClickThroughRate(AnalyticsReading):
    """Tracked searches (made with ``clickAnalytics``) with at least one click, divided by
    tracked searches: for the period, and for every day of it."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> ClickThroughRateAnswer:
        period = self.period(request, access)
        days = await self.clicks_per_day(period)
        dates = [DailyClickThroughRate(rate=rate(d.clicked_searches, d.tracked_searches),
                                       click_count=d.clicks,
                                       tracked_search_count=d.tracked_searches,
                                       date=d.day.isoformat()) for d in days]
        tracked = sum(d.tracked_searches for d in days)
        clicked = sum(d.clicked_searches for d in days)
        return ClickThroughRateAnswer(
            rate=rate(clicked, tracked), click_count=sum(d.clicks for d in days),
            tracked_search_count=tracked, dates=dates)
