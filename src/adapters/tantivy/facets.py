"""Facet counts, histograms and numeric stats, as tantivy aggregations.

Terms buckets come back from tantivy in no reliable order among equal counts, so the
request asks for more buckets than needed and the order (count desc, then value in the
field's natural order) is made here; when a tie reaches past what was fetched, every
value is fetched once more.
"""

from __future__ import annotations

from typing import Any

from searchport.adapters.tantivy.filters import field_spec
from searchport.adapters.tantivy.schema import FACETABLE, NUMERIC, FieldSpec, IndexLayout
from searchport.domain.errors import InvalidRequest
from searchport.domain.results import Bucket, FacetValue, FieldStats
from searchport.domain.shaping import format_number

ALL_VALUES = 65_000  # tantivy refuses aggregations of more buckets than this
FEW_VALUES = 2_000  # fetching every value of such a field costs no more than the top ones
_SLACK = 20


def facet_spec(layout: IndexLayout, name: str) -> FieldSpec:
    return _typed_spec(layout, name, "facet on", FACETABLE,
                       "facet on a keyword, number, boolean or date field")


def histogram_spec(layout: IndexLayout, name: str) -> FieldSpec:
    return _typed_spec(layout, name, "build a histogram of", NUMERIC,
                       "use an integer or float field")


def stats_spec(layout: IndexLayout, name: str) -> FieldSpec:
    return _typed_spec(layout, name, "compute stats of", NUMERIC,
                       "use an integer or float field")


def _typed_spec(layout: IndexLayout, name: str, action: str, allowed: frozenset[str],
                advice: str) -> FieldSpec:
    """The field's spec, or a 400 saying what ``action`` needs."""
    spec = field_spec(layout, name, action)
    if spec.type not in allowed:
        raise InvalidRequest(f'Cannot {action} "{name}": it is a {spec.type} field; {advice}')
    return spec


def stats_request(spec: FieldSpec) -> dict[str, Any]:
    return {"stats": {"field": spec.name}}


def field_stats(result: dict[str, Any] | None) -> FieldStats | None:
    """tantivy's ``stats`` answer; ``None`` when no matching document has a value."""
    if not result or not result.get("count") or result.get("min") is None:
        return None
    return FieldStats(min=float(result["min"]), max=float(result["max"]),
                      avg=float(result["avg"]), sum=float(result["sum"]),
                      count=int(result["count"]))


def terms_request(spec: FieldSpec, wanted: int, everything: bool = False) -> dict[str, Any]:
    size = ALL_VALUES if everything else min(ALL_VALUES, wanted * 2 + _SLACK)
    # segment_size: exact counts even when a source ends up in several segments.
    return {"terms": {"field": spec.name, "size": size,
                      "segment_size": max(size, min(ALL_VALUES, size * 10))}}


def histogram_request(spec: FieldSpec, interval: float) -> dict[str, Any]:
    return {"histogram": {"field": spec.name, "interval": interval}}


def needs_all_values(result: dict[str, Any], wanted: int) -> bool:
    """True when the fetched buckets may not settle the order of the first ``wanted``."""
    buckets = result["buckets"]
    if not result.get("sum_other_doc_count") or len(buckets) <= wanted:
        return False
    counts = sorted((b["doc_count"] for b in buckets), reverse=True)
    return counts[wanted - 1] == counts[-1] if wanted > 0 else False


def facet_values(spec: FieldSpec, result: dict[str, Any], limit: int | None = None
                 ) -> list[FacetValue]:
    """The returned buckets, formatted and ordered, the first ``limit`` of them (all when
    ``None``)."""
    if spec.type == "keyword":  # the common case, in one sort of (count, value) pairs
        ordered = sorted((-b["doc_count"], str(b["key"])) for b in result["buckets"]
                         if b["doc_count"] > 0)
        return [FacetValue(value=key, count=-count) for count, key in ordered[:limit]]
    entries = [(_natural_key(spec, b), b) for b in result["buckets"] if b["doc_count"] > 0]
    entries.sort(key=lambda entry: (-entry[1]["doc_count"], entry[0]))
    return [FacetValue(value=_format(spec, bucket), count=bucket["doc_count"])
            for _, bucket in entries[:limit]]


def buckets(result: dict[str, Any]) -> list[Bucket]:
    return [Bucket(key=float(b["key"]), count=int(b["doc_count"])) for b in result["buckets"]]


def _format(spec: FieldSpec, bucket: dict[str, Any]) -> str:
    key = bucket["key"]
    if spec.type == "boolean":
        return "true" if key in (1, True, "true") else "false"
    if isinstance(key, str):
        return key  # keywords, and dates (tantivy writes them as RFC 3339)
    return format_number(int(key) if spec.type == "integer" else float(key))


def _natural_key(spec: FieldSpec, bucket: dict[str, Any]) -> Any:
    key = bucket["key"]
    if spec.type in NUMERIC or spec.type == "boolean":
        return float(key) if not isinstance(key, str) else float(key == "true")
    return str(key)
