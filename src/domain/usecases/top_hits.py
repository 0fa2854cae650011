"""TopHits: ``GET /2/hits``."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.answers import (
    TopHit,
    TopHitsAnswer,
    TopHitsWithAnalyticsAnswer,
    TopHitWithAnalytics,
    TopHitWithRevenue,
)
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.domain.analytics.reading import AnalyticsReading, currencies, rate
from searchport.domain.analytics.records import normalise_query


class TopHits(AnalyticsReading):
    """The objectIDs the searches of one handle (of one query, given ``search``) returned
    most often; with ``clickAnalytics``, the tracked searches that returned each (its
    ``trackedHitCount``), the clicks and conversions on it after them, and the rates: those
    tracked searches followed by a click (a conversion) on it, divided by them."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS
                       ) -> TopHitsAnswer | TopHitsWithAnalyticsAnswer:
        period = self.period(request, access)
        revenue = request.revenue_analytics
        with_events = request.click_analytics or revenue
        search = None if request.search is None else normalise_query(request.search)
        span = (period.handle, period.start, period.end)
        found = await self._store.hit_stats(
            *span, limit=period.limit, offset=period.offset, segment=period.segment,
            search=search, with_events=with_events)
        if not with_events:
            return TopHitsAnswer(hits=[TopHit(hit=h.hit, count=h.count) for h in found])
        money = currencies(await self._store.hit_revenue(
            *span, [h.hit for h in found], segment=period.segment, search=search)
            if revenue else [])
        hits: list[TopHitWithAnalytics] = []
        for h in found:
            e = h.events
            one = TopHitWithAnalytics(
                hit=h.hit, count=h.count, click_through_rate=rate(e.clicked, e.tracked),
                conversion_rate=rate(e.converted, e.tracked), tracked_hit_count=e.tracked,
                click_count=e.clicks, conversion_count=e.conversions)
            if revenue:
                hits.append(TopHitWithRevenue(
                    **msgspec.structs.asdict(one), currencies=money.get(h.hit, {}),
                    add_to_cart_rate=rate(e.carted, e.tracked),
                    add_to_cart_count=e.add_to_carts,
                    purchase_rate=rate(e.purchased, e.tracked), purchase_count=e.purchases))
            else:
                hits.append(one)
        return TopHitsWithAnalyticsAnswer(hits=hits)
