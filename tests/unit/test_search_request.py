"""From ``GET /:handle/search`` parameters to the engine's ``SearchQuery``."""

from __future__ import annotations

from typing import Any

import pytest

from searchport.domain.catalog import IndexEntry
from searchport.domain.config import DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    FieldWeight,
    GeoGridSpec,
    HistogramSpec,
    RangeFilter,
    SortClause,
    TermFilter,
)
from searchport.domain.results import Capabilities
from searchport.domain.search_request import SearchRequest, build_search_query
from tests.fakes import FakeEngine

FIELDS = {
    "name": FieldConfig(weight=3),
    "alternateNames": FieldConfig(weight=1),
    "country": FieldConfig(searchable=True),
    "region": FieldConfig(field="continent"),
    "pop": FieldConfig(field="population"),
    "where": FieldConfig(field="location"),
    "title": FieldConfig(field="name_shingles"),
}
ALL_FEATURES = Capabilities(suggest=True, boosts=True, histogram=True, geo_grid=True)
NO_FEATURES = Capabilities(suggest=False, boosts=False, histogram=False, geo_grid=False)


def entry(capabilities: Capabilities = ALL_FEATURES, **config: Any) -> IndexEntry:
    index = IndexConfig(engine="tantivy", path="unused", fields=FIELDS, **config)
    return IndexEntry("cities", index, FakeEngine(capabilities=capabilities))


def build(index: IndexEntry | None = None, **params: Any) -> Any:
    return build_search_query(index or entry(), SearchRequest(handle="cities", **params))


def test_defaults() -> None:
    query, page, per_page = build()
    assert (page, per_page) == (1, 20)
    assert (query.text, query.offset, query.limit) == ("", 0, 20)
    assert query.filters == () and query.sort == () and query.facets == ()
    assert query.fields is None
    assert query.highlight is False and query.highlight_fields == ()
    assert query.suggest_field is None and query.histograms == () and query.geo_grid is None
    assert query.exact_total is True


def test_page_and_per_page_give_the_offset() -> None:
    query, page, per_page = build(q="paris", page=3, per_page=15)
    assert (page, per_page, query.offset, query.limit, query.text) == (3, 15, 30, 15, "paris")


def test_configured_per_page_is_the_default() -> None:
    query, _, per_page = build(entry(defaults=DefaultsConfig(per_page=7)))
    assert per_page == 7 and query.limit == 7


@pytest.mark.parametrize(
    ("page", "per_page", "expected"),
    [
        (0, 0, (1, 1)),
        (-4, -10, (1, 1)),
        (2, 101, (2, 100)),
        (1, 10**9, (1, 100)),
        (None, 100, (1, 100)),
    ],
)
def test_page_and_per_page_are_clamped(
    page: int | None, per_page: int | None, expected: tuple[int, int]
) -> None:
    query, got_page, got_per_page = build(page=page, per_page=per_page)
    assert (got_page, got_per_page) == expected
    assert query.offset == (expected[0] - 1) * expected[1]


# -- deep-page guard -----------------------------------------------------------------------


@pytest.mark.parametrize(("page", "per_page"), [(500, 20), (100, 100), (10_000, 1)])
def test_pages_inside_the_result_window_are_allowed(page: int, per_page: int) -> None:
    query, _, _ = build(page=page, per_page=per_page)
    assert query.offset + query.limit == 10_000


@pytest.mark.parametrize(("page", "per_page", "last"),
                         [(501, 20, 500), (101, 100, 100), (10_001, 1, 10_000), (10**12, 5, 2_000),
                          (334, 30, 333)])
def test_pages_past_the_result_window_are_a_400_naming_the_last_page(
    page: int, per_page: int, last: int
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        build(page=page, per_page=per_page)
    message = caught.value.message
    assert f"page {page} is past the last page, {last}:" in message
    assert "10,000" in message and f"perPage {per_page}" in message
    build(page=last, per_page=per_page)  # the page named can be fetched


def test_the_result_window_is_configurable() -> None:
    small = entry(max_result_window=50)
    assert build(small, page=2, per_page=25)[0].offset == 25
    with pytest.raises(InvalidRequest, match="page 3 is past the last page, 2:"):
        build(small, page=3, per_page=20)
    # a page larger than the window: not even the first can be fetched
    with pytest.raises(InvalidRequest, match="perPage must not exceed 50"):
        build(small, page=1, per_page=60)


# -- sort, filters, facets, fields ---------------------------------------------------------


def test_sort_and_filters_are_parsed_with_aliases() -> None:
    query, _, _ = build(
        sort='{"pop":"desc","_score":"desc"}',
        filters='{"region":"Europe","pop":{"min":1000}}',
    )
    assert query.sort == (
        SortClause(field="population", order="desc"),
        SortClause(field="_score", order="desc"),
    )
    assert query.filters == (
        TermFilter(field="continent", values=("Europe",)),
        RangeFilter(field="population", min=1000, max=None),
    )


@pytest.mark.parametrize("param", ["sort", "filters", "boosts", "histogram", "geo_grid"])
def test_invalid_json_is_a_400_naming_the_parameter(param: str) -> None:
    wire = {"geo_grid": "geoGrid"}.get(param, param)
    with pytest.raises(InvalidRequest, match=f"'{wire}'"):
        build(None, **{param: "{not json"})


def test_facets_are_trimmed_deduped_and_resolved() -> None:
    query, _, _ = build(facets=" region, country ,region,,pop ")
    assert query.facets == ("continent", "country", "population")


def test_facets_default_to_the_configured_ones() -> None:
    configured = entry(defaults=DefaultsConfig(facets=["region", "country"]))
    assert build(configured)[0].facets == ("continent", "country")
    assert build(configured, facets="pop")[0].facets == ("population",)


def test_fields_are_resolved_and_deduped() -> None:
    query, _, _ = build(fields="name, region,name")
    assert query.fields == ("name", "continent")


# -- highlight -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", (True, ())),
        ("TRUE", (True, ())),
        ("false", (False, ())),
        ("", (False, ())),
        ("name", (True, ("name",))),
        (" name , region ,name", (True, ("name", "continent"))),
    ],
)
def test_highlight_parameter(text: str, expected: tuple[bool, tuple[str, ...]]) -> None:
    query, _, _ = build(highlight=text)
    assert (query.highlight, query.highlight_fields) == expected


