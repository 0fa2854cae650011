"""The Analytics API (``GET /2/...``) and Insights API (``POST /1/events``) use cases.

Each report reads the period on a handle the key may read, asks the store, and answers in
the shape of Algolia's specification (``answers.py``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics import answers as a
from searchport.domain.analytics.insights import read_events
from searchport.domain.analytics.period import AnalyticsRequest, Period, read_period
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import normalise_query, utc_day
from searchport.domain.analytics.reports import (
    CLICK_RANGES,
    DayClicks,
    DayCount,
    EventCounts,
    Revenue,
    click_range,
)
from searchport.domain.catalog import Catalog
from searchport.domain.errors import AnalyticsUnavailable, InvalidRequest

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore

Day = TypeVar("Day", DayCount, DayClicks)
A = TypeVar("A")
ORDERS = ("searchCount", "clickThroughRate", "conversionRate", "averageClickPosition")
DIRECTIONS = ("asc", "desc")


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, or None (the specification's null) when ``whole`` is 0."""
    return part / whole if whole else None


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def currencies(found: Sequence[Revenue]) -> dict[str, dict[str, a.CurrencyRevenue]]:
    """Revenue per key (a query or an objectID), then per currency."""
    by_key: dict[str, dict[str, a.CurrencyRevenue]] = {}
    for one in found:
        by_key.setdefault(one.key, {})[one.currency] = a.CurrencyRevenue(
            currency=one.currency, revenue=round(one.revenue, 2))
    return by_key


def position_ranges(ranges: Sequence[int]) -> list[a.ClickPosition]:
    """Clicks at each of Algolia's position ranges (``CLICK_RANGES``)."""
    counts = list(ranges) or [0] * len(CLICK_RANGES)
    return [a.ClickPosition(position=[low, high], click_count=n)
            for (low, high), n in zip(CLICK_RANGES, counts, strict=True)]


def _revenue(e: EventCounts, money: dict[str, a.CurrencyRevenue]) -> dict[str, Any]:
    """The fields ``revenueAnalytics`` adds to a query's or an object's figures."""
    return {"currencies": money, "add_to_cart_rate": rate(e.carted, e.tracked),
            "add_to_cart_count": e.add_to_carts, "purchase_rate": rate(e.purchased, e.tracked),
            "purchase_count": e.purchases}


def _search(request: AnalyticsRequest) -> str | None:
    return None if request.search is None else normalise_query(request.search)


def _page(p: Period) -> dict[str, Any]:
    return {"limit": p.limit, "offset": p.offset, "segment": p.segment}


def _no_searches(day: date) -> DayCount:
    return DayCount(day, 0)


def _no_clicks(day: date) -> DayClicks:
    return DayClicks(day, 0, 0, 0)


class AnalyticsReading(Generic[A]):
    """A report use case over ``catalog`` (a handle must be configured), ``store`` (where the
    log is) and ``clock`` (seconds since the Unix epoch: today in UTC)."""

    def __init__(self, *, catalog: Catalog, store: AnalyticsStore,
                 clock: Callable[[], float] = time.time) -> None:
        self._catalog = catalog
        self._store = store
        self._clock = clock

    async def __call__(self, request: AnalyticsRequest, access: Access = FULL_ACCESS) -> A:
        """The answer for the period asked for, on a handle whose analytics ``access`` may
        read (403 for a key that reads no analytics, 404 for a handle it cannot read)."""
        period = read_period(request, utc_day(self._clock()))
        access.analytics_entry(self._catalog, period.handle)
        return await self.answer(period, request)

    async def answer(self, p: Period, request: AnalyticsRequest) -> A:
        raise NotImplementedError

    @staticmethod
    async def by_day(p: Period, read: Callable[..., Awaitable[Sequence[Day]]],
                     empty: Callable[[date], Day], answer: Callable[..., A],
                     daily: Callable[..., Any], figures: Callable[..., dict[str, Any]]) -> A:
        """A report of the period and of each of its days: ``figures`` of the store's
        counts per day (``read``: the fields after ``day``; ``empty(day)`` for a day it left
        out), and of their sums."""
        found = {r.day: r for r in await read(p.handle, p.start, p.end, segment=p.segment)}
        days = [found.get(day) or empty(day) for day in p.days()]
        counts = [msgspec.structs.astuple(d)[1:] for d in days]
        return answer(**figures(*map(sum, zip(*counts, strict=True))), dates=[
            daily(date=d.day.isoformat(), **figures(*c))
            for d, c in zip(days, counts, strict=True)])


