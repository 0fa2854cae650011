"""One ``SearchQuery`` against an open index: hits, total, facets, stats, histograms, tiles.

Aggregations that see the same documents share one tantivy call: facets and stats without a
filter of their own, histograms and the geo grid all follow the full query. A facet or stats
field that is also filtered (disjunctive facets) gets a call of its own without its own
filters.
"""

from __future__ import annotations

from typing import Any

import tantivy

from searchport.adapters.tantivy import facets as facet_aggs
from searchport.adapters.tantivy import geogrid, ranked_facets
from searchport.adapters.tantivy.filters import field_spec, id_queries, must, unscored
from searchport.adapters.tantivy.highlight import (
    highlight_specs,
    highlighter,
    requested_highlights,
)
from searchport.adapters.tantivy.reader import OpenIndex
from searchport.adapters.tantivy.schema import SEQ_FIELD, FieldSpec
from searchport.adapters.tantivy.sorting import sorted_page
from searchport.adapters.tantivy.suggest import did_you_mean
from searchport.domain.errors import UnsupportedFeature
from searchport.domain.query import FacetValuesQuery, SearchQuery, filter_field
from searchport.domain.results import (
    EngineGeoCluster,
    EngineResult,
    FacetValue,
    FieldStats,
    Hit,
)

_TOTAL = "total"


def _check_names(ix: OpenIndex, query: SearchQuery) -> None:
    """The fields a query returns, highlights and searches are the index's own, whether or
    not the query has words to match (a 400 naming the first that is not)."""
    ix.check_returned(query.fields)
    if query.highlight:
        requested_highlights(ix.layout, query.highlight_fields)
    for weighted in query.search_fields:
        field_spec(ix.layout, weighted.field, "search")


def filter_queries(ix: OpenIndex, query: SearchQuery) -> list[tantivy.Query]:
    """Everything that narrows the query's hits: its filters (in order, so that index
    ``i`` is ``query.filters[i]``), then the geo grid's bounds and the ids."""
    filters = [ix.filters.translate(flt) for flt in query.filters]
    if query.geo_grid is not None:
        geogrid.check_grid(ix.layout, query.geo_grid)
        if query.geo_grid.bounds is not None:
            filters.append(geogrid.bounds_query(ix.schema, query.geo_grid.field,
                                                query.geo_grid.bounds))
    return filters + id_queries(ix.schema, query.ids, query.excluded_ids)


def run_search(ix: OpenIndex, query: SearchQuery) -> EngineResult:
    if query.geo_sort is not None:  # no distance sort in tantivy-py
        raise UnsupportedFeature("aroundLatLng", "tantivy")
    _check_names(ix, query)
    match = ix.text.build(query.text, query.search_fields, query.prefix_last_word,
                          query.required_words())
    filters = filter_queries(ix, query)
    facet_specs = [facet_aggs.facet_spec(ix.layout, name) for name in query.facets]
    stats_specs = [facet_aggs.stats_spec(ix.layout, name) for name in query.stats]
    histogram_specs = [(facet_aggs.histogram_spec(ix.layout, h.field), h.interval)
                       for h in query.histograms]
    marker = (highlighter(match, highlight_specs(ix.layout, query.highlight_fields, match))
                   if query.highlight and match is not None else None)

    def combined(skip: set[int], scored: bool = False) -> tantivy.Query:
        """The query and the filters but those in ``skip``; unscored unless ``scored``."""
        kept = [unscored(q) for i, q in enumerate(filters) if i not in skip]
        if match is None:
            return must(kept)
        return must([match.query if scored else match.matching, *kept])

    full = combined(set())
    first = None
    if (match is not None and match.exact is not None
            and (match.exact_most is None or match.exact_most >= query.offset + query.limit)):
        # (fewer documents than the page needs match every word without a typo: no try)
        first = (must([match.exact, *(unscored(q) for q in filters)]), match.exact_floor)
    counted_total, page, every = sorted_page(ix, combined(set(), scored=True), query.sort,
                                     query.offset, query.limit, matching=full, first=first)
    hits = []
    for score, address in page:
        row = ix.row(address)
        hit = ix.hit(row, score, query.fields)
        if marker is not None:
            hit.highlights = marker.highlight(row, (address.segment_ord, address.doc))
        hits.append(hit)

    # Aggregations over the full query: facets with no filter of their own, histograms,
    # the grid. Filters at index >= len(query.filters) (the geo bounds, the ids) are never
    # skipped.
    shared: dict[str, Any] = {}
    # a facet's (or stats') own filters, left out of its counts when they are disjunctive
    own_filters: dict[str, set[int]] = {}
    if query.disjunctive_facets:
        for spec in (*facet_specs, *stats_specs):
            mine = {j for j, flt in enumerate(query.filters) if filter_field(flt) == spec.name}
            if mine:
                own_filters[spec.name] = mine
    # keyword facets counted by rank (ranked_facets.py): each rank's value, or None
    by_rank = [ix.ranked.values(spec) for spec in facet_specs]
    for i, spec in enumerate(facet_specs):
        if spec.name not in own_filters:
            values = by_rank[i]
            shared[f"facet{i}"] = (_terms_request(ix, spec, query.max_facet_values)
                                   if values is None else ranked_facets.request(spec))
    for i, spec in enumerate(stats_specs):
        if spec.name not in own_filters:
            shared[f"stats{i}"] = facet_aggs.stats_request(spec)
    for i, (spec, interval) in enumerate(histogram_specs):
        shared[f"histogram{i}"] = facet_aggs.histogram_request(spec, interval)
    if query.geo_grid is not None:
        shared["grid"] = geogrid.grid_request(query.geo_grid)
    if counted_total is None and shared:  # the page came from the exact words: count here
        shared[_TOTAL] = {"value_count": {"field": SEQ_FIELD}}
    results: dict[str, Any] = {}
    by_ranks = {int(key[len("facet"):]) for key in shared if key.startswith("facet")
                and by_rank[int(key[len("facet"):])] is not None}
    if every and len(by_ranks) == len(shared):
        # every match is known and only facets counted by rank are asked: read their ranks
        for i in by_ranks:
            results[f"facet{i}"] = ranked_facets.counted(ix.searcher, facet_specs[i],
                                                         by_rank[i] or {}, every)
        shared = {}
    elif every is not None:  # every match is known: name them instead of searching again
        full = ix.documents(every)
    if shared and (counted_total is None or counted_total > 0):
        results = ix.aggregate(full, shared)
        for i, values in enumerate(by_rank):
            if values is not None and f"facet{i}" in results:
                results[f"facet{i}"] = ranked_facets.named(values, results[f"facet{i}"])
    total = (counted_total if counted_total is not None else
             int(results[_TOTAL]["value"]) if _TOTAL in results else ix.count(full))

    facet_counts: dict[str, list[FacetValue]] = {}
    for i, spec in enumerate(facet_specs):
        skip = own_filters.get(spec.name)
        scope = full if skip is None else combined(skip)
        counted = results.get(f"facet{i}") if skip is None else None
        facet_counts[spec.name] = count_values(ix, scope, spec, query.max_facet_values,
                                               counted, total > 0 or skip is not None,
                                               by_rank[i])
    stats: dict[str, FieldStats] = {}
    for i, spec in enumerate(stats_specs):
        skip = own_filters.get(spec.name)
        found = (results.get(f"stats{i}") if skip is None else
                 ix.aggregate(combined(skip), {"s": facet_aggs.stats_request(spec)})["s"])
        field_stats = facet_aggs.field_stats(found)
        if field_stats is not None:
            stats[spec.name] = field_stats
    histograms = {
        spec.name: facet_aggs.buckets(results[f"histogram{i}"]) if results else []
        for i, (spec, _) in enumerate(histogram_specs)
    }
    clusters = (_clusters(ix, query, results.get("grid"))
                if query.geo_grid is not None else None)
    suggestions = (did_you_mean(ix, list(match.words), query.suggest_field)
                   if query.suggest_field and match is not None else [])
    return EngineResult(hits=hits, total=total, facets=facet_counts, histograms=histograms,
                        geo_clusters=clusters, stats=stats, suggestions=suggestions)


