"""SearchesNoClicks: ``GET /2/searches/noClicks``."""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import SearchesNoClicksAnswer, SearchNoClicks
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading


class SearchesNoClicks(AnalyticsReading):
    """The most frequent tracked searches of one handle that got no click, most first, with
    their average number of hits."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> SearchesNoClicksAnswer:
        period = self.period(request, access)
        found = await self._store.top_searches(period.handle, period.start, period.end,
                                               limit=period.limit, offset=period.offset,
                                               no_clicks=True,
                                               segment=period.segment)
        return SearchesNoClicksAnswer(searches=[
            SearchNoClicks(search=t.query, count=t.count, nb_hits=t.nb_hits) for t in found])
