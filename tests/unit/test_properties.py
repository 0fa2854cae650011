"""Properties: no client input makes a 5xx, and the parsers hold their contracts.

Strategies are explicit (``from_type`` ignores msgspec ``Meta`` bounds).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from searchport.domain.config import Config, DefaultsConfig, FieldConfig, IndexConfig
from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import FieldMap
from searchport.domain.params import decode_json, parse_filters
from searchport.domain.query import ExistsFilter, NotFilter, RangeFilter, TermFilter
from searchport.domain.results import Bucket, EngineResult, FacetValue, Hit
from searchport.entrypoints.http.app import create_app
from tests.fakes import FakeEngine, fake_container

HTTP = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
PARSING = settings(max_examples=300, deadline=None)

ALIASES = {"region": "continent", "pop": "population", "where": "location"}
FIELD_CONFIG = {
    "name": FieldConfig(weight=3),
    "country": FieldConfig(searchable=True),
    **{alias: FieldConfig(field=real) for alias, real in ALIASES.items()},
}
FIELDS = FieldMap(FIELD_CONFIG)

# -- strategies ----------------------------------------------------------------------------

field_names = st.sampled_from([*ALIASES, *ALIASES.values(), "name", "_score", ""]) | st.text(
    max_size=12
)
numbers = (
    st.integers(min_value=-(10**6), max_value=10**6)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, -0.0, 5e-324, 1e-300, 1e308, 2**63, 10**400, -(10**400)])
)
dates = st.dates().map(str) | st.datetimes().map(lambda d: d.isoformat())
json_scalars = st.none() | st.booleans() | numbers | st.text(max_size=12) | dates
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8) | st.sampled_from(
        ["min", "max", "not", "exists", "field", "precision", "bounds", "top_left",
         "bottom_right", "lat", "lon"]), inner, max_size=4),
    max_leaves=12,
)

scalars = st.booleans() | st.text(max_size=10) | st.integers(-(10**9), 10**9) | st.floats(
    allow_nan=False, allow_infinity=False
)
bound = numbers.filter(lambda n: abs(n) < 1e300) | dates
valid_filter_value = st.one_of(
    scalars,
    st.lists(scalars, min_size=1, max_size=5),
    st.fixed_dictionaries({}, optional={"min": bound, "max": bound}).filter(bool),
    st.fixed_dictionaries({"not": scalars | st.lists(scalars, min_size=1, max_size=5)}),
    st.fixed_dictionaries({"exists": st.booleans()}),
)
filter_objects = st.dictionaries(field_names, valid_filter_value | json_values, max_size=5)

geo_grids = st.fixed_dictionaries(
    {"field": field_names, "precision": st.integers(-2, 31) | json_scalars},
    optional={"bounds": st.fixed_dictionaries({
        "top_left": st.fixed_dictionaries({"lat": numbers, "lon": numbers}),
        "bottom_right": st.fixed_dictionaries({"lat": numbers, "lon": numbers}),
    }) | json_values},
)


def as_json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


# deeper than the interpreter's recursion limit, yet short enough for a URL
deep_nesting = st.integers(1, 1500).map(lambda depth: "[" * depth + "]" * depth) | st.integers(
    1, 1200
).map(lambda depth: '{"a":' * depth + "1" + "}" * depth)
json_params = (
    json_values.map(as_json)
    | st.dictionaries(field_names, json_values, max_size=4).map(as_json)
    | st.text(max_size=30)
)
# per JSON parameter: mostly well-formed shapes with hostile values, plus anything at all
JSON_PARAMS = {
    "sort": st.dictionaries(field_names, st.sampled_from(["asc", "desc"]) | json_values,
                            max_size=3).map(as_json),
    "filters": filter_objects.map(as_json),
    "boosts": st.dictionaries(field_names, numbers, max_size=3).map(as_json),
    # the fake engine has population buckets 0 and 1e6: tiny intervals meet the bucket guard
    "histogram": st.dictionaries(
        st.sampled_from(["pop", "population", "name"]) | field_names,
        numbers | st.floats(min_value=5e-324, max_value=1e-250),
        max_size=2,
    ).map(as_json),
    "geoGrid": geo_grids.map(as_json),
}
text_params = st.text(max_size=30) | st.sampled_from(
    ["", "0", "-1", "1", "100", "101", "1e3", "true", "false", "region, name", "*", "500"]
) | st.integers(-(10**12), 10**12).map(str)


def optional(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str | None]:
    return st.none() | strategy


# -- the HTTP app --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    index = IndexConfig(
        engine="tantivy", path="unused", fields=FIELD_CONFIG,
        defaults=DefaultsConfig(suggest_field="name", facets=["region"], highlight=["name"]),
    )
    fake = FakeEngine(
        result=EngineResult(
            hits=[Hit(id="1", index="h", score=1.0,
                      source={"continent": "Europe", "objectID": "x", "name": "Paris"})],
            total=1,
            facets={"continent": [FacetValue(value="Europe", count=1)]},
            histograms={"population": [Bucket(key=0.0, count=1), Bucket(key=1e6, count=2)]},
        ),
        facet_values=[FacetValue(value="Europe", count=1)],
    )
    app = create_app(fake_container(Config(indexes={"h": index}), {"h": fake}))
    with TestClient(app) as test_client:
        yield test_client


def assert_client_error_at_most(response: Any) -> None:
    assert response.status_code == 200 or 400 <= response.status_code < 500, response.text
    if response.status_code != 200:
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str), body


def send(client: TestClient[Any], path: str, params: dict[str, str | None]) -> Any:
    return client.get(path, params={k: v for k, v in params.items() if v is not None})


@pytest.mark.parametrize("name", sorted(JSON_PARAMS))
@HTTP
@given(data=st.data())
def test_each_json_search_parameter_never_fails_with_a_5xx(
    client: TestClient[Any], name: str, data: st.DataObject
) -> None:
    value = data.draw(JSON_PARAMS[name] | json_params | deep_nesting, label=name)
    assert_client_error_at_most(send(client, "/h/search", {"q": "paris", name: value}))


@HTTP
@given(
    q=optional(st.text(max_size=40)),
    sort=optional(st.dictionaries(field_names, st.sampled_from(["asc", "desc"]) | json_values,
                                  max_size=3).map(as_json) | json_params),
    filters=optional(filter_objects.map(as_json) | json_params),
    boosts=optional(st.dictionaries(field_names, numbers, max_size=3).map(as_json) | json_params),
    histogram=optional(st.dictionaries(field_names, numbers, max_size=2).map(as_json)
                       | json_params),
    geo_grid=optional(geo_grids.map(as_json) | json_params),
    page=optional(text_params),
    per_page=optional(text_params),
    facets=optional(text_params),
    highlight=optional(text_params),
    fields=optional(text_params),
    suggest=optional(text_params),
)
def test_search_never_fails_with_a_5xx(
    client: TestClient[Any],
    q: str | None, sort: str | None, filters: str | None, boosts: str | None,
    histogram: str | None, geo_grid: str | None, page: str | None, per_page: str | None,
    facets: str | None, highlight: str | None, fields: str | None, suggest: str | None,
) -> None:
    response = send(client, "/h/search", {
        "q": q, "sort": sort, "filters": filters, "boosts": boosts, "histogram": histogram,
        "geoGrid": geo_grid, "page": page, "perPage": per_page, "facets": facets,
        "highlight": highlight, "fields": fields, "suggest": suggest,
    })
    assert_client_error_at_most(response)


@HTTP
@given(
    field=field_names.filter(bool),
    q=optional(st.text(max_size=40)),
    max_values=optional(text_params),
    filters=optional(filter_objects.map(as_json) | json_params),
)
def test_facet_search_never_fails_with_a_5xx(
    client: TestClient[Any], field: str, q: str | None, max_values: str | None,
    filters: str | None,
) -> None:
    response = client.get(
        f"/h/facets/{quote(field, safe='')}",
        params={k: v for k, v in {"q": q, "maxValues": max_values, "filters": filters}.items()
                if v is not None},
    )
    assert_client_error_at_most(response)


@HTTP
@given(
    q=optional(st.text(max_size=40)),
    per_page=optional(text_params),
    facets=optional(text_params),
    max_facets=optional(text_params),
)
def test_autocomplete_never_fails_with_a_5xx(
    client: TestClient[Any], q: str | None, per_page: str | None, facets: str | None,
    max_facets: str | None,
) -> None:
    response = send(client, "/h/autocomplete", {
        "q": q, "perPage": per_page, "facets": facets, "maxFacetsPerField": max_facets,
    })
    assert_client_error_at_most(response)


# -- parsing -------------------------------------------------------------------------------

valid_filters = st.dictionaries(field_names, valid_filter_value, min_size=1, max_size=6)


def _ordered_range(value: dict[str, Any]) -> bool:
    low, high = value.get("min"), value.get("max")
    if low is None or high is None:
        return True
    if isinstance(low, str) != isinstance(high, str):
        return False
    if isinstance(low, str):  # the generated dates and date-times carry no zone
        return datetime.fromisoformat(low) <= datetime.fromisoformat(high)
    return bool(low <= high)


@PARSING
@given(valid_filters)
def test_valid_filters_give_one_filter_per_key_in_real_names(filters: dict[str, Any]) -> None:
    ranges_ok = all(_ordered_range(v) for v in filters.values() if isinstance(v, dict)
                    and set(v) <= {"min", "max"})
    if not ranges_ok:
        with pytest.raises(InvalidRequest):
            parse_filters(filters, FIELDS)
        return
    parsed = parse_filters(filters, FIELDS)
    assert len(parsed) == len(filters)
    for (key, value), parsed_filter in zip(filters.items(), parsed, strict=True):
        assert parsed_filter.field == ALIASES.get(key, key)
        if isinstance(value, list):
            assert parsed_filter == TermFilter(field=parsed_filter.field, values=tuple(value))
        elif not isinstance(value, dict):
            assert parsed_filter == TermFilter(field=parsed_filter.field, values=(value,))
        elif "exists" in value:
            assert parsed_filter == ExistsFilter(field=parsed_filter.field,
                                                 exists=value["exists"])
        elif "not" in value:
            expected = value["not"] if isinstance(value["not"], list) else [value["not"]]
            assert parsed_filter == NotFilter(field=parsed_filter.field, values=tuple(expected))
        else:
            assert parsed_filter == RangeFilter(
                field=parsed_filter.field, min=value.get("min"), max=value.get("max")
            )


@PARSING
@given(json_values)
def test_parse_filters_raises_only_invalid_request(value: Any) -> None:
    try:
        parsed = parse_filters(value, FIELDS)
    except InvalidRequest as error:
        assert error.message
    else:
        assert isinstance(value, dict) and len(parsed) == len(value)


@PARSING
@given(st.text(max_size=60) | json_values.map(as_json) | st.integers(1, 3000).map(
    lambda depth: "[" * depth + "]" * depth))
def test_decode_raises_only_invalid_request(text: str) -> None:
    try:
        decode_json("filters", text)
    except InvalidRequest as error:
        assert "filters" in error.message
