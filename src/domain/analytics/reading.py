"""What every Analytics API use case shares: the handle checked, the period read."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from searchport.domain.access import Access
from searchport.domain.analytics.answers import CurrencyRevenue
from searchport.domain.analytics.period import AnalyticsRequest, Period, read_period
from searchport.domain.analytics.records import utc_day
from searchport.domain.analytics.reports import DayClicks, Revenue
from searchport.domain.catalog import Catalog

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore


class AnalyticsReading:
    """A base for the report use cases: ``catalog`` (a handle must be configured),
    ``store`` (where the log is), ``clock`` (seconds since the Unix epoch: today in UTC)."""

    def __init__(self, *, catalog: Catalog, store: AnalyticsStore,
                 clock: Callable[[], float] = time.time) -> None:
        self._catalog = catalog
        self._store = store
        self._clock = clock

    def period(self, request: AnalyticsRequest, access: Access) -> Period:
        """The period asked for, on a handle whose analytics ``access`` may read (403 for a
        key that reads no analytics, 404 for a handle it cannot read or that is unknown)."""
        period = read_period(request, utc_day(self._clock()))
        access.analytics_entry(self._catalog, period.handle)
        return period

    async def clicks_per_day(self, period: Period) -> list[DayClicks]:
        """Every day of ``period`` with its tracked searches, clicked searches and clicks
        (zeros on a day without tracked searches), in day order."""
        found = {d.day: d for d in await self._store.clicks_by_day(
            period.handle, period.start, period.end, segment=period.segment)}
        return [found.get(day) or DayClicks(day, 0, 0, 0) for day in period.days()]


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, or None (the specification's null) when ``whole`` is 0."""
    return part / whole if whole else None


def currencies(found: Sequence[Revenue]) -> dict[str, dict[str, CurrencyRevenue]]:
    """Revenue per key (a query or an objectID), then per currency, as Algolia's
    ``currencies`` say it."""
    by_key: dict[str, dict[str, CurrencyRevenue]] = {}
    for one in found:
        by_key.setdefault(one.key, {})[one.currency] = CurrencyRevenue(
            currency=one.currency, revenue=round(one.revenue, 2))
    return by_key
