"""NoResultsRate: ``GET /2/searches/noResultRate``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import DailyNoResultsRate, NoResultsRateAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class NoResultsRate(AnalyticsReading):
    """Searches of one handle that found nothing, divided by its searches: for the period,
    and for every day of it."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> NoResultsRateAnswer:
        period = self.period(request, access)
        days = {d.day: d for d in await self._store.searches_by_day(
            period.handle, period.start, period.end, segment=period.segment)}
        dates = []
        for day in period.days():
            found = days.get(day)
            count, none = (found.count, found.no_results) if found else (0, 0)
            dates.append(DailyNoResultsRate(date=day.isoformat(), no_result_count=none,
                                            count=count, rate=none / count if count else 0.0))
        count = sum(d.count for d in days.values())
        none = sum(d.no_results for d in days.values())
        return NoResultsRateAnswer(rate=none / count if count else 0.0, count=count,
                                   no_result_count=none, dates=dates)
