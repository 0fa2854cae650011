"""SearchesCount: ``GET /2/searches/count``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import DailySearches, SearchesCountAnswer
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class SearchesCount(AnalyticsReading):
    """Searches of one handle in a period, with every day's count (0 included)."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> SearchesCountAnswer:
        period = self.period(request, access)
        counts = {d.day: d.count for d in await self._store.searches_by_day(
            period.handle, period.start, period.end, segment=period.segment)}
        return SearchesCountAnswer(
            count=sum(counts.values()),
            dates=[DailySearches(date=day.isoformat(), count=counts.get(day, 0))
                   for day in period.days()],
        )
