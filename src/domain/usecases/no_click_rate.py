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
        days = {d.day: d for d in await self._store.clicks_by_day(
            period.handle, period.start, period.end)}
        dates = []
        for day in period.days():
            found = days.get(day)
            tracked, clicked = (found.tracked_searches, found.clicked_searches) if found \
                else (0, 0)
            dates.append(DailyNoClickRate(
                rate=(tracked - clicked) / tracked if tracked else 0.0, count=tracked,
                no_click_count=tracked - clicked, date=day.isoformat()))
        tracked = sum(d.tracked_searches for d in days.values())
        none = tracked - sum(d.clicked_searches for d in days.values())
        return NoClickRateAnswer(rate=none / tracked if tracked else 0.0, count=tracked,
                                 no_click_count=none, dates=dates)
