"""From the parameters of ``GET /:handle/search`` to a validated ``SearchQuery``."""

from __future__ import annotations

import msgspec

from searchport.domain.analytics.records import DEFAULT_TRACKING, Tracking
from searchport.domain.catalog import IndexEntry
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.params import (
    clamp,
    decode_json,
    parse_boosts,
    parse_filters,
    parse_flag,
    parse_geo_grid,
    parse_histogram,
    parse_list,
    parse_sort,
)
from searchport.domain.query import HistogramSpec, SearchQuery
from searchport.domain.rules.search import RuleAsk
from searchport.domain.semantic import semantic_share

MAX_PER_PAGE = 100
FACET_BUCKETS = 100


class SearchRequest(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /:handle/search`` as it arrived: JSON parameters still text."""

    handle: str
    q: str = ""
    page: int | None = None
    per_page: int | None = None
    sort: str | None = None
    facets: str | None = None
    filters: str | None = None
    highlight: str | None = None
    fields: str | None = None
    suggest: str | None = None
    boosts: str | None = None
    histogram: str | None = None
    geo_grid: str | None = None
    tracking: Tracking = DEFAULT_TRACKING  # analytics, clickAnalytics, analyticsTags, userToken
    rule_contexts: str | None = None  # comma-separated
    enable_rules: str | None = None
    semantic: float | None = None  # the share of meaning (0..1); None: the handle's ratio


def rule_ask(req: SearchRequest, page: int, per_page: int) -> RuleAsk:
    """What the request asks of the handle's rules (``page`` 1-based)."""
    contexts = frozenset(c.strip() for c in (req.rule_contexts or "").split(",") if c.strip())
    enabled = parse_flag("enableRules", req.enable_rules) is not False
    return RuleAsk(enabled=enabled, contexts=contexts, page=page - 1, per_page=per_page)


def last_page(per_page: int, window: int) -> int:
    """The last page whose every hit lies within the handle's result window."""
    return window // per_page


def page_count(total: int, per_page: int, window: int) -> int:
    """The pages of ``total`` hits that can be fetched: never past ``last_page``."""
    return min(-(-total // per_page), last_page(per_page, window))


def check_page_window(page: int, per_page: int, window: int) -> None:
    last = last_page(per_page, window)
    if last == 0:
        raise InvalidRequest(f"perPage must not exceed {window:,} (the handle's result window)")
    if page > last:
        raise InvalidRequest(
            f"page {page} is past the last page, {last}: with perPage {per_page}, only the "
            f"first {window:,} results can be fetched (the handle's result window)"
        )


def _highlight(entry: IndexEntry, text: str | None) -> tuple[bool, tuple[str, ...]]:
    if text is None:
        default = entry.config.defaults.highlight
        if isinstance(default, list):
            return bool(default), entry.fields.real_all(default)
        return default, ()
    flag = text.strip().lower()
    if flag in ("true", "1", "*"):
        return True, ()
    if flag in ("false", "0", ""):
        return False, ()
    return True, entry.fields.real_all(parse_list("highlight", text) or ())


def build_search_query(entry: IndexEntry, req: SearchRequest) -> tuple[SearchQuery, int, int]:
    """The engine query, the page and the perPage of one search request."""
    config, fields, caps = entry.config, entry.fields, entry.engine.capabilities
    engine = entry.engine.name
    # below 1 is 1; above, the page is checked as sent, so a refusal quotes the client's number
    page = 1 if req.page is None else max(1, req.page)
    per_page = clamp(req.per_page, config.defaults.per_page, 1, MAX_PER_PAGE)
    check_page_window(page, per_page, config.max_result_window)

    sort = parse_sort(decode_json("sort", req.sort), fields) if req.sort is not None else ()
    filters = (
        parse_filters(decode_json("filters", req.filters), fields)
        if req.filters is not None
        else ()
    )
    facet_names = parse_list("facets", req.facets)
    facets = fields.real_all(facet_names) if facet_names else fields.real_all(
        config.defaults.facets
    )
    highlight, highlight_fields = _highlight(entry, req.highlight)
    chosen = parse_list("fields", req.fields)

    search_fields = fields.configured_weights
    if req.boosts is not None:
        if not caps.boosts:
            raise UnsupportedFeature("boosts", engine)
        search_fields = parse_boosts(decode_json("boosts", req.boosts), fields)

    histograms: tuple[HistogramSpec, ...] = ()
    if req.histogram is not None:
        if not caps.histogram:
            raise UnsupportedFeature("histogram", engine)
        histograms = parse_histogram(decode_json("histogram", req.histogram), fields)

    geo_grid = None
    if req.geo_grid is not None:
        if not caps.geo_grid:
            raise UnsupportedFeature("geoGrid", engine)
        geo_grid = parse_geo_grid(decode_json("geoGrid", req.geo_grid), fields)

    suggest_field = None
    if parse_flag("suggest", req.suggest):
        if not caps.suggest:
            raise UnsupportedFeature("suggest", engine)
        if not config.defaults.suggest_field:
            raise InvalidRequest("suggest needs defaults.suggestField configured for this index")
        if req.q.strip():
            suggest_field = fields.real(config.defaults.suggest_field)

    query = SearchQuery(
        text=req.q,
        offset=(page - 1) * per_page,
        limit=per_page,
        filters=filters,
        facets=facets,
        max_facet_values=FACET_BUCKETS,
        sort=sort,
        highlight=highlight,
        highlight_fields=highlight_fields,
        fields=fields.real_all(chosen) if chosen else None,
        search_fields=search_fields,
        suggest_field=suggest_field,
        histograms=histograms,
        geo_grid=geo_grid,
        exact_total=config.exact_totals,
        semantic=semantic_share(config, req.semantic, req.q, sorted_=bool(sort)),
    )
    return query, page, per_page
