"""The answers of the Analytics API (v2) routes, in the shapes of Algolia's specification
(``specs/analytics`` in algolia/api-clients-automation): no field more or less."""

from __future__ import annotations

import msgspec


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class DailySearches(_Answer, frozen=True):
    date: str
    count: int


class SearchesCountAnswer(_Answer, frozen=True):
    """``GET /2/searches/count``: searches in the period, and per day (every day, 0 too)."""

    count: int
    dates: list[DailySearches]


class SearchNoResults(_Answer, frozen=True):
    search: str
    count: int
    with_filter_count: int


class SearchesNoResultsAnswer(_Answer, frozen=True):
    """``GET /2/searches/noResults``: the most frequent searches that found nothing."""

    searches: list[SearchNoResults]


class DailyClickThroughRate(_Answer, frozen=True):
    rate: float | None
    click_count: int
    tracked_search_count: int
    date: str


class ClickThroughRateAnswer(_Answer, frozen=True):
    """``GET /2/clicks/clickThroughRate``: tracked searches with at least one click divided
    by tracked searches (null without tracked searches), for the period and per day."""

    rate: float | None
    click_count: int
    tracked_search_count: int
    dates: list[DailyClickThroughRate]


class StatusAnswer(_Answer, frozen=True):
    """``GET /2/status``: when the handle's last search was logged (RFC 3339), or null."""

    updated_at: str | None


class DailyNoResultsRate(_Answer, frozen=True):
    date: str
    no_result_count: int
    count: int
    rate: float


class NoResultsRateAnswer(_Answer, frozen=True):
    """``GET /2/searches/noResultRate``: searches that found nothing divided by searches
    (0 when there were none: the specification's rate is never null)."""

    rate: float
    count: int
    no_result_count: int
    dates: list[DailyNoResultsRate]


class DailyUsers(_Answer, frozen=True):
    date: str
    count: int


class UsersCountAnswer(_Answer, frozen=True):
    """``GET /2/users/count``: distinct users (user tokens, or the day's pseudonyms of
    their addresses) over the period, and per day."""

    count: int
    dates: list[DailyUsers]


class DailyConversionRate(_Answer, frozen=True):
    rate: float | None
    tracked_search_count: int
    conversion_count: int
    date: str


class ConversionRateAnswer(_Answer, frozen=True):
    """``GET /2/conversions/conversionRate``: tracked searches with at least one conversion
    divided by tracked searches (null without tracked searches), for the period and per day."""

    rate: float | None
    tracked_search_count: int
    conversion_count: int
    dates: list[DailyConversionRate]


class DailyNoClickRate(_Answer, frozen=True):
    rate: float
    count: int
    no_click_count: int
    date: str


class NoClickRateAnswer(_Answer, frozen=True):
    """``GET /2/searches/noClickRate``: tracked searches without a click divided by tracked
    searches (0 when there were none: the specification's rate is never null)."""

    rate: float
    count: int
    no_click_count: int
    dates: list[DailyNoClickRate]


class DailyAverageClicks(_Answer, frozen=True):
    average: float | None
    click_count: int
    date: str


class AverageClickPositionAnswer(_Answer, frozen=True):
    """``GET /2/clicks/averageClickPosition``: the mean position (from 1) of the clicked
    results (null without clicks), for the period and per day."""

    average: float | None
    click_count: int
    dates: list[DailyAverageClicks]


class ClickPosition(_Answer, frozen=True):
    position: list[int]  # [start, end]; -1: to the end of the results
    click_count: int


class ClickPositionsAnswer(_Answer, frozen=True):
    """``GET /2/clicks/positions``: clicks at positions 1 to 10, 11 to 20, and 21 on."""

    positions: list[ClickPosition]


class SearchNoClicks(_Answer, frozen=True):
    search: str
    count: int
    nb_hits: int


class SearchesNoClicksAnswer(_Answer, frozen=True):
    """``GET /2/searches/noClicks``: the most frequent tracked searches no click followed."""

    searches: list[SearchNoClicks]
