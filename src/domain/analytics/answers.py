"""The answers of the Analytics API (v2) routes, in the shapes of Algolia's specification
(``specs/analytics`` in algolia/api-clients-automation): no field more or less. Rates are
null without searches to divide by, but for the no-result and no-click rates (0 then)."""

from __future__ import annotations

import msgspec


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class DailySearches(_Answer, frozen=True):
    date: str
    count: int


class SearchesCountAnswer(_Answer, frozen=True):
    count: int
    dates: list[DailySearches]


class SearchNoResults(_Answer, frozen=True):
    search: str
    count: int
    with_filter_count: int


class SearchesNoResultsAnswer(_Answer, frozen=True):
    searches: list[SearchNoResults]


class DailyClickThroughRate(_Answer, frozen=True):
    rate: float | None
    click_count: int
    tracked_search_count: int
    date: str


class ClickThroughRateAnswer(_Answer, frozen=True):
    rate: float | None
    click_count: int
    tracked_search_count: int
    dates: list[DailyClickThroughRate]


class StatusAnswer(_Answer, frozen=True):
    updated_at: str | None


class DailyNoResultsRate(_Answer, frozen=True):
    date: str
    no_result_count: int
    count: int
    rate: float


class NoResultsRateAnswer(_Answer, frozen=True):
    rate: float
    count: int
    no_result_count: int
    dates: list[DailyNoResultsRate]


class DailyUsers(_Answer, frozen=True):
    date: str
    count: int


class UsersCountAnswer(_Answer, frozen=True):
    count: int
    dates: list[DailyUsers]


class DailyConversionRate(_Answer, frozen=True):
    rate: float | None
    tracked_search_count: int
    conversion_count: int
    date: str


class ConversionRateAnswer(_Answer, frozen=True):
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
    rate: float
    count: int
    no_click_count: int
    dates: list[DailyNoClickRate]


class DailyAverageClicks(_Answer, frozen=True):
    average: float | None
    click_count: int
    date: str


class AverageClickPositionAnswer(_Answer, frozen=True):
    average: float | None
    click_count: int
    dates: list[DailyAverageClicks]


class ClickPosition(_Answer, frozen=True):
    position: list[int]  # [start, end]; -1: to the end of the results
    click_count: int


class ClickPositionsAnswer(_Answer, frozen=True):
    positions: list[ClickPosition]


class SearchNoClicks(_Answer, frozen=True):
    search: str
    count: int
    nb_hits: int


class SearchesNoClicksAnswer(_Answer, frozen=True):
    searches: list[SearchNoClicks]


class CurrencyRevenue(_Answer, frozen=True):
    currency: str
    revenue: float


class TopSearch(_Answer, frozen=True):
    search: str
    count: int
    nb_hits: int


class TopSearchWithAnalytics(_Answer, frozen=True):
    search: str
    count: int
    click_through_rate: float | None
    average_click_position: float | None
    click_positions: list[ClickPosition]
    conversion_rate: float | None
    tracked_search_count: int
    click_count: int
    conversion_count: int
    nb_hits: int


class TopSearchWithRevenue(TopSearchWithAnalytics, frozen=True):
    currencies: dict[str, CurrencyRevenue]
    add_to_cart_rate: float | None
    add_to_cart_count: int
    purchase_rate: float | None
    purchase_count: int


class TopSearchesAnswer(_Answer, frozen=True):
    searches: list[TopSearch]


class TopSearchesWithAnalyticsAnswer(_Answer, frozen=True):
    searches: list[TopSearchWithAnalytics]


class TopHit(_Answer, frozen=True):
    hit: str
    count: int


class TopHitWithAnalytics(_Answer, frozen=True):
    hit: str
    count: int
    click_through_rate: float | None
    conversion_rate: float | None
    tracked_hit_count: int
    click_count: int
    conversion_count: int


class TopHitWithRevenue(TopHitWithAnalytics, frozen=True):
    add_to_cart_rate: float | None
    add_to_cart_count: int
    purchase_rate: float | None
    purchase_count: int
    currencies: dict[str, CurrencyRevenue]


class TopHitsAnswer(_Answer, frozen=True):
    hits: list[TopHit]


class TopHitsWithAnalyticsAnswer(_Answer, frozen=True):
    hits: list[TopHitWithAnalytics]


class TopFilterAttribute(_Answer, frozen=True):
    attribute: str
    count: int


class TopFilterAttributesAnswer(_Answer, frozen=True):
    attributes: list[TopFilterAttribute]


class TopFilterValue(_Answer, frozen=True):
    attribute: str
    operator: str
    value: str
    count: int


class TopFilterForAttributeAnswer(_Answer, frozen=True):
    values: list[TopFilterValue]


class FilterValue(_Answer, frozen=True):
    attribute: str
    operator: str
    value: str


class FiltersNoResults(_Answer, frozen=True):
    count: int
    values: list[FilterValue]


class TopFiltersNoResultsAnswer(_Answer, frozen=True):
    values: list[FiltersNoResults]
