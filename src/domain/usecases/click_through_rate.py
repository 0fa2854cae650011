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
        days = {d.day: d for d in await self._store.clicks_by_day(
            period.handle, period.start, period.end)}
        dates = []
        for day in period.days():
            found = days.get(day)
            tracked, clicked, clicks = ((found.tracked_searches, found.clicked_searches,
                                         found.clicks) if found else (0, 0, 0))
            dates.append(DailyClickThroughRate(rate=rate(clicked, tracked), click_count=clicks,
                                               tracked_search_count=tracked,
                                               date=day.isoformat()))
        tracked = sum(d.tracked_searches for d in days.values())
        clicked = sum(d.clicked_searches for d in days.values())
        return ClickThroughRateAnswer(
            rate=rate(clicked, tracked), click_count=sum(d.clicks for d in days.values()),
            tracked_search_count=tracked, dates=dates)
