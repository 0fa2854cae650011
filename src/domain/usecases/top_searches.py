"""TopSearches: ``GET /2/searches``."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import (
    ClickPosition,
    TopSearch,
    TopSearchesAnswer,
    TopSearchesWithAnalyticsAnswer,
    TopSearchWithAnalytics,
    TopSearchWithRevenue,
)
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading, currencies, rate
from searchport.domain.analytics.reports import CLICK_RANGES
from searchport.domain.errors import InvalidRequest

ORDERS = ("searchCount", "clickThroughRate", "conversionRate", "averageClickPosition")
DIRECTIONS = ("asc", "desc")


def read_order(request: AnalyticsRequest, with_events: bool) -> tuple[str, bool]:
    """``orderBy`` and ``direction`` (the specification's defaults: ``searchCount``,
    ``asc``): whether descending."""
    order_by = request.order_by or "searchCount"
    if order_by not in ORDERS:
        raise InvalidRequest(f"orderBy must be one of {', '.join(ORDERS)}")
    if order_by != "searchCount" and not with_events:
        raise InvalidRequest("orderBy: only searchCount is available without "
                             "clickAnalytics=true")
    direction = request.direction or "asc"
    if direction not in DIRECTIONS:
        raise InvalidRequest("direction must be asc or desc")
    return order_by, direction == "desc"


def position_ranges(ranges: tuple[int, ...]) -> list[ClickPosition]:
    """Clicks at each position range of Algolia's (``CLICK_RANGES``)."""
    counts = list(ranges) or [0] * len(CLICK_RANGES)
    return [ClickPosition(position=[low, high], click_count=n)
            for (low, high), n in zip(CLICK_RANGES, counts, strict=True)]


class TopSearches(AnalyticsReading):
    """The queries of one handle in the period with their counts and average hits, and
    (``clickAnalytics``, ``revenueAnalytics``) what the events did to their tracked
    searches; ordered as ``orderBy`` and ``direction`` say."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS
                       ) -> TopSearchesAnswer | TopSearchesWithAnalyticsAnswer:
        period = self.period(request, access)
        revenue = request.revenue_analytics
        with_events = request.click_analytics or revenue
        order_by, descending = read_order(request, with_events)
        span = (period.handle, period.start, period.end)
        found = await self._store.search_stats(
            *span, limit=period.limit, offset=period.offset, segment=period.segment,
            with_events=with_events, order_by=order_by, descending=descending)
        if not with_events:
            return TopSearchesAnswer(searches=[
                TopSearch(search=s.query, count=s.count, nb_hits=s.nb_hits) for s in found])
        queries = [s.query for s in found]
        money = currencies(await self._store.query_revenue(*span, queries,
                                                           segment=period.segment)
                           if revenue else [])
        searches: list[TopSearchWithAnalytics] = []
        for s in found:
            e = s.events
            one = TopSearchWithAnalytics(
                search=s.query, count=s.count, nb_hits=s.nb_hits,
                click_through_rate=rate(e.clicked, e.tracked),
                average_click_position=rate(e.positions, e.clicked_positions),
                click_positions=position_ranges(e.ranges),
                conversion_rate=rate(e.converted, e.tracked),
                tracked_search_count=e.tracked, click_count=e.clicks,
                conversion_count=e.conversions)
            if revenue:
                searches.append(TopSearchWithRevenue(
                    **msgspec.structs.asdict(one), currencies=money.get(s.query, {}),
                    add_to_cart_rate=rate(e.carted, e.tracked),
                    add_to_cart_count=e.add_to_carts,
                    purchase_rate=rate(e.purchased, e.tracked), purchase_count=e.purchases))
            else:
                searches.append(one)
        return TopSearchesWithAnalyticsAnswer(searches=searches)
