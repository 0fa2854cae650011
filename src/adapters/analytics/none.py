"""``analytics.backend: none``: nothing is kept, every report is empty."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import date
from typing import Any

from searchport.domain.analytics.insights import InsightsEvent
from searchport.domain.analytics.records import ObservedSearch
from searchport.domain.analytics.reports import DayUsers


async def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


async def _no_rows(*args: Any, **kwargs: Any) -> list[Any]:
    return []


class NullAnalyticsStore:
    """``AnalyticsStore`` that keeps nothing."""

    open = write_searches = write_events = close = last_update = _nothing
    searches_by_day = top_searches = popular_queries = clicks_by_day = _no_rows
    conversions_by_day = click_positions = search_stats = query_revenue = _no_rows
    hit_stats = hit_revenue = filter_counts = no_result_filters = _no_rows

    def __init__(self) -> None:
        self._salt = secrets.token_bytes(32)  # never stored: pseudonyms of nothing kept

    async def day_salt(self, day: date) -> bytes:
        return self._salt

    def record_search(self, search: ObservedSearch) -> None:
        return None

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        return True

    async def purge(self, before: date) -> int:
        return 0

    async def users(self, *args: Any, **kwargs: Any) -> tuple[int, list[DayUsers]]:
        return 0, []
