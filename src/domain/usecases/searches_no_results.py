"""SearchesNoResults: ``GET /2/searches/noResults``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import SearchesNoResultsAnswer, SearchNoResults
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class SearchesNoResults(AnalyticsReading):
    """The most frequent searches of one handle that found nothing, most first."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> SearchesNoResultsAnswer:
        period = self.period(request, access)
        found = await self._store.top_searches(period.handle, period.start, period.end,
                                               limit=period.limit, offset=period.offset,
                                               no_results=True,
                                               segment=period.segment)
        return SearchesNoResultsAnswer(searches=[
            SearchNoResults(search=t.query, count=t.count, with_filter_count=t.with_filters)
            for t in found])
