"""Parsing of client parameters: the filter grammar, sort, boosts, histogram, geoGrid, lists."""

from __future__ import annotations

from typing import Any

import pytest

from searchport.domain.config import FieldConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import FieldMap
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
from searchport.domain.query import (
    ExistsFilter,
    FieldWeight,
    GeoBounds,
    GeoGridSpec,
    GeoPoint,
    HistogramSpec,
    NotFilter,
    RangeFilter,
    SortClause,
    TermFilter,
)

# public name -> real name: region -> continent, pop -> population, where -> location
FIELDS = FieldMap({
    "region": FieldConfig(field="continent"),
    "pop": FieldConfig(field="population"),
    "where": FieldConfig(field="location"),
    "name": FieldConfig(weight=3),
})


def rejects(parse: Any, value: Any) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse(value, FIELDS)
    return caught.value


# -- filters: accepted forms -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Europe", TermFilter(field="country", values=("Europe",))),
        (3, TermFilter(field="country", values=(3,))),
        (2.5, TermFilter(field="country", values=(2.5,))),
        (True, TermFilter(field="country", values=(True,))),
        (False, TermFilter(field="country", values=(False,))),
        (["a", "b"], TermFilter(field="country", values=("a", "b"))),
        ([1, 2.5], TermFilter(field="country", values=(1, 2.5))),
        ({"min": 1, "max": 5}, RangeFilter(field="country", min=1, max=5)),
        ({"min": 5, "max": 5}, RangeFilter(field="country", min=5, max=5)),
        ({"min": -1.5}, RangeFilter(field="country", min=-1.5, max=None)),
        ({"max": 10}, RangeFilter(field="country", min=None, max=10)),
        (
            {"min": "2020-01-01", "max": "2020-12-31"},
            RangeFilter(field="country", min="2020-01-01", max="2020-12-31"),
        ),
        ({"min": "2020-01-01T10:00:00Z"}, RangeFilter(field="country", min="2020-01-01T10:00:00Z")),
        ({"max": "2021-06-30T23:59:59"}, RangeFilter(field="country", max="2021-06-30T23:59:59")),
        ({"not": "x"}, NotFilter(field="country", values=("x",))),
        ({"not": ["x", 2]}, NotFilter(field="country", values=("x", 2))),
        ({"exists": True}, ExistsFilter(field="country", exists=True)),
        ({"exists": False}, ExistsFilter(field="country", exists=False)),
    ],
)
def test_filter_forms(value: Any, expected: Any) -> None:
    assert parse_filters({"country": value}, FIELDS) == (expected,)


def test_filters_resolve_aliases_and_keep_one_filter_per_key_in_order() -> None:
    parsed = parse_filters(
        {
            "region": "Europe",
            "pop": {"min": 1000},
            "country": ["FR", "DE"],
            "where": {"exists": True},
        },
        FIELDS,
    )
    assert parsed == (
        TermFilter(field="continent", values=("Europe",)),
        RangeFilter(field="population", min=1000, max=None),
        TermFilter(field="country", values=("FR", "DE")),
        ExistsFilter(field="location", exists=True),
    )


def test_an_empty_filters_object_means_no_filters() -> None:
    assert parse_filters({}, FIELDS) == ()


# -- filters: rejected forms, each a 400 naming the field --------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {},
        None,
        [],
        [[1, 2]],
        [["a"]],
        [None],
        [{"a": 1}],
        {"foo": 1},
        {"min": "abc"},
        {"max": "31/12/2020"},
        {"min": True},
        {"min": [1]},
        {"min": None},
        {"min": 1, "not": 2},
        {"min": 1, "exists": True},
        {"not": 1, "exists": True},
        {"min": 5, "max": 1},
        {"min": 0.5, "max": -0.5},
        {"min": "2021-01-01", "max": "2020-01-01"},
        {"not": []},
        {"not": [[1]]},
        {"not": {}},
        {"not": None},
        {"exists": 1},
        {"exists": "true"},
        {"exists": None},
        {"exists": True, "extra": 1},
        10**400,  # beyond the float range: not a usable number
        {"min": 10**400},
        ["x"] * 101,
    ],
)
def test_invalid_filter_is_a_400_naming_the_field(value: Any) -> None:
    error = rejects(parse_filters, {"region": value})
    assert "region" in error.message
    assert "filters" in error.message


def test_a_range_mixing_a_number_and_a_date_is_rejected() -> None:
    error = rejects(parse_filters, {"pop": {"min": 1, "max": "2020-01-01"}})
    assert "pop" in error.message


def test_date_bounds_are_compared_as_instants_not_as_text() -> None:
    value = {"min": "2024-01-01T10:00:00+05:00", "max": "2024-01-01T06:00:00Z"}
    assert parse_filters({"day": value}, FIELDS) == (
        RangeFilter(field="day", min=value["min"], max=value["max"]),
    )


