"""Algolia's geo parameters on a handle's one ``geo_point`` field: ``aroundLatLng`` with
``aroundRadius`` (a radius filter and a ranking by distance), ``insideBoundingBox`` and
``insidePolygon`` (area filters: one shape or several, a record inside any of them).
"""

from __future__ import annotations

from typing import Any

from searchport.domain.catalog import IndexEntry
from searchport.domain.errors import InvalidRequest, UnsupportedFeature
from searchport.domain.query import (
    AnyOf,
    Filter,
    GeoBoxFilter,
    GeoPoint,
    GeoPolygonFilter,
    GeoRadiusFilter,
    GeoSort,
)
from searchport.entrypoints.algolia import params as ap


def single_geo_field(entry: IndexEntry) -> str | None:
    geo = [name for name, kind in entry.fields.types.items() if kind == "geo_point"]
    return geo[0] if len(geo) == 1 else None


def _geo_field(entry: IndexEntry, parameter: str) -> str:
    geo = [name for name, kind in entry.fields.types.items() if kind == "geo_point"]
    if len(geo) != 1:
        raise InvalidRequest(f"{parameter} needs exactly one field of type geo_point in "
                             "this handle's config")
    return geo[0]


def _given(values: dict[str, Any], name: str) -> bool:
    return values.get(name) not in (None, "")


def around(entry: IndexEntry, values: dict[str, Any]
           ) -> tuple[GeoRadiusFilter | None, GeoSort | None]:
    """``aroundLatLng`` + ``aroundRadius`` (meters) as a radius filter on the handle's geo
    field, and Algolia's ranking by distance from ``aroundLatLng`` (closest first, then
    relevance) as a ``GeoSort``, set with ``aroundRadius: "all"`` too (which filters
    nothing). An engine without ``geo_radius`` can do neither: a 400 naming it. Algolia
    ignores both parameters when ``insideBoundingBox`` or ``insidePolygon`` is given, and so
    does searchport."""
    if ap.shapes(values, "insideBoundingBox") or ap.shapes(values, "insidePolygon"):
        return None, None
    radius = values.get("aroundRadius")
    everywhere = isinstance(radius, str) and radius.strip() == "all"
    if not _given(values, "aroundLatLng"):
        if _given(values, "aroundRadius") and not everywhere:
            raise InvalidRequest("aroundRadius needs aroundLatLng (aroundLatLngViaIP is not "
                                 "supported)")
        return None, None
    if not _given(values, "aroundRadius"):
        raise InvalidRequest("aroundLatLng without aroundRadius is not supported by "
                             "searchport (Algolia would pick a radius itself); give "
                             'aroundRadius in meters or "all", or use insideBoundingBox')
    meters = None if everywhere else ap.integer(values, "aroundRadius")
    if not everywhere and (meters is None or meters < 1):
        raise InvalidRequest('aroundRadius: must be an integer of meters >= 1, or "all"')
    lat, lng = _centre(values["aroundLatLng"])
    engine = entry.engine
    if not engine.capabilities.geo_radius:  # neither the radius nor the ranking by distance
        raise UnsupportedFeature("aroundLatLng" if meters is None else "aroundRadius",
                                 engine.name)
    field = _geo_field(entry, "aroundLatLng")
    nearest = GeoSort(field=field, lat=lat, lon=lng)
    if meters is None:
        return None, nearest
    return GeoRadiusFilter(field=field, lat=lat, lon=lng, radius_m=meters), nearest


def _centre(centre: Any) -> tuple[float, float]:
    if isinstance(centre, str):
        parts: list[Any] = centre.split(",")
    elif isinstance(centre, list):
        parts = centre
    else:
        parts = []
    try:
        lat, lng = (float(p) for p in parts if not isinstance(p, bool | list | dict))
    except (TypeError, ValueError):
        raise InvalidRequest('aroundLatLng: must be "lat, lng"') from None
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        raise InvalidRequest("aroundLatLng: latitude in [-90, 90], longitude in [-180, 180]")
    return lat, lng


def areas(entry: IndexEntry, values: dict[str, Any]) -> Filter | None:
    """``insideBoundingBox`` (one box or several: four numbers each, two opposite corners)
    or else ``insidePolygon`` (one polygon or several: three points or more, ``lat, lng``
    each), as one filter on the handle's geo field: a record inside any of them. Algolia
    ignores ``insidePolygon`` when ``insideBoundingBox`` is given, and so does searchport."""
    boxes = ap.shapes(values, "insideBoundingBox")
    polygons = [] if boxes else ap.shapes(values, "insidePolygon")
    if not boxes and not polygons:
        return None
    name = "insideBoundingBox" if boxes else "insidePolygon"
    engine = entry.engine
    if not engine.capabilities.geo_area:
        raise UnsupportedFeature(name, engine.name)
    field = _geo_field(entry, name)
    shapes = ([_box(field, numbers[k:k + 4]) for numbers in boxes
               for k in range(0, len(numbers), 4)] if boxes else
              [_polygon(field, numbers) for numbers in polygons])
    if len(shapes) > ap.MAX_SHAPES:
        raise InvalidRequest(f"{name}: at most {ap.MAX_SHAPES} shapes")
    return shapes[0] if len(shapes) == 1 else AnyOf(filters=tuple(shapes))


def _box(field: str, numbers: list[float]) -> GeoBoxFilter:
    if len(numbers) != 4:
        raise InvalidRequest("insideBoundingBox: each box is four numbers (lat1, lng1, lat2, "
                             "lng2)")
    lat1, lng1, lat2, lng2 = numbers
    if not all(-90 <= v <= 90 for v in (lat1, lat2)) or not all(
            -180 <= v <= 180 for v in (lng1, lng2)):
        raise InvalidRequest("insideBoundingBox: latitudes in [-90, 90], longitudes in "
                             "[-180, 180]")
    return GeoBoxFilter(field=field, north=max(lat1, lat2), south=min(lat1, lat2),
                        west=min(lng1, lng2), east=max(lng1, lng2))


def _polygon(field: str, numbers: list[float]) -> GeoPolygonFilter:
    if len(numbers) < 6 or len(numbers) % 2:
        raise InvalidRequest("insidePolygon: each polygon is three points or more, two "
                             "numbers each (lat1, lng1, lat2, lng2, lat3, lng3, ...)")
    points = tuple(GeoPoint(lat=numbers[k], lon=numbers[k + 1])
                   for k in range(0, len(numbers), 2))
    if not all(-90 <= p.lat <= 90 and -180 <= p.lon <= 180 for p in points):
        raise InvalidRequest("insidePolygon: latitudes in [-90, 90], longitudes in "
                             "[-180, 180]")
    return GeoPolygonFilter(field=field, points=points)