def count_values(ix: OpenIndex, scope: tantivy.Query, spec: FieldSpec, limit: int,
                 counted: dict[str, Any] | list[FacetValue] | None = None,
                 any_match: bool = True, by_rank: dict[int, str] | None = None
                 ) -> list[FacetValue]:
    """The top ``limit`` values of a facet within ``scope``, exactly ordered (counted by
    rank when ``by_rank`` names each rank's value: then ``counted`` is every value, in
    order)."""
    if not any_match or limit <= 0:
        return []
    if counted is None and by_rank is not None:
        counted = ranked_facets.named(
            by_rank, ix.aggregate(scope, {"f": ranked_facets.request(spec)})["f"])
    if isinstance(counted, list):
        return counted[:limit]
    found: dict[str, Any] = (ix.aggregate(scope, {"f": _terms_request(ix, spec, limit)})["f"]
                             if counted is None else counted)
    if facet_aggs.needs_all_values(found, limit):
        request = facet_aggs.terms_request(spec, limit, everything=True)
        found = ix.aggregate(scope, {"f": request})["f"]
    return facet_aggs.facet_values(spec, found, limit)


def _terms_request(ix: OpenIndex, spec: FieldSpec, limit: int) -> dict[str, Any]:
    # All values of a small field at once: one call settles every tie at the cut.
    everything = ix.distinct_values(spec.name) <= facet_aggs.FEW_VALUES
    return facet_aggs.terms_request(spec, limit, everything)


def facet_search(ix: OpenIndex, query: FacetValuesQuery) -> list[FacetValue]:
    """Values of a facet containing ``query.text`` (case-insensitive), counted under the
    query's filters."""
    spec = facet_aggs.facet_spec(ix.layout, query.field)
    scope = must([unscored(ix.filters.translate(flt)) for flt in query.filters])
    if query.limit <= 0:
        return []
    request = facet_aggs.terms_request(spec, query.limit, everything=bool(query.text))
    counted = ix.aggregate(scope, {"f": request})["f"]
    if not query.text:
        return count_values(ix, scope, spec, query.limit, counted)
    needle = query.text.casefold()
    found = [v for v in facet_aggs.facet_values(spec, counted) if needle in v.value.casefold()]
    return found[: query.limit]


def _clusters(ix: OpenIndex, query: SearchQuery, result: dict[str, Any] | None
              ) -> list[EngineGeoCluster]:
    if result is None or query.geo_grid is None:
        return []
    found = geogrid.clusters(query.geo_grid, result)
    addresses = ix.addresses_by_seq([seq for _, seq in found if seq >= 0])
    for cluster, seq in found:
        address = addresses.get(seq)
        if address is not None:
            cluster.hit = _sample_hit(ix, address, query)
    return [cluster for cluster, _ in found]


def _sample_hit(ix: OpenIndex, address: Any, query: SearchQuery) -> Hit:
    return ix.hit(ix.row(address), None, query.fields)