@pytest.mark.parametrize(
    ("default", "expected"),
    [
        (False, (False, ())),
        (True, (True, ())),
        (["region", "name"], (True, ("continent", "name"))),
        ([], (False, ())),
    ],
)
def test_highlight_default_comes_from_the_config(
    default: bool | list[str], expected: tuple[bool, tuple[str, ...]]
) -> None:
    configured = entry(defaults=DefaultsConfig(highlight=default))
    query, _, _ = build(configured)
    assert (query.highlight, query.highlight_fields) == expected
    # an explicit parameter overrides the default
    assert build(configured, highlight="false")[0].highlight is False


# -- searched fields -----------------------------------------------------------------------


def test_searched_fields_are_weights_plus_searchable_fields() -> None:
    query, _, _ = build()
    assert {w.field: w.weight for w in query.search_fields} == {
        "name": 3.0,
        "alternateNames": 1.0,
        "country": 1.0,
    }


def test_boosts_replace_the_configured_weights() -> None:
    query, _, _ = build(boosts='{"region": 2, "alternateNames": 0.5, "name": 0}')
    assert query.search_fields == (
        FieldWeight(field="continent", weight=2.0),
        FieldWeight(field="alternateNames", weight=0.5),
    )


def test_no_weights_and_no_searchable_fields_search_all_fields() -> None:
    bare = IndexEntry(
        "bare",
        IndexConfig(engine="tantivy", path="unused", fields={"region": FieldConfig(field="c")}),
        FakeEngine(),
    )
    assert build_search_query(bare, SearchRequest(handle="bare"))[0].search_fields == ()


# -- engine features -----------------------------------------------------------------------


def test_histogram_and_geo_grid_are_parsed_with_aliases() -> None:
    query, _, _ = build(histogram='{"pop": 1000000}', geo_grid='{"field":"where","precision":3}')
    assert query.histograms == (HistogramSpec(field="population", interval=1_000_000.0),)
    assert query.geo_grid == GeoGridSpec(field="location", precision=3, bounds=None)


@pytest.mark.parametrize(
    ("params", "feature"),
    [
        ({"boosts": '{"name": 2}'}, "boosts"),
        ({"histogram": '{"pop": 10}'}, "histogram"),
        ({"geo_grid": '{"field": "where", "precision": 2}'}, "geoGrid"),
        ({"suggest": "true", "q": "par"}, "suggest"),
    ],
)
def test_unsupported_features_are_a_400_naming_feature_and_engine(
    params: dict[str, str], feature: str
) -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        build(entry(NO_FEATURES, defaults=DefaultsConfig(suggest_field="title")), **params)
    assert caught.value.message == f"{feature} is not supported by the fake engine"


def test_suggest_uses_the_real_suggest_field() -> None:
    configured = entry(defaults=DefaultsConfig(suggest_field="title"))
    assert build(configured, suggest="true", q="pari")[0].suggest_field == "name_shingles"
    assert build(configured, suggest="false", q="pari")[0].suggest_field is None
    assert build(configured, q="pari")[0].suggest_field is None


@pytest.mark.parametrize("q", ["", "   "])
def test_suggest_with_an_empty_query_asks_for_no_suggestions(q: str) -> None:
    configured = entry(defaults=DefaultsConfig(suggest_field="title"))
    assert build(configured, suggest="true", q=q)[0].suggest_field is None


def test_suggest_without_a_suggest_field_is_a_400() -> None:
    with pytest.raises(InvalidRequest, match="suggestField"):
        build(suggest="true", q="pari")


def test_suggest_must_be_a_flag() -> None:
    with pytest.raises(InvalidRequest, match="suggest"):
        build(entry(defaults=DefaultsConfig(suggest_field="title")), suggest="please", q="x")


def test_exact_totals_follow_the_config() -> None:
    assert build(entry(exact_totals=False))[0].exact_total is False
