"""ConversionRate: ``GET /2/conversions/conversionRate``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import ConversionRateAnswer, DailyConversionRate
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading, rate


class ConversionRate(AnalyticsReading):
    """Tracked searches with at least one conversion event naming them, divided by tracked
    searches: for the period, and for every day of it."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> ConversionRateAnswer:
        period = self.period(request, access)
        days = {d.day: d for d in await self._store.conversions_by_day(
            period.handle, period.start, period.end, segment=period.segment)}
        dates = []
        for day in period.days():
            found = days.get(day)
            tracked, converted, conversions = ((found.tracked_searches, found.clicked_searches,
                                                found.clicks) if found else (0, 0, 0))
            dates.append(DailyConversionRate(
                rate=rate(converted, tracked), tracked_search_count=tracked,
                conversion_count=conversions, date=day.isoformat()))
        tracked = sum(d.tracked_searches for d in days.values())
        converted = sum(d.clicked_searches for d in days.values())
        return ConversionRateAnswer(
            rate=rate(converted, tracked), tracked_search_count=tracked,
            conversion_count=sum(d.clicks for d in days.values()), dates=dates)
