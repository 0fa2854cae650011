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
    (rounded half up to a whole number) and how many of its searches had refinements (not
    counted among the searches without clicks: 0 there)."""

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


class EventCounts(msgspec.Struct, frozen=True, kw_only=True):
    """What the events did to a set of tracked searches (made with ``clickAnalytics``):
    ``tracked`` searches; ``clicked``/``converted``/``carted``/``purchased``: those that
    got at least one click / conversion / add-to-cart / purchase; the events themselves;
    ``positions``: the clicked positions, summed over ``clicked_positions`` of them;
    ``ranges``: the clicks at each of Algolia's ranges of positions (1 to 10 each, 11 to 20,
    21 on)."""

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
    """One normalised query: how often it was searched, its average number of hits
    (rounded half up), and (asked with events) what the events did to its tracked searches."""

    query: str
    count: int
    nb_hits: int
    events: EventCounts = EventCounts()


class HitStats(msgspec.Struct, frozen=True, kw_only=True):
    """One ``objectID``: how many searches returned it, and (asked with events) the tracked
    searches that returned it and the events naming it after them."""

    hit: str
    count: int
    events: EventCounts = EventCounts()


class FilterCount(msgspec.Struct, frozen=True):
    """How many refinements of an attribute (``operator`` and ``value`` empty when counted
    per attribute), or of one attribute value, the searches applied."""

    attribute: str
    operator: str
    value: str
    count: int


class FilterCombination(msgspec.Struct, frozen=True):
    """The refinements of searches that found nothing, as one combination, and how many
    such searches applied exactly it."""

    refinements: tuple[tuple[str, str, str], ...]
    count: int


class Revenue(msgspec.Struct, frozen=True):
    """The revenue of purchases after the tracked searches of one key (a query or a hit),
    in one currency."""

    key: str
    currency: str
    revenue: float


class PopularQuery(msgspec.Struct, frozen=True):
    """One normalised query, how many times it was searched in a period, and its average
    number of hits (rounded half up to a whole number)."""

    query: str
    count: int
    nb_hits: int
