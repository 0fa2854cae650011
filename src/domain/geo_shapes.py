"""Points, boxes and polygons on the globe: the arithmetic shared by the geo filters and the
``_geoloc`` of Algolia hits.

Coordinates are degrees; a polygon's edges are straight lines in latitude/longitude, as
the engines' point-in-polygon filters draw them for areas of a map.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from searchport.domain.query import GeoBoxFilter, GeoPoint, GeoPolygonFilter

# how an engine stores a point written as two numbers: GeoJSON order (Elasticsearch,
# OpenSearch) or latitude first (Typesense)
PairOrder = Literal["lat_lon", "lon_lat"]
_GEOHASH = "0123456789bcdefghjkmnpqrstuvwxyz"


def in_box(lat: float, lon: float, box: GeoBoxFilter) -> bool:
    if not box.south <= lat <= box.north:
        return False
    if box.west <= box.east:
        return box.west <= lon <= box.east
    return lon >= box.west or lon <= box.east  # across the antimeridian


def in_polygon(lat: float, lon: float, points: Sequence[GeoPoint]) -> bool:
    """Even-odd rule: a ray from the point crosses the polygon's edges an odd number of
    times when it is inside."""
    inside = False
    j = len(points) - 1
    for i, p in enumerate(points):
        q = points[j]
        if (p.lat > lat) != (q.lat > lat):
            crossing = p.lon + (lat - p.lat) * (q.lon - p.lon) / (q.lat - p.lat)
            if lon < crossing:
                inside = not inside
        j = i
    return inside


def polygon_box(polygon: GeoPolygonFilter) -> GeoBoxFilter:
    """The smallest box (not crossing the antimeridian) that holds the polygon."""
    lats = [p.lat for p in polygon.points]
    lons = [p.lon for p in polygon.points]
    return GeoBoxFilter(field=polygon.field, north=max(lats), south=min(lats),
                        west=min(lons), east=max(lons))


def box_corners(box: GeoBoxFilter) -> list[tuple[GeoPoint, ...]]:
    """The box as polygons of four corners, counter-clockwise; two when it crosses the
    antimeridian (one on each side)."""
    spans = ([(box.west, box.east)] if box.west <= box.east else
             [(box.west, 180.0), (-180.0, box.east)])
    return [(GeoPoint(lat=box.south, lon=west), GeoPoint(lat=box.south, lon=east),
             GeoPoint(lat=box.north, lon=east), GeoPoint(lat=box.north, lon=west))
            for west, east in spans]


def counter_clockwise(points: Sequence[GeoPoint]) -> tuple[GeoPoint, ...]:
    """The vertices in counter-clockwise order (longitude as x, latitude as y)."""
    twice_area = sum(p.lon * q.lat - q.lon * p.lat
                     for p, q in zip(points, [*points[1:], points[0]], strict=True))
    return tuple(points) if twice_area >= 0 else tuple(reversed(points))


def straight_edges(points: Sequence[GeoPoint], step: float) -> tuple[GeoPoint, ...]:
    """The polygon with points added along each edge, at most ``step`` degrees apart, for
    an engine that draws edges as great-circle arcs: short arcs stay within a few meters of
    the straight latitude/longitude line the filter means."""
    found: list[GeoPoint] = []
    for p, q in zip(points, [*points[1:], points[0]], strict=True):
        pieces = max(1, math.ceil(max(abs(q.lat - p.lat), abs(q.lon - p.lon)) / step))
        found.extend(GeoPoint(lat=p.lat + (q.lat - p.lat) * k / pieces,
                              lon=p.lon + (q.lon - p.lon) * k / pieces)
                     for k in range(pieces))
    return tuple(found)


def stored_points(value: Any, pairs: PairOrder) -> list[GeoPoint]:
    """The points of a stored geo value, in the forms the engines store: ``{lat, lon}`` or
    ``{lat, lng}``, ``"lat,lon"``, two numbers (in the engine's ``pairs`` order), WKT
    ``POINT (lon lat)``, a geohash, or a list of those; anything else gives none."""
    if isinstance(value, dict):
        return _checked(value.get("lat"), value.get("lon", value.get("lng")))
    if isinstance(value, str):
        return _from_text(value.strip())
    if isinstance(value, list):
        if len(value) == 2 and all(_is_number(v) for v in value):
            first, second = value
            return _checked(first, second) if pairs == "lat_lon" else _checked(second, first)
        return [point for item in value for point in stored_points(item, pairs)]
    return []


def _from_text(text: str) -> list[GeoPoint]:
    if text.count(",") == 1:
        lat, lon = text.split(",")
        return _checked(lat, lon)
    upper = text.upper()
    if upper.startswith("POINT") and "(" in text and text.endswith(")"):
        parts = text[text.index("(") + 1:-1].split()
        return _checked(parts[1], parts[0]) if len(parts) == 2 else []
    if text and all(c in _GEOHASH for c in text.lower()):
        return [_geohash_centre(text.lower())]
    return []


def _geohash_centre(code: str) -> GeoPoint:
    lat, lon = [-90.0, 90.0], [-180.0, 180.0]
    even = True
    for char in code:
        bits = _GEOHASH.index(char)
        for shift in range(4, -1, -1):
            half = lon if even else lat
            middle = (half[0] + half[1]) / 2
            half[0 if bits >> shift & 1 else 1] = middle
            even = not even
    return GeoPoint(lat=(lat[0] + lat[1]) / 2, lon=(lon[0] + lon[1]) / 2)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _checked(lat: Any, lon: Any) -> list[GeoPoint]:
    try:
        point = GeoPoint(lat=float(lat), lon=float(lon))
    except (TypeError, ValueError):
        return []
    if not (-90 <= point.lat <= 90 and -180 <= point.lon <= 180):
        return []
    return [point]
