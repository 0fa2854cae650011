"""What the analytics store answers when asked about the log (days are UTC days)."""

from __future__ import annotations

from datetime import date

import msgspec

# Algolia's twelve ranges of click positions: each of the first ten, then 11 to 20, then 21
# on (-1: no end)
CLICK_RANGES = (*((p, p) for p in range(1, 11)), (11, 20), (21, -1))


def click_range(position: int) -> int:
    """Which of ``CLICK_RANGES`` holds ``position`` (1-based), by its index."""
    return next(i for i, (low, high) in enumerate(CLICK_RANGES)
                if low <= position and (high == -1 or position <= high))


class DayCount(msgspec.Struct, frozen=True):
    day: date
    count: int
    no_results: int = 0


class DayUsers(msgspec.Struct, frozen=True):
    day: date
    users: int


class TopSearch(msgspec.Struct, frozen=True):
    """A query, its searches, their average hits (rounded half up) and how many had
    refinements (0 among the searches without clicks)."""

    query: str
    count: int
    nb_hits: int
    with_filters: int


class DayPosition(msgspec.Struct, frozen=True):
    day: date
    position: int
    clicks: int


class DayClicks(msgspec.Struct, frozen=True):
    """One day's tracked searches (with ``clickAnalytics``), those with at least one click
    (or conversion), and the clicks (conversions)."""

    day: date
    tracked_searches: int
    clicked_searches: int
    clicks: int


class EventCounts(msgspec.Struct, frozen=True, kw_only=True):
    """What the events did to a set of tracked searches: ``clicked``, ``converted``...:
    those with at least one such event; ``clicks``, ``conversions``...: the events;
    ``positions``: the clicked positions, summed over ``clicked_positions`` of them."""

    tracked: int = 0
    clicked: int = 0
    clicks: int = 0
    converted: int = 0
    conversions: int = 0
    carted: int = 0
    add_to_carts: int = 0
    purchased: int = 0
    purchases: int = 0
    positions: int = 0
    clicked_positions: int = 0
    ranges: tuple[int, ...] = ()  # clicks per range of positions (Algolia's twelve)


class SearchStats(msgspec.Struct, frozen=True, kw_only=True):
    query: str
    count: int
    nb_hits: int
    events: EventCounts = EventCounts()


class HitStats(msgspec.Struct, frozen=True, kw_only=True):
    hit: str
    count: int
    events: EventCounts = EventCounts()


class FilterCount(msgspec.Struct, frozen=True):
    """Refinements of an attribute (``operator`` and ``value`` empty), or of one value."""

    attribute: str
    operator: str
    value: str
    count: int


class FilterCombination(msgspec.Struct, frozen=True):
    refinements: tuple[tuple[str, str, str], ...]
    count: int


class Revenue(msgspec.Struct, frozen=True):
    """The revenue after the tracked searches of one key (a query or a hit), per currency."""

    key: str
    currency: str
    revenue: float


class PopularQuery(msgspec.Struct, frozen=True):
    query: str
    count: int
    nb_hits: int
