"""Domain filters as Elasticsearch/OpenSearch query clauses (filter context, unscored).

- A filter on a field inside ``nested`` objects is wrapped in a ``nested`` query, so it tests
  one object at a time: "some object matches", as "some value matches" on an array.
- Negations stay outside the wrapper: ``bool.must_not`` of the wrapped clause is "no object
  matches" (the complement, documents without the field included), never "some object does
  not match". A ``bool`` with only ``must_not`` matches every other document.
- ``AnyOf`` is ``bool.should`` with ``minimum_should_match: 1``, each member wrapped on its
  own path; ``AllOf`` is ``bool.filter`` of its members; ``Negated`` is ``bool.must_not``
  of its filter's clause. They nest freely.
"""

from __future__ import annotations

from typing import Any

from searchport.adapters.elastic.fields import FieldCatalog
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    Filter,
    GeoBoxFilter,
    GeoPolygonFilter,
    GeoRadiusFilter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)
from searchport.domain.shaping import format_number

Json = dict[str, Any]


def filter_clause(f: Filter, catalog: FieldCatalog) -> Json:
    """One filter as one query clause."""
    match f:
        case AllOf(filters=members):
            return {"bool": {"filter": [filter_clause(m, catalog) for m in members]}}
        case AnyOf(filters=members):
            return {"bool": {"should": [filter_clause(m, catalog) for m in members],
                             "minimum_should_match": 1}}
        case Negated(filter=inner):
            return _none_of(filter_clause(inner, catalog))
        case TermFilter(field=field, values=values):
            return nest(catalog, field, _terms(catalog.exact(field), values))
        case RangeFilter(field=field, min=low, max=high):
            bounds = {k: v for k, v in (("gt" if f.min_exclusive else "gte", low),
                                        ("lt" if f.max_exclusive else "lte", high))
                      if v is not None}
            return nest(catalog, field, {"range": {catalog.exact(field): bounds}})
        case NotFilter(field=field, values=values):
            return _none_of(nest(catalog, field, _terms(catalog.exact(field), values)))
        case ExistsFilter(field=field, exists=True):
            return nest(catalog, field, {"exists": {"field": field}})
        case ExistsFilter(field=field):
            return _none_of(nest(catalog, field, {"exists": {"field": field}}))
        case GeoRadiusFilter(field=field, lat=lat, lon=lon, radius_m=meters):
            # arc distance (the default): great-circle, as Algolia's aroundRadius
            return nest(catalog, field, {"geo_distance": {
                "distance": f"{format_number(meters)}m", field: {"lat": lat, "lon": lon}}})
        case GeoBoxFilter(field=field):
            return nest(catalog, field, {"geo_bounding_box": {field: {
                "top_left": {"lat": f.north, "lon": f.west},
                "bottom_right": {"lat": f.south, "lon": f.east}}}})
        case GeoPolygonFilter(field=field, points=points):
            return nest(catalog, field, {"geo_polygon": {field: {
                "points": [{"lat": p.lat, "lon": p.lon} for p in points]}}})
    raise TypeError(f"unknown filter {f!r}")


def nest(catalog: FieldCatalog, field: str, clause: Json) -> Json:
    """``clause`` on ``field``, inside a ``nested`` query when the field has a nested path."""
    path = catalog.nested_path(field)
    return clause if path is None else {"nested": {"path": path, "query": clause}}


def all_of(clauses: list[Json]) -> Json:
    return {"bool": {"filter": clauses}}


def _none_of(clause: Json) -> Json:
    return {"bool": {"must_not": [clause]}}


def _terms(field: str, values: tuple[Any, ...]) -> Json:
    if len(values) == 1:
        return {"term": {field: values[0]}}
    return {"terms": {field: list(values)}}
