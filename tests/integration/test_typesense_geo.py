"""Algolia's ``aroundLatLng`` + ``aroundRadius`` on a real Typesense 0.24.1, through the real
app: the radius filter (``location:(lat, lng, <km> km)``) selects exactly the rows whose
great-circle distance from the centre is within the radius, and the distance sort
(``location(lat, lng):asc``) ranks them closest first, both computed here with the
haversine formula from the fixture rows."""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from litestar.testing import TestClient

from searchport.adapters.typesense.schema import FieldInfo, Schema
from searchport.adapters.typesense.translate import search_plan
from searchport.domain.errors import UnsupportedFeature
from searchport.domain.query import GeoSort, SearchQuery, SortClause
from tests.integration.typesense_server import (
    app_client,
    index_settings,
    typesense_rows,
)
from tests.typesense_server import TypesenseServer

ROWS = typesense_rows()
EARTH_RADIUS_M = 6_371_008.8  # mean radius; every case keeps 1% away from the boundary
CENTRES = [(48.8566, 2.3522), (51.5074, -0.1278), (40.7, -74.0), (-33.9, 151.2)]
RADII = [1_500, 3_750, 5_000, 400_000, 1_000_000, 6_000_000]


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(h))


def distances(lat: float, lng: float) -> dict[str, float]:
    return {row["id"]: haversine_m(lat, lng, *row["location"])
            for row in ROWS if row.get("location")}


@pytest.fixture(scope="module")
def client(server: TypesenseServer) -> Iterator[TestClient[Any]]:
    books = index_settings(server, fields={"location": {"type": "geo_point"}})
    with app_client({"books": books}) as client:
        yield client


def algolia(client: TestClient[Any], params: dict[str, Any]) -> Any:
    return client.post("/1/indexes/books/query", json={"params": {"hitsPerPage": 100, **params}})


