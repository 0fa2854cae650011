"""``geoGrid``: documents clustered by web-mercator tile, as one terms aggregation.

Every geo point is indexed with its tile number at each zoom (see ``geo``), so the tiles
of any precision are the buckets of one fast field; averages give the centroids and a
minimum per tile names the sample document (the first of the tile in source order).
"""

from __future__ import annotations

from typing import Any

import tantivy

from searchport.adapters.tantivy.filters import box_query, field_spec
from searchport.adapters.tantivy.geo import tile_key
from searchport.adapters.tantivy.schema import (
    MAX_ZOOM,
    SEQ_FIELD,
    IndexLayout,
    lat_field,
    lon_field,
    tile_field,
)
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import GeoBounds, GeoBoxFilter, GeoGridSpec
from searchport.domain.results import EngineGeoCluster

# Most-populated tiles first; a map shows a few hundred markers at most.
CLUSTER_LIMIT = 1000


def check_grid(layout: IndexLayout, spec: GeoGridSpec) -> None:
    field = field_spec(layout, spec.field, "build a geoGrid of")
    if field.type != "geo_point":
        raise InvalidRequest(
            f'Cannot build a geoGrid of "{spec.field}": it is a {field.type} field, not a '
            f"geo_point"
        )
    if not 0 <= spec.precision <= MAX_ZOOM:
        raise InvalidRequest(f"geoGrid precision must be between 0 and {MAX_ZOOM}")


def bounds_query(schema: tantivy.Schema, field: str, bounds: GeoBounds) -> tantivy.Query:
    """Points inside the box; a box whose left edge is east of its right edge crosses
    the antimeridian."""
    top, bottom = bounds.top_left.lat, bounds.bottom_right.lat
    if bottom > top:
        raise InvalidRequest("geoGrid bounds: top_left must be north of bottom_right")
    return box_query(schema, GeoBoxFilter(field=field, north=top, south=bottom,
                                          west=bounds.top_left.lon,
                                          east=bounds.bottom_right.lon))


def grid_request(spec: GeoGridSpec) -> dict[str, Any]:
    return {
        "terms": {
            "field": tile_field(spec.field, spec.precision),
            "size": CLUSTER_LIMIT,
            "segment_size": CLUSTER_LIMIT * 10,
        },
        "aggs": {
            "lat": {"avg": {"field": lat_field(spec.field)}},
            "lon": {"avg": {"field": lon_field(spec.field)}},
            # the tile's first row in source order; a min is cheaper than a top_hits
            "sample": {"min": {"field": SEQ_FIELD}},
        },
    }


def clusters(spec: GeoGridSpec, result: dict[str, Any]) -> list[tuple[EngineGeoCluster, int]]:
    """(cluster without its hit, the sample's seq), most documents first, then by x, y."""
    found = []
    for bucket in result["buckets"]:
        key, x, y = tile_key(int(bucket["key"]), spec.precision)
        sample = bucket["sample"]["value"]
        seq = int(sample) if sample is not None else -1
        cluster = EngineGeoCluster(lat=float(bucket["lat"]["value"]),
                                   lng=float(bucket["lon"]["value"]),
                                   count=int(bucket["doc_count"]), key=key)
        found.append(((-cluster.count, x, y), cluster, seq))
    found.sort(key=lambda entry: entry[0])
    return [(cluster, seq) for _, cluster, seq in found]