@pytest.mark.parametrize("value", [None, [], ["a"], "Europe", 1, True, [{"a": 1}]])
def test_filters_that_are_not_an_object_are_rejected(value: Any) -> None:
    assert "filters" in rejects(parse_filters, value).message


def test_the_parameter_name_in_filter_errors_is_configurable() -> None:
    with pytest.raises(InvalidRequest, match="facetFilters"):
        parse_filters({"a": None}, FIELDS, param="facetFilters")


# -- sort ----------------------------------------------------------------------------------


def test_sort_keeps_key_order_as_priority_and_resolves_aliases() -> None:
    parsed = parse_sort({"pop": "desc", "_score": "desc", "name": "asc"}, FIELDS)
    assert parsed == (
        SortClause(field="population", order="desc"),
        SortClause(field="_score", order="desc"),
        SortClause(field="name", order="asc"),
    )
    reversed_order = parse_sort({"name": "asc", "pop": "desc"}, FIELDS)
    assert [c.field for c in reversed_order] == ["name", "population"]


@pytest.mark.parametrize("order", ["up", "ascending", "", None, 1, True, ["asc"], {"asc": 1}])
def test_sort_order_must_be_asc_or_desc(order: Any) -> None:
    assert "region" in rejects(parse_sort, {"region": order}).message


@pytest.mark.parametrize("value", [{}, [], ["name"], "name", None, 1])
def test_sort_must_be_a_non_empty_object(value: Any) -> None:
    assert "sort" in rejects(parse_sort, value).message


# -- boosts --------------------------------------------------------------------------------


def test_boosts_resolve_aliases_and_drop_zero_weights() -> None:
    parsed = parse_boosts({"region": 2, "name": 0.5, "pop": 0}, FIELDS)
    assert parsed == (
        FieldWeight(field="continent", weight=2.0),
        FieldWeight(field="name", weight=0.5),
    )


@pytest.mark.parametrize("weight", [-1, -0.01, "3", None, True, [1], {"w": 1}, 10**400])
def test_a_boost_must_be_a_number_of_zero_or_more(weight: Any) -> None:
    assert "region" in rejects(parse_boosts, {"region": weight}).message


def test_boosts_need_one_positive_weight() -> None:
    assert "boosts" in rejects(parse_boosts, {"name": 0, "region": 0}).message


@pytest.mark.parametrize("value", [{}, [], "name", None])
def test_boosts_must_be_a_non_empty_object(value: Any) -> None:
    assert "boosts" in rejects(parse_boosts, value).message


# -- histogram -----------------------------------------------------------------------------


def test_histogram_intervals_resolve_aliases() -> None:
    assert parse_histogram({"pop": 1000, "name": 0.5}, FIELDS) == (
        HistogramSpec(field="population", interval=1000.0),
        HistogramSpec(field="name", interval=0.5),
    )


@pytest.mark.parametrize("interval", [0, -5, "10", None, False, [10], 10**400])
def test_histogram_interval_must_be_above_zero(interval: Any) -> None:
    assert "pop" in rejects(parse_histogram, {"pop": interval}).message


@pytest.mark.parametrize("value", [{}, [], 5, None])
def test_histogram_must_be_a_non_empty_object(value: Any) -> None:
    assert "histogram" in rejects(parse_histogram, value).message


# -- geoGrid -------------------------------------------------------------------------------

BOX = {"top_left": {"lat": 50, "lon": -10}, "bottom_right": {"lat": 40, "lon": 20}}


@pytest.mark.parametrize("precision", [0, 7, 29])
def test_geo_grid_precision_bounds_are_inclusive(precision: int) -> None:
    parsed = parse_geo_grid({"field": "where", "precision": precision}, FIELDS)
    assert parsed == GeoGridSpec(field="location", precision=precision, bounds=None)


def test_geo_grid_with_bounds() -> None:
    parsed = parse_geo_grid({"field": "where", "precision": 4, "bounds": BOX}, FIELDS)
    assert parsed == GeoGridSpec(
        field="location",
        precision=4,
        bounds=GeoBounds(
            top_left=GeoPoint(lat=50.0, lon=-10.0), bottom_right=GeoPoint(lat=40.0, lon=20.0)
        ),
    )


def test_geo_grid_bounds_at_the_limits_of_the_globe() -> None:
    box = {"top_left": {"lat": 90, "lon": -180}, "bottom_right": {"lat": -90, "lon": 180}}
    parsed = parse_geo_grid({"field": "loc", "precision": 0, "bounds": box}, FIELDS)
    assert parsed.bounds == GeoBounds(
        top_left=GeoPoint(lat=90, lon=-180), bottom_right=GeoPoint(lat=-90, lon=180)
    )


