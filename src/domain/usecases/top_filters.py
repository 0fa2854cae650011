"""TopFilterAttributes, TopFilterForAttribute, TopFiltersNoResults: ``GET /2/filters``,
``/2/filters/{attribute}`` and ``/2/filters/noResults``.

A refinement is what the query log keeps of a search's filters (``refinements.py``): an
attribute, an operator and a value. Each refinement of a search counts once.
"""

from __future__ import annotations

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import (
    FiltersNoResults,
    FilterValue,
    TopFilterAttribute,
    TopFilterAttributesAnswer,
    TopFilterForAttributeAnswer,
    TopFiltersNoResultsAnswer,
    TopFilterValue,
)
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading
from searchport.domain.analytics.records import normalise_query
from searchport.domain.errors import InvalidRequest


def _search(request: AnalyticsRequest) -> str | None:
    return None if request.search is None else normalise_query(request.search)


class TopFilterAttributes(AnalyticsReading):
    """The attributes the searches of one handle (of one query, given ``search``) refined
    most often, most first."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> TopFilterAttributesAnswer:
        period = self.period(request, access)
        found = await self._store.filter_counts(
            period.handle, period.start, period.end, limit=period.limit,
            offset=period.offset, segment=period.segment, search=_search(request))
        return TopFilterAttributesAnswer(attributes=[
            TopFilterAttribute(attribute=f.attribute, count=f.count) for f in found])


class TopFilterForAttribute(AnalyticsReading):
    """The values (with their operators) of one attribute that the searches refined most
    often, most first."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> TopFilterForAttributeAnswer:
        period = self.period(request, access)
        if not request.attribute:
            raise InvalidRequest("attribute is required: /2/filters/{attribute}")
        found = await self._store.filter_counts(
            period.handle, period.start, period.end, limit=period.limit,
            offset=period.offset, segment=period.segment, search=_search(request),
            attribute=request.attribute)
        return TopFilterForAttributeAnswer(values=[
            TopFilterValue(attribute=f.attribute, operator=f.operator, value=f.value,
                           count=f.count) for f in found])


class TopFiltersNoResults(AnalyticsReading):
    """The combinations of refinements of the searches that found nothing, most frequent
    first (searches without refinements are not counted)."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> TopFiltersNoResultsAnswer:
        period = self.period(request, access)
        found = await self._store.no_result_filters(
            period.handle, period.start, period.end, limit=period.limit,
            offset=period.offset, segment=period.segment, search=_search(request))
        return TopFiltersNoResultsAnswer(values=[
            FiltersNoResults(count=f.count, values=[
                FilterValue(attribute=a, operator=o, value=v) for a, o, v in f.refinements])
            for f in found])
