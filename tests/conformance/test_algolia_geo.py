"""Algolia's area parameters on every engine, over the conformance rows: ``insideBoundingBox``
(one box or several) and ``insidePolygon`` (one polygon or several) select exactly the rows
whose point lies in one of the shapes, and each hit carries its point as ``_geoloc``.

The expected rows are computed here: a box by comparing coordinates, a polygon by the
winding number of its edges around the point. Every case keeps its rows at least 0.05
degrees from every edge, so that no engine's rounding or edge drawing decides it.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.conformance.conftest import HANDLE
from tests.conformance.dataset import ROWS

MARGIN = 0.05  # degrees between every row and every edge of a case

Points = list[tuple[float, float]]

BOXES: list[list[list[float]]] = [
    [[50.0, 10.0, 40.0, 0.0]],  # north-east corner first, as InstantSearch sends it
    [[40.0, 0.0, 50.0, 10.0]],  # south-west first: the same box
    [[45.0, -8.0, 38.0, 3.0], [58.0, 15.0, 52.5, 24.0]],
    [[37.0, -5.0, 36.5, -4.0]],  # holds no row
]
POLYGONS: list[list[Points]] = [
    [[(55.0, -5.0), (55.0, 20.0), (38.0, 7.5)]],  # a triangle
    # concave: a "U" open to the north
    [[(58.0, -8.0), (58.0, -2.0), (44.0, -2.0), (44.0, 12.0), (58.0, 12.0), (58.0, 20.0),
      (39.0, 20.0), (39.0, -8.0)]],
    [[(59.0, 0.0), (59.0, 10.0), (52.0, 5.0)], [(42.0, 15.0), (37.0, 24.0), (37.0, 10.0)]],
]


def point(row: dict[str, Any]) -> tuple[float, float]:
    return row["location"]["lat"], row["location"]["lon"]


def winding(lat: float, lon: float, polygon: Points) -> int:
    """How many times the polygon's edges turn around the point (0: outside)."""
    total = 0.0
    for (lat1, lon1), (lat2, lon2) in zip(polygon, [*polygon[1:], polygon[0]], strict=True):
        a = math.atan2(lat1 - lat, lon1 - lon)
        b = math.atan2(lat2 - lat, lon2 - lon)
        turn = b - a
        while turn > math.pi:
            turn -= 2 * math.pi
        while turn < -math.pi:
            turn += 2 * math.pi
        total += turn
    return round(total / (2 * math.pi))


def edge_distance(lat: float, lon: float, polygon: Points) -> float:
    """The distance in degrees from the point to the nearest edge (a plane's geometry)."""
    best = math.inf
    for (y1, x1), (y2, x2) in zip(polygon, [*polygon[1:], polygon[0]], strict=True):
        dx, dy = x2 - x1, y2 - y1
        t = max(0.0, min(1.0, ((lon - x1) * dx + (lat - y1) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.hypot(lon - (x1 + t * dx), lat - (y1 + t * dy)))
    return best


def box_polygon(box: list[float]) -> Points:
    lat1, lng1, lat2, lng2 = box
    north, south, west, east = max(lat1, lat2), min(lat1, lat2), min(lng1, lng2), max(lng1,
                                                                                         lng2)
    return [(south, west), (south, east), (north, east), (north, west)]


def expected(polygons: list[Points]) -> set[str]:
    for row in ROWS:
        assert all(edge_distance(*point(row), p) > MARGIN for p in polygons), row["id"]
    return {row["id"] for row in ROWS if any(winding(*point(row), p) for p in polygons)}


def found(api: TestClient[Any], params: dict[str, Any]) -> tuple[set[str], list[Any]]:
    response = api.post(f"/1/indexes/{HANDLE}/query",
                        json={"params": {"hitsPerPage": 100, **params}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["nbHits"] == len(body["hits"])
    return {hit["objectID"] for hit in body["hits"]}, body["hits"]


@pytest.mark.parametrize("boxes", BOXES)
def test_inside_bounding_box_selects_the_rows_in_any_box(api: TestClient[Any],
                                                         boxes: list[list[float]]) -> None:
    ids, _ = found(api, {"insideBoundingBox": boxes})
    assert ids == expected([box_polygon(box) for box in boxes])


@pytest.mark.parametrize("polygons", POLYGONS)
def test_inside_polygon_selects_the_rows_in_any_polygon(api: TestClient[Any],
                                                        polygons: list[Points]) -> None:
    flat = [[c for vertex in polygon for c in vertex] for polygon in polygons]
    ids, _ = found(api, {"insidePolygon": flat})
    assert ids == expected(polygons)


def test_a_box_given_as_text_is_one_box(api: TestClient[Any]) -> None:
    ids, _ = found(api, {"insideBoundingBox": "50,10,40,0"})
    assert ids == expected([box_polygon([50, 10, 40, 0])])


def test_areas_narrow_the_other_filters_and_the_counts(api: TestClient[Any]) -> None:
    polygon = POLYGONS[0][0]
    response = api.post(f"/1/indexes/{HANDLE}/query", json={"params": {
        "insidePolygon": [[c for vertex in polygon for c in vertex]],
        "facetFilters": ["genre:fiction"], "facets": ["genre"], "hitsPerPage": 100}})
    assert response.status_code == 200, response.text
    inside = expected([polygon])
    wanted = {row["id"] for row in ROWS if row["id"] in inside and row["genre"] == "fiction"}
    body = response.json()
    assert {hit["objectID"] for hit in body["hits"]} == wanted
    assert body["facets"].get("genre", {}) == ({"fiction": len(wanted)} if wanted else {})


def test_hits_carry_their_point_as_geoloc(api: TestClient[Any]) -> None:
    _, hits = found(api, {"insideBoundingBox": BOXES[0]})
    by_id = {row["id"]: row for row in ROWS}
    assert hits
    for hit in hits:
        lat, lon = point(by_id[hit["objectID"]])
        assert hit["_geoloc"] == pytest.approx({"lat": lat, "lng": lon})


def test_the_cases_hold_rows_on_both_sides() -> None:
    for polygons in [*([box_polygon(b) for b in boxes] for boxes in BOXES[:3]), *POLYGONS]:
        assert 0 < len(expected(polygons)) < len(ROWS)