class SearchesCount(AnalyticsReading[a.SearchesCountAnswer]):
    """``GET /2/searches/count``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.SearchesCountAnswer:
        return await self.by_day(p, self._store.searches_by_day, _no_searches,
                                 a.SearchesCountAnswer, a.DailySearches,
                                 lambda count, _: {"count": count})


class NoResultsRate(AnalyticsReading[a.NoResultsRateAnswer]):
    """``GET /2/searches/noResultRate``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.NoResultsRateAnswer:
        return await self.by_day(
            p, self._store.searches_by_day, _no_searches, a.NoResultsRateAnswer,
            a.DailyNoResultsRate, lambda count, none: {
                "rate": _share(none, count), "count": count, "no_result_count": none})


class ClickThroughRate(AnalyticsReading[a.ClickThroughRateAnswer]):
    """``GET /2/clicks/clickThroughRate``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.ClickThroughRateAnswer:
        return await self.by_day(
            p, self._store.clicks_by_day, _no_clicks, a.ClickThroughRateAnswer,
            a.DailyClickThroughRate, lambda tracked, clicked, n: {
                "rate": rate(clicked, tracked), "click_count": n,
                "tracked_search_count": tracked})


class ConversionRate(AnalyticsReading[a.ConversionRateAnswer]):
    """``GET /2/conversions/conversionRate``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.ConversionRateAnswer:
        return await self.by_day(
            p, self._store.conversions_by_day, _no_clicks, a.ConversionRateAnswer,
            a.DailyConversionRate, lambda tracked, converted, n: {
                "rate": rate(converted, tracked), "tracked_search_count": tracked,
                "conversion_count": n})


class NoClickRate(AnalyticsReading[a.NoClickRateAnswer]):
    """``GET /2/searches/noClickRate``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.NoClickRateAnswer:
        return await self.by_day(
            p, self._store.clicks_by_day, _no_clicks, a.NoClickRateAnswer, a.DailyNoClickRate,
            lambda tracked, clicked, _: {"rate": _share(tracked - clicked, tracked),
                                         "count": tracked, "no_click_count": tracked - clicked})


class AverageClickPosition(AnalyticsReading[a.AverageClickPositionAnswer]):
    """``GET /2/clicks/averageClickPosition``."""

    async def answer(self, p: Period, request: AnalyticsRequest
                     ) -> a.AverageClickPositionAnswer:
        clicks: defaultdict[date, int] = defaultdict(int)
        total: defaultdict[date, int] = defaultdict(int)
        for found in await self._store.click_positions(p.handle, p.start, p.end,
                                                       segment=p.segment):
            clicks[found.day] += found.clicks
            total[found.day] += found.position * found.clicks
        count = sum(clicks.values())
        return a.AverageClickPositionAnswer(
            average=rate(sum(total.values()), count), click_count=count, dates=[
                a.DailyAverageClicks(average=rate(total[d], clicks[d]), click_count=clicks[d],
                                     date=d.isoformat()) for d in p.days()])


class ClickPositions(AnalyticsReading[a.ClickPositionsAnswer]):
    """``GET /2/clicks/positions``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.ClickPositionsAnswer:
        counts = [0] * len(CLICK_RANGES)
        for found in await self._store.click_positions(p.handle, p.start, p.end,
                                                       segment=p.segment):
            counts[click_range(found.position)] += found.clicks
        return a.ClickPositionsAnswer(positions=position_ranges(counts))