def _with(**changes: Any) -> dict[str, Any]:
    grid: dict[str, Any] = {"field": "where", "precision": 3, "bounds": BOX}
    for key, value in changes.items():
        if value is ...:
            del grid[key]
        else:
            grid[key] = value
    return grid


@pytest.mark.parametrize(
    ("grid", "mentions"),
    [
        (_with(precision=30), "precision"),
        (_with(precision=-1), "precision"),
        (_with(precision=3.5), "precision"),
        (_with(precision=3.0), "precision"),
        (_with(precision="3"), "precision"),
        (_with(precision=True), "precision"),
        (_with(precision=None), "precision"),
        (_with(field=...), "field"),
        (_with(field=""), "field"),
        (_with(field=3), "field"),
        (_with(field=["a"]), "field"),
        (_with(zoom=3), "zoom"),
        (_with(bounds=None), "bounds"),
        (_with(bounds=[]), "bounds"),
        (_with(bounds={"top_left": {"lat": 1, "lon": 1}}), "bounds"),
        (_with(bounds={**BOX, "center": {"lat": 0, "lon": 0}}), "bounds"),
        (_with(bounds={**BOX, "top_left": {"lat": 50}}), "top_left"),
        (_with(bounds={**BOX, "top_left": {"lat": 50, "lon": 1, "alt": 3}}), "top_left"),
        (_with(bounds={**BOX, "top_left": {"lat": 90.5, "lon": 0}}), "top_left"),
        (_with(bounds={**BOX, "top_left": {"lat": "50", "lon": 0}}), "top_left"),
        (_with(bounds={**BOX, "bottom_right": {"lat": 0, "lon": 180.1}}), "bottom_right"),
        (_with(bounds={**BOX, "bottom_right": {"lat": -91, "lon": 0}}), "bottom_right"),
        (_with(bounds={**BOX, "bottom_right": {"lat": 0, "lon": 10**400}}), "bottom_right"),
        (_with(bounds={**BOX, "bottom_right": {"lat": 60, "lon": 20}}), "top_left"),
    ],
)
def test_invalid_geo_grid_is_rejected(grid: dict[str, Any], mentions: str) -> None:
    error = rejects(parse_geo_grid, grid)
    assert "geoGrid" in error.message
    assert mentions in error.message


@pytest.mark.parametrize("value", [{}, [], "location", None, 3])
def test_geo_grid_must_be_a_non_empty_object(value: Any) -> None:
    assert "geoGrid" in rejects(parse_geo_grid, value).message


# -- comma lists, flags, clamping, JSON --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, None),
        ("", ()),
        (" , ,", ()),
        ("a", ("a",)),
        (" a , b ,a,, c ", ("a", "b", "c")),
        ("b,a,b", ("b", "a")),
    ],
)
def test_parse_list_trims_drops_empties_and_dedupes(
    text: str | None, expected: tuple[str, ...] | None
) -> None:
    assert parse_list("facets", text) == expected


def test_parse_list_caps_the_number_of_items() -> None:
    assert parse_list("fields", ",".join(f"f{i}" for i in range(100))) is not None
    with pytest.raises(InvalidRequest, match="fields"):
        parse_list("fields", ",".join(f"f{i}" for i in range(101)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, None),
        ("true", True),
        (" TRUE ", True),
        ("1", True),
        ("false", False),
        ("False", False),
        ("0", False),
        ("", False),
    ],
)
def test_parse_flag(text: str | None, expected: bool | None) -> None:
    assert parse_flag("suggest", text) is expected


@pytest.mark.parametrize("text", ["maybe", "2", "tru", "t rue"])
def test_parse_flag_rejects_other_words(text: str) -> None:
    with pytest.raises(InvalidRequest, match="suggest"):
        parse_flag("suggest", text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 20), (0, 1), (-7, 1), (1, 1), (55, 55), (100, 100), (101, 100), (10**30, 100)],
)
def test_clamp(value: int | None, expected: int) -> None:
    assert clamp(value, 20, 1, 100) == expected


@pytest.mark.parametrize(
    "text",
    ["", "{", "{'a': 1}", '{"a":1} x', "NaN", "1e400", "[" * 5000 + "]" * 5000, "\x00"],
)
def test_decode_json_rejects_bad_text_naming_the_parameter(text: str) -> None:
    with pytest.raises(InvalidRequest, match="'sort'"):
        decode_json("sort", text)


def test_decode_json_returns_the_value() -> None:
    assert decode_json("filters", '{"a": [1, "b", {"min": 2}]}') == {"a": [1, "b", {"min": 2}]}
