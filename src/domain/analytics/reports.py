"""What the analytics store answers when asked about the log (days are UTC days)."""

from __future__ import annotations

from datetime import date

import msgspec


class DayCount(msgspec.Struct, frozen=True):
    """Searches on one day, and how many of them found nothing."""

    day: date
    count: int
    no_results: int = 0


class DayUsers(msgspec.Struct, frozen=True):
    """Distinct user tokens (or pseudonyms) that searched on one day."""

    day: date
    users: int


class TopSearch(msgspec.Struct, frozen=True):
    """One normalised query, how often it was searched, its average number of hits
    (rounded half up to a whole number) and how many of its searches had refinements."""

    query: str
    count: int
    nb_hits: int
    with_filters: int


class DayPosition(msgspec.Struct, frozen=True):
    """Clicks at one position (1-based) of the results on one day."""

    day: date
    position: int
    clicks: int


class DayClicks(msgspec.Struct, frozen=True):
    """One day's searches made with ``clickAnalytics`` (tracked), how many of them got at
    least one click, and the clicks on them."""

    day: date
    tracked_searches: int
    clicked_searches: int
    clicks: int


class PopularQuery(msgspec.Struct, frozen=True):
    """One normalised query, how many times it was searched in a period, and the most
    hits one of those searches found."""

    query: str
    count: int
    nb_hits: int