class UsersCount(AnalyticsReading[a.UsersCountAnswer]):
    """``GET /2/users/count``: a user counted once however many days they searched."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.UsersCountAnswer:
        total, days = await self._store.users(p.handle, p.start, p.end, segment=p.segment)
        per_day = {d.day: d.users for d in days}
        return a.UsersCountAnswer(count=total, dates=[
            a.DailyUsers(date=day.isoformat(), count=per_day.get(day, 0)) for day in p.days()])


class SearchesNoResults(AnalyticsReading[a.SearchesNoResultsAnswer]):
    """``GET /2/searches/noResults``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.SearchesNoResultsAnswer:
        found = await self._store.top_searches(p.handle, p.start, p.end, **_page(p),
                                               no_results=True)
        return a.SearchesNoResultsAnswer(searches=[
            a.SearchNoResults(search=t.query, count=t.count, with_filter_count=t.with_filters)
            for t in found])


class SearchesNoClicks(AnalyticsReading[a.SearchesNoClicksAnswer]):
    """``GET /2/searches/noClicks``."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> a.SearchesNoClicksAnswer:
        found = await self._store.top_searches(p.handle, p.start, p.end, **_page(p),
                                               no_clicks=True)
        return a.SearchesNoClicksAnswer(searches=[
            a.SearchNoClicks(search=t.query, count=t.count, nb_hits=t.nb_hits) for t in found])


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


Searches = a.TopSearchesAnswer | a.TopSearchesWithAnalyticsAnswer


class TopSearches(AnalyticsReading[Searches]):
    """``GET /2/searches``, ordered as ``orderBy`` and ``direction`` say."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> Searches:
        revenue = request.revenue_analytics
        with_events = request.click_analytics or revenue
        order_by, descending = read_order(request, with_events)
        found = await self._store.search_stats(
            p.handle, p.start, p.end, **_page(p), with_events=with_events, order_by=order_by,
            descending=descending)
        if not with_events:
            return a.TopSearchesAnswer(searches=[
                a.TopSearch(search=s.query, count=s.count, nb_hits=s.nb_hits) for s in found])
        money = currencies(await self._store.query_revenue(
            p.handle, p.start, p.end, [s.query for s in found], segment=p.segment)
            if revenue else [])
        searches: list[a.TopSearchWithAnalytics] = []
        for s in found:
            e = s.events
            one = a.TopSearchWithAnalytics(
                search=s.query, count=s.count, nb_hits=s.nb_hits,
                click_through_rate=rate(e.clicked, e.tracked),
                average_click_position=rate(e.positions, e.clicked_positions),
                click_positions=position_ranges(e.ranges),
                conversion_rate=rate(e.converted, e.tracked),
                tracked_search_count=e.tracked, click_count=e.clicks,
                conversion_count=e.conversions)
            searches.append(a.TopSearchWithRevenue(
                **msgspec.structs.asdict(one), **_revenue(e, money.get(s.query, {})))
                if revenue else one)
        return a.TopSearchesWithAnalyticsAnswer(searches=searches)


Hits = a.TopHitsAnswer | a.TopHitsWithAnalyticsAnswer


class TopHits(AnalyticsReading[Hits]):
    """``GET /2/hits`` (of one query, given ``search``): with ``clickAnalytics``, the
    tracked searches that returned each object (its ``trackedHitCount``), the clicks and
    conversions on it after them, and those of the searches followed by one, divided by
    them (the rates)."""

    async def answer(self, p: Period, request: AnalyticsRequest) -> Hits:
        revenue = request.revenue_analytics
        with_events = request.click_analytics or revenue
        search = _search(request)
        found = await self._store.hit_stats(p.handle, p.start, p.end, **_page(p),
                                            search=search, with_events=with_events)
        if not with_events:
            return a.TopHitsAnswer(hits=[a.TopHit(hit=h.hit, count=h.count) for h in found])
        money = currencies(await self._store.hit_revenue(
            p.handle, p.start, p.end, [h.hit for h in found], segment=p.segment,
            search=search) if revenue else [])
        hits: list[a.TopHitWithAnalytics] = []
        for h in found:
            e = h.events
            one = a.TopHitWithAnalytics(
                hit=h.hit, count=h.count, click_through_rate=rate(e.clicked, e.tracked),
                conversion_rate=rate(e.converted, e.tracked), tracked_hit_count=e.tracked,
                click_count=e.clicks, conversion_count=e.conversions)
            hits.append(a.TopHitWithRevenue(**msgspec.structs.asdict(one),
                                            **_revenue(e, money.get(h.hit, {})))
                        if revenue else one)
        return a.TopHitsWithAnalyticsAnswer(hits=hits)


