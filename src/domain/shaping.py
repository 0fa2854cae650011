"""From engine results to response bodies: metadata, aliases, facet order, histogram gaps."""

from __future__ import annotations

import math
import operator
from typing import Any

from searchport.domain.errors import InvalidRequest
from searchport.domain.fields import METADATA, FieldMap
from searchport.domain.query import HistogramSpec
from searchport.domain.responses import GeoCluster, SearchHit
from searchport.domain.results import Bucket, EngineGeoCluster, FacetValue, Hit

MAX_HISTOGRAM_BUCKETS = 2_000


def shape_hit(fields: FieldMap, hit: Hit) -> SearchHit:
    """Metadata first and always winning over stored fields of the same name. Without
    aliases a hit's own dicts go in as they are (a hit is shaped once): its highlights
    uncopied, its stored fields copied once, into the shaped hit."""
    aliased, source = fields.has_aliases, hit.source
    shaped: dict[str, Any] = {
        "objectID": hit.id,
        "_index": hit.index,
        "_score": hit.score,
        "_highlights": fields.public_keys(hit.highlights) if aliased else hit.highlights,
    }
    shaped.update(source if not aliased and METADATA.isdisjoint(source)
                  else fields.document(source))
    return shaped


def shape_document(fields: FieldMap, hit: Hit) -> dict[str, Any]:
    shaped: dict[str, Any] = {"objectID": hit.id, "_index": hit.index}
    shaped.update(fields.document(hit.source))
    return shaped


_BY_VALUE = operator.attrgetter("value")
_BY_COUNT = operator.attrgetter("count")


def order_facet_values(values: list[FacetValue], limit: int) -> list[FacetValue]:
    """By count, most first, then by value: two stable sorts with C-level keys (a
    descending sort keeps equal counts in the order of the first)."""
    ordered = sorted(values, key=_BY_VALUE)
    ordered.sort(key=_BY_COUNT, reverse=True)
    return ordered[:limit]


def shape_facets(
    fields: FieldMap, facets: dict[str, list[FacetValue]], limit: int
) -> dict[str, list[FacetValue]]:
    return {fields.public(k): order_facet_values(v, limit) for k, v in facets.items()}


def fill_histogram(spec: HistogramSpec, buckets: list[Bucket]) -> list[Bucket]:
    """Ascending buckets with the empty ones between the first and last non-empty bucket."""
    present = sorted((b for b in buckets if b.count > 0), key=lambda b: b.key)
    if not present:
        return []
    first = present[0].key
    span = (present[-1].key - first) / spec.interval  # infinite for a tiny interval
    if not math.isfinite(span) or round(span) + 1 > MAX_HISTOGRAM_BUCKETS:
        raise InvalidRequest(
            f"The histogram interval for '{spec.field}' is too small: it would give more "
            f"than {MAX_HISTOGRAM_BUCKETS} buckets"
        )
    slots = round(span) + 1
    counts = {round((b.key - first) / spec.interval): b.count for b in present}
    return [
        Bucket(key=_clean(first + i * spec.interval), count=counts.get(i, 0)) for i in range(slots)
    ]


def _clean(key: float) -> float:
    rounded = round(float(key), 9)  # float(): an int has no is_integer() before 3.12
    return int(rounded) if rounded.is_integer() else rounded


def shape_clusters(fields: FieldMap, clusters: list[EngineGeoCluster]) -> list[GeoCluster]:
    return [
        GeoCluster(
            lat=c.lat,
            lng=c.lng,
            count=c.count,
            key=c.key,
            hit=shape_hit(fields, c.hit) if c.hit is not None else None,
        )
        for c in clusters
    ]


def format_number(value: int | float) -> str:
    """A number as JSON clients write it: ``3`` rather than ``3.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)
