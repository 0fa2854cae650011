"""``analytics.backend: none``: nothing is kept, every report is empty."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import date

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch, SearchRecord
from searchport.domain.analytics.reports import (
    DayClicks,
    DayCount,
    DayPosition,
    DayUsers,
    FilterCombination,
    FilterCount,
    HitStats,
    PopularQuery,
    Revenue,
    SearchStats,
    TopSearch,
)
from searchport.domain.analytics.segments import EVERY_SEARCH, Segment


class NullAnalyticsStore:
    """``AnalyticsStore`` that keeps nothing."""

    def __init__(self) -> None:
        self._salt = secrets.token_bytes(32)  # never stored: pseudonyms of nothing kept

    async def open(self) -> None:
        return None

    async def day_salt(self, day: date) -> bytes:
        return self._salt

    def record_search(self, search: ObservedSearch) -> None:
        return None

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        return True

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        return None

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        return None

    async def purge(self, before: date) -> int:
        return 0

    async def searches_by_day(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayCount]:
        return []

    async def users(self, handle: str, start: date, end: date, *,
                    segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
        return 0, []

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False,
                           segment: Segment = EVERY_SEARCH) -> list[TopSearch]:
        return []

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        return []

    async def clicks_by_day(self, handle: str, start: date, end: date, *,
                            segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return []

    async def conversions_by_day(self, handle: str, start: date, end: date, *,
                                 segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        return []

    async def click_positions(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayPosition]:
        return []

    async def search_stats(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, segment: Segment = EVERY_SEARCH,
                           with_events: bool = False, order_by: str = "searchCount",
                           descending: bool = False) -> list[SearchStats]:
        return []

    async def query_revenue(self, handle: str, start: date, end: date,
                            queries: Sequence[str], *,
                            segment: Segment = EVERY_SEARCH) -> list[Revenue]:
        return []

    async def hit_stats(self, handle: str, start: date, end: date, *, limit: int,
                        offset: int = 0, segment: Segment = EVERY_SEARCH,
                        search: str | None = None,
                        with_events: bool = False) -> list[HitStats]:
        return []

    async def hit_revenue(self, handle: str, start: date, end: date, hits: Sequence[str], *,
                          segment: Segment = EVERY_SEARCH,
                          search: str | None = None) -> list[Revenue]:
        return []

    async def filter_counts(self, handle: str, start: date, end: date, *, limit: int,
                            offset: int = 0, segment: Segment = EVERY_SEARCH,
                            search: str | None = None,
                            attribute: str | None = None) -> list[FilterCount]:
        return []

    async def no_result_filters(self, handle: str, start: date, end: date, *, limit: int,
                                offset: int = 0, segment: Segment = EVERY_SEARCH,
                                search: str | None = None) -> list[FilterCombination]:
        return []

    async def last_update(self, handle: str) -> float | None:
        return None

    async def close(self) -> None:
        return None