# the filters reports count the refinements the log keeps (``refinements.py``: an attribute,
# an operator and a value), each once per search
class TopFilterAttributes(AnalyticsReading[a.TopFilterAttributesAnswer]):
    """``GET /2/filters``."""

    async def answer(self, p: Period, request: AnalyticsRequest
                     ) -> a.TopFilterAttributesAnswer:
        found = await self._store.filter_counts(p.handle, p.start, p.end, **_page(p),
                                                search=_search(request))
        return a.TopFilterAttributesAnswer(attributes=[
            a.TopFilterAttribute(attribute=f.attribute, count=f.count) for f in found])


class TopFilterForAttribute(AnalyticsReading[a.TopFilterForAttributeAnswer]):
    """``GET /2/filters/{attribute}``."""

    async def answer(self, p: Period, request: AnalyticsRequest
                     ) -> a.TopFilterForAttributeAnswer:
        if not request.attribute:
            raise InvalidRequest("attribute is required: /2/filters/{attribute}")
        found = await self._store.filter_counts(p.handle, p.start, p.end, **_page(p),
                                                search=_search(request),
                                                attribute=request.attribute)
        return a.TopFilterForAttributeAnswer(values=[
            a.TopFilterValue(attribute=f.attribute, operator=f.operator, value=f.value,
                             count=f.count) for f in found])


class TopFiltersNoResults(AnalyticsReading[a.TopFiltersNoResultsAnswer]):
    """``GET /2/filters/noResults`` (searches without refinements are not counted)."""

    async def answer(self, p: Period, request: AnalyticsRequest
                     ) -> a.TopFiltersNoResultsAnswer:
        found = await self._store.no_result_filters(p.handle, p.start, p.end, **_page(p),
                                                    search=_search(request))
        return a.TopFiltersNoResultsAnswer(values=[
            a.FiltersNoResults(count=f.count, values=[
                a.FilterValue(attribute=at, operator=o, value=v) for at, o, v in f.refinements])
            for f in found])


class AnalyticsStatus(AnalyticsReading[a.StatusAnswer]):
    """``GET /2/status`` (null before the first search): no period to read."""

    async def __call__(self, request: AnalyticsRequest,
                       access: Access = FULL_ACCESS) -> a.StatusAnswer:
        if not request.index:
            raise InvalidRequest("index is required: the handle whose analytics to read")
        access.analytics_entry(self._catalog, request.index)
        last = await self._store.last_update(request.index)
        if last is None:
            return a.StatusAnswer(updated_at=None)
        stamp = datetime.fromtimestamp(last, UTC).isoformat(timespec="seconds")
        return a.StatusAnswer(updated_at=stamp.replace("+00:00", "Z"))


class SendEvents:
    """``POST /1/events``: a batch of Insights events for the log, all or none: each
    event's handle must be a configured handle the key may read."""

    def __init__(self, *, catalog: Catalog, recorder: AnalyticsRecorder,
                 clock: Callable[[], float] = time.time) -> None:
        self._catalog = catalog
        self._recorder = recorder
        self._clock = clock

    async def __call__(self, body: bytes, access: Access = FULL_ACCESS) -> int:
        """How many events were kept (``instantsearch`` usage events are not)."""

        def may_send(handle: str) -> bool:
            return handle in self._catalog and access.allows(handle)

        events = read_events(body, self._clock(), may_send)
        if not self._recorder.record_events(events):
            raise AnalyticsUnavailable("The analytics buffer is full: send the events again "
                                       "in a moment")
        return len(events)