def found(client: TestClient[Any], params: dict[str, Any]) -> set[str]:
    response = algolia(client, params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["nbHits"] == len(body["hits"])
    return {hit["objectID"] for hit in body["hits"]}


@pytest.mark.parametrize("centre", CENTRES)
@pytest.mark.parametrize("radius", RADII)
def test_around_radius_selects_the_rows_within_it(client: TestClient[Any],
                                                  centre: tuple[float, float],
                                                  radius: int) -> None:
    away = distances(*centre)
    # the case is decided by the rows, not by the engine's earth radius or rounding
    assert all(abs(d - radius) > radius / 100 for d in away.values())
    expected = {row_id for row_id, d in away.items() if d <= radius}
    params = {"aroundLatLng": f"{centre[0]}, {centre[1]}", "aroundRadius": radius}
    assert found(client, params) == expected


def test_the_fixture_has_rows_on_both_sides() -> None:
    near = {row_id for row_id, d in distances(*CENTRES[0]).items() if d <= 3_750}
    assert 0 < len(near) < len(distances(*CENTRES[0]))


def test_radius_combines_with_other_filters(client: TestClient[Any]) -> None:
    away = distances(*CENTRES[0])
    expected = {r["id"] for r in ROWS
                if r["id"] in away and away[r["id"]] <= 1_000_000 and r.get("year", 0) > 1900}
    assert found(client, {"aroundLatLng": "48.8566,2.3522", "aroundRadius": "1000000",
                          "numericFilters": ["year>1900"]}) == expected


def test_radius_all_filters_nothing(client: TestClient[Any]) -> None:
    assert found(client, {"aroundLatLng": "48.8566,2.3522", "aroundRadius": "all"}) == {
        r["id"] for r in ROWS}


@pytest.mark.parametrize(("params", "named"), [
    ({"aroundLatLng": "48.8566,2.3522"}, "aroundRadius"),
    ({"aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "91,2", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "48,181", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "48", "aroundRadius": 1000}, "aroundLatLng"),
    ({"aroundLatLng": "48,2", "aroundRadius": 0}, "aroundRadius"),
    ({"aroundLatLng": "48,2", "aroundRadius": "far"}, "aroundRadius"),
])
def test_bad_geo_parameters_are_a_400_naming_them(client: TestClient[Any],
                                                   params: dict[str, Any], named: str) -> None:
    response = algolia(client, params)
    assert response.status_code == 400
    assert named in response.json()["error"]


# ---------------------------------------------------------------- ranking by distance


def ranked(client: TestClient[Any], params: dict[str, Any]) -> list[str]:
    response = algolia(client, params)
    assert response.status_code == 200, response.text
    return [hit["objectID"] for hit in response.json()["hits"]]


def closest_first(order: list[str], away: dict[str, float]) -> bool:
    """Whether ``order`` is by distance, closest first, rows without a point last. Two
    rows whose distances differ by less than Typesense's rounding (whole meters) and the
    spread of earth radii (1e-5) may come either way: the check is decided by the rows."""
    placed = [row_id for row_id in order if row_id in away]
    if order[:len(placed)] != placed:  # a row without a point before one with a point
        return False
    return all(away[a] <= away[b] + max(2.0, away[b] * 1e-5)
               for a, b in pairwise(placed))


@pytest.mark.parametrize("centre", CENTRES)
def test_around_lat_lng_ranks_closest_first(client: TestClient[Any],
                                            centre: tuple[float, float]) -> None:
    """Algolia's geo criterion: every row, closest to ``aroundLatLng`` first (with
    ``aroundRadius: "all"`` nothing is filtered), the rows without a point last."""
    away = distances(*centre)
    order = ranked(client, {"aroundLatLng": f"{centre[0]}, {centre[1]}",
                            "aroundRadius": "all"})
    assert sorted(order) == sorted(r["id"] for r in ROWS)
    assert closest_first(order, away)
    # the check tells orders apart: the relevance order of the same search is not by distance
    assert not closest_first(ranked(client, {}), away)


def test_ranking_follows_the_radius_text_and_pages(client: TestClient[Any]) -> None:
    """Within the radius, matching the text, page after page: closest first."""
    centre = CENTRES[0]
    away = distances(*centre)
    words = {"castle", "castles"}
    expected = {r["id"] for r in ROWS if r["id"] in away and away[r["id"]] <= 6_000_000
                and words & {w.strip(".,:;!?'").lower() for w in r["title"].split()}}
    assert len(expected) >= 4  # the fixture has enough matches to order
    params = {"query": "castle", "aroundLatLng": f"{centre[0]},{centre[1]}",
              "aroundRadius": 6_000_000}
    order = ranked(client, params)
    assert set(order) == expected and closest_first(order, away)
    paged = [row_id for page in range(3)
             for row_id in ranked(client, {**params, "hitsPerPage": 2, "page": page})]
    assert paged == order[:6]


def test_a_distance_sort_counts_toward_the_three_sort_keys() -> None:
    """Typesense takes at most three ``sort_by`` keys: a distance sort and three sort keys
    are refused naming the engine, never cut; with no keys, relevance follows the distance."""
    schema = Schema(fields={"location": FieldInfo("location", "geopoint", sort=True),
                            "year": FieldInfo("year", "int32", sort=True),
                            "pages": FieldInfo("pages", "int32", sort=True)})
    nearest = GeoSort(field="location", lat=48.85, lon=-2.5)
    plan = search_plan(SearchQuery(geo_sort=nearest), schema, "books")
    assert plan.searches[0]["sort_by"] == "location(48.85, -2.5):asc,_text_match:desc"
    two = (SortClause(field="year", order="desc"), SortClause(field="pages", order="asc"))
    plan = search_plan(SearchQuery(geo_sort=nearest, sort=two), schema, "books")
    assert plan.searches[0]["sort_by"] == "location(48.85, -2.5):asc,year:desc,pages:asc"
    three = (*two, SortClause(field="_score", order="desc"))
    with pytest.raises(UnsupportedFeature) as caught:
        search_plan(SearchQuery(geo_sort=nearest, sort=three), schema, "books")
    assert str(caught.value) == ("Sorting by 4 keys (at most 3; a distance sort from "
                                 "aroundLatLng is one of them) is not supported by the "
                                 "typesense engine")
