"""A raw query kept inside a key's forced filters (a scoped or secured key's).

The body's query becomes ``{"bool": {"must": [<its query>], "filter": [<forced>]}}``, so
every hit and every aggregation bucket satisfies the forced filters. What could still read
records past that query is refused with a 403 naming it, never rewritten:

- a top-level key outside the known search-body keys (``suggest`` reads the whole index's
  terms, ``knn``, ``retriever``, ``rank`` and ``sub_searches`` retrieve beside the query,
  ``pit`` and ``indices_boost`` pick what is searched);
- an aggregation other than the bucket and metric kinds below (``global`` ignores the
  query, ``significant_terms`` compares with the whole index, ``children``/``parent``
  cross to other documents), and ``min_doc_count: 0`` (terms the filters exclude);
- anything that reads a document by id or another document's values (a terms lookup,
  ``more_like_this`` documents, a stored percolate or indexed shape, a lookup runtime
  field), and the join queries ``has_child``, ``has_parent`` and ``parent_id``.
"""

from __future__ import annotations

from typing import Any

from searchport.adapters.elastic.raw_query import index_reads, keys_in, where_text
from searchport.domain.errors import Forbidden

Json = dict[str, Any]

BODY_KEYS = frozenset({
    "query", "from", "size", "sort", "_source", "fields", "docvalue_fields", "stored_fields",
    "highlight", "aggs", "aggregations", "post_filter", "track_total_hits", "timeout",
    "min_score", "collapse", "search_after", "explain", "version", "seq_no_primary_term",
    "track_scores", "terminate_after", "script_fields", "runtime_mappings", "rescore",
})
AGGREGATIONS = frozenset({
    "terms", "multi_terms", "histogram", "date_histogram", "auto_date_histogram", "range",
    "date_range", "ip_range", "filter", "filters", "missing", "nested", "reverse_nested",
    "composite", "geohash_grid", "geotile_grid", "avg", "sum", "min", "max", "stats",
    "extended_stats", "value_count", "cardinality", "percentiles", "percentile_ranks",
    "top_hits", "geo_bounds", "geo_centroid", "median_absolute_deviation", "weighted_avg",
})
AGG_KEYS = frozenset({"aggs", "aggregations", "meta"})
JOIN_QUERIES = frozenset({"has_child", "has_parent", "parent_id"})


def within_filters(body: Json, clauses: list[Json]) -> Json:
    """``body`` with its query inside ``clauses``; ``Forbidden`` for what could escape."""
    for key in body:
        if key not in BODY_KEYS:
            raise _refused(f'"{key}"')
    for where, construct, _ in index_reads(body):
        raise _refused(f"{construct} ({where_text(where)})")
    _check_joins(body)
    for name in ("aggs", "aggregations"):
        if name in body:
            _check_aggregations(body[name], (name,))
    query = body.get("query", {"match_all": {}})
    return {**body, "query": {"bool": {"must": [query], "filter": clauses}}}


def _refused(what: str) -> Forbidden:
    return Forbidden(f"The raw query uses {what}, which could read records outside the "
                     "filters this API key forces; it is refused under this key")


def _check_joins(body: Json) -> None:
    for key, here in keys_in(body):
        if key in JOIN_QUERIES:
            raise _refused(f"a {key} query ({where_text(here)})")


def _check_aggregations(aggs: Any, where: tuple[str, ...]) -> None:
    if not isinstance(aggs, dict):
        return  # the engine says what is wrong with it
    for name, spec in aggs.items():
        if not isinstance(spec, dict):
            continue
        here = (*where, str(name))
        for kind, settings in spec.items():
            if kind in AGG_KEYS:
                continue
            if kind not in AGGREGATIONS:
                raise _refused(f'a "{kind}" aggregation ({where_text(here)})')
            if isinstance(settings, dict) and settings.get("min_doc_count") == 0:
                raise _refused(f"min_doc_count 0 ({where_text((*here, str(kind)))})")
        for sub in ("aggs", "aggregations"):
            if sub in spec:
                _check_aggregations(spec[sub], (*here, sub))
