"""The analytics store port: where the query log and the Insights events are kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol

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


class AnalyticsStore(Protocol):
    """The query log and the events. The requests hand their searches and events over
    without ever waiting: the store writes them later, or drops and counts them when it
    cannot keep up. Every other call raises only ``AnalyticsUnavailable``. Every read
    counts the searches of one handle on the days from ``start`` to ``end`` (both included)
    and, given a ``segment``, only those made with its ``analyticsTags``; the events that
    count are those naming these searches. Days without searches are left out, lists of
    days are in day order, rankings most first then by name."""

    async def open(self) -> None:
        """Create the tables (or check their version), then start writing what is recorded
        (also when the store cannot be used yet, which it raises: it tries again)."""

    def record_search(self, search: ObservedSearch) -> None:
        """Keep one search, to be written later."""

    def record_events(self, events: Sequence[InsightsEvent]) -> bool:
        """Keep a batch of events, all or none: False when there is no room for them."""

    async def day_salt(self, day: date) -> bytes:
        """The secret of one UTC day's pseudonyms, made on first use and shared by every
        process on the store (forgotten after the next day)."""

    async def write_searches(self, records: Sequence[SearchRecord]) -> None:
        """Write ``records`` now, in one transaction."""

    async def write_events(self, events: Sequence[InsightsEvent]) -> None:
        """Write ``events`` now, in one transaction."""

    async def purge(self, before: date) -> int:
        """Remove the searches and events of the days before ``before``; how many."""

    async def searches_by_day(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayCount]:
        """Searches per day, with those that found nothing."""

    async def users(self, handle: str, start: date, end: date, *,
                    segment: Segment = EVERY_SEARCH) -> tuple[int, list[DayUsers]]:
        """Distinct users over the whole period, and per day."""

    async def top_searches(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, no_results: bool = False,
                           no_clicks: bool = False,
                           segment: Segment = EVERY_SEARCH) -> list[TopSearch]:
        """The most searched queries; ``no_results``: only the searches that found nothing;
        ``no_clicks``: only the tracked searches (with a ``queryID``) no click names."""

    async def popular_queries(self, handle: str, start: date, end: date, *,
                              min_count: int, limit: int) -> list[PopularQuery]:
        """The queries (not the empty one) searched at least ``min_count`` times, with their
        average hits; at most ``limit``."""

    async def clicks_by_day(self, handle: str, start: date, end: date, *,
                            segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        """Per day with tracked searches (``queryID`` set): those searches, how many got a
        click event naming their ``queryID``, and those clicks."""

    async def conversions_by_day(self, handle: str, start: date, end: date, *,
                                 segment: Segment = EVERY_SEARCH) -> list[DayClicks]:
        """As ``clicks_by_day``, for conversion events: those naming a tracked search's
        ``queryID``, or (without one) naming it for one of their objects."""

    async def click_positions(self, handle: str, start: date, end: date, *,
                              segment: Segment = EVERY_SEARCH) -> list[DayPosition]:
        """The click events per day (their own) and position, in day then position order."""

    async def search_stats(self, handle: str, start: date, end: date, *, limit: int,
                           offset: int = 0, segment: Segment = EVERY_SEARCH,
                           with_events: bool = False, order_by: str = "searchCount",
                           descending: bool = False) -> list[SearchStats]:
        """The queries, ordered by ``order_by`` (Algolia's ``searchCount``, or
        ``clickThroughRate``, ``conversionRate``, ``averageClickPosition`` with
        ``with_events``), null figures last, then by query; with ``with_events``, what the
        events did to each query's tracked searches."""

    async def query_revenue(self, handle: str, start: date, end: date,
                            queries: Sequence[str], *,
                            segment: Segment = EVERY_SEARCH) -> list[Revenue]:
        """The revenue of the purchases after the tracked searches of ``queries``, per query
        and currency."""

    async def hit_stats(self, handle: str, start: date, end: date, *, limit: int,
                        offset: int = 0, segment: Segment = EVERY_SEARCH,
                        search: str | None = None,
                        with_events: bool = False) -> list[HitStats]:
        """The objectIDs the searches (of the query ``search``) returned most often; with
        ``with_events``, the tracked searches that returned each and the events naming it
        after them."""

    async def hit_revenue(self, handle: str, start: date, end: date, hits: Sequence[str], *,
                          segment: Segment = EVERY_SEARCH,
                          search: str | None = None) -> list[Revenue]:
        """The revenue of the purchases of ``hits`` after the tracked searches that returned
        them, per objectID and currency."""

    async def filter_counts(self, handle: str, start: date, end: date, *, limit: int,
                            offset: int = 0, segment: Segment = EVERY_SEARCH,
                            search: str | None = None,
                            attribute: str | None = None) -> list[FilterCount]:
        """The refinements applied, counted per attribute (or, given ``attribute``, per
        operator and value of it)."""

    async def no_result_filters(self, handle: str, start: date, end: date, *, limit: int,
                                offset: int = 0, segment: Segment = EVERY_SEARCH,
                                search: str | None = None) -> list[FilterCombination]:
        """The combinations of refinements of the searches that found nothing."""

    async def last_update(self, handle: str) -> float | None:
        """When the last search of ``handle`` was made (seconds since the Unix epoch)."""

    async def close(self) -> None:
        """Write what was recorded (within a deadline), then disconnect."""
