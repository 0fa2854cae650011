"""One ``SearchQuery`` against an open index: hits, total, facets, stats, histograms, tiles.

Aggregations that see the same documents share one tantivy call: facets and stats without a
filter of their own, histograms and the geo grid all follow the full query. A facet or stats
field that is also filtered (disjunctive facets) gets a call of its own without its own
filters.
"""

from __future__ import annotations

from typing import Any

import msgspec
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


def run_search(ix: OpenIndex, query: SearchQuery) -> EngineResult:
    if query.geo_sort is not None:  # no distance sort in tantivy-py
        raise UnsupportedFeature("aroundLatLng", "tantivy")
    _check_names(ix, query)
    return _Search(ix, query).run()


class KeywordRows(msgspec.Struct, frozen=True, kw_only=True):
    """The page ``run_search`` answers a query with, as rows (``SEQ_FIELD``) in its order,
    with its total and suggestions (the keyword half of a hybrid search)."""

    seqs: list[int]
    total: int
    suggestions: list[str]


def keyword_rows(ix: OpenIndex, query: SearchQuery) -> KeywordRows:
    """``run_search``'s page, total and suggestions of ``query`` without its hits: no
    record is read and nothing is aggregated."""
    if query.geo_sort is not None:
        raise UnsupportedFeature("aroundLatLng", "tantivy")
    _check_names(ix, query)
    search = _Search(ix, query)
    full = search.combined(set())
    counted_total, page, _ = search.ranked(full)
    seqs = ix.searcher.fast_field_values(SEQ_FIELD, [address for _, address in page])
    return KeywordRows(seqs=[int(seq) for seq in seqs if seq is not None],
                       total=counted_total if counted_total is not None else ix.count(full),
                       suggestions=search.suggestions())


def filter_queries(ix: OpenIndex, query: SearchQuery) -> list[tantivy.Query]:
    """The query's filters, in its order, then those it implies and never leaves out of a
    count: the geo grid's bounds and the ids."""
    filters = [ix.filters.translate(flt) for flt in query.filters]
    if query.geo_grid is not None:
        geogrid.check_grid(ix.layout, query.geo_grid)
        if query.geo_grid.bounds is not None:
            filters.append(geogrid.bounds_query(ix.schema, query.geo_grid.field,
                                                query.geo_grid.bounds))
    return filters + id_queries(ix.schema, query.ids, query.excluded_ids)


class _Search:
    """One query against the index: its text match, filters and aggregations, read as
    tantivy sees them; ``run`` makes the result."""

    def __init__(self, ix: OpenIndex, query: SearchQuery) -> None:
        self.ix, self.query = ix, query
        self.match = match = ix.text.build(query.text, query.search_fields,
                                           query.prefix_last_word, query.required_words())
        self.filters = filter_queries(ix, query)
        self.facet_specs = [facet_aggs.facet_spec(ix.layout, name) for name in query.facets]
        self.stats_specs = [facet_aggs.stats_spec(ix.layout, name) for name in query.stats]
        self.histogram_specs = [(facet_aggs.histogram_spec(ix.layout, h.field), h.interval)
                                for h in query.histograms]
        self.marker = (highlighter(match, highlight_specs(ix.layout, query.highlight_fields, match))
                       if query.highlight and match is not None else None)
        # a facet's (or stats') own filters, left out of its counts when they are disjunctive
        self.own_filters: dict[str, set[int]] = {}
        if query.disjunctive_facets:
            for spec in (*self.facet_specs, *self.stats_specs):
                mine = {j for j, flt in enumerate(query.filters) if filter_field(flt) == spec.name}
                if mine:
                    self.own_filters[spec.name] = mine

    def combined(self, skip: set[int], scored: bool = False) -> tantivy.Query:
        """The query and the filters but those in ``skip``; unscored unless ``scored``."""
        kept = [unscored(q) for i, q in enumerate(self.filters) if i not in skip]
        if self.match is None:
            return must(kept)
        return must([self.match.query if scored else self.match.matching, *kept])

    def run(self) -> EngineResult:
        ix, query = self.ix, self.query
        full = self.combined(set())
        counted_total, hits, every = self._page(full)
        # keyword facets counted by rank (ranked_facets.py): each rank's value, or None
        by_rank = [ix.ranked.values(spec) for spec in self.facet_specs]
        results, full = self._aggregate(full, counted_total, every, by_rank)
        total = (counted_total if counted_total is not None else
                 int(results[_TOTAL]["value"]) if _TOTAL in results else ix.count(full))
        histograms = {
            spec.name: facet_aggs.buckets(results[f"histogram{i}"]) if results else []
            for i, (spec, _) in enumerate(self.histogram_specs)
        }
        clusters = (_clusters(ix, query, results.get("grid"))
                    if query.geo_grid is not None else None)
        return EngineResult(hits=hits, total=total,
                            facets=self._facet_counts(full, results, total, by_rank),
                            histograms=histograms, geo_clusters=clusters,
                            stats=self._stats(results), suggestions=self.suggestions())

    def suggestions(self) -> list[str]:
        match, field = self.match, self.query.suggest_field
        if not field or match is None:
            return []
        return did_you_mean(self.ix, list(match.words), field)

    def ranked(self, full: tantivy.Query
               ) -> tuple[int | None, list[tuple[float | None, Any]], list[Any] | None]:
        """The page's (tier, address) pairs, with the total when the page's search counted
        it and every match when it found them all (``sorted_page``)."""
        ix, query, match = self.ix, self.query, self.match
        first = None
        if (match is not None and match.exact is not None
                and (match.exact_most is None
                     or match.exact_most >= query.offset + query.limit)):
            # (fewer documents than the page needs match every word without a typo: no try)
            first = (must([match.exact, *(unscored(q) for q in self.filters)]),
                     match.exact_floor)
        return sorted_page(ix, self.combined(set(), scored=True), query.sort, query.offset,
                           query.limit, matching=full, first=first)

    def _page(self, full: tantivy.Query) -> tuple[int | None, list[Hit], list[Any] | None]:
        """The page's hits, with the total when the page's search counted it and every
        match when it found them all (``sorted_page``)."""
        ix, query = self.ix, self.query
        counted_total, page, every = self.ranked(full)
        hits = []
        for score, address in page:
            row = ix.row(address)
            hit = ix.hit(row, score, query.fields)
            if self.marker is not None:
                hit.highlights = self.marker.highlight(row, (address.segment_ord, address.doc))
            hits.append(hit)
        return counted_total, hits, every

    def _shared_requests(self, counted_total: int | None,
                         by_rank: list[ranked_facets.Named]) -> dict[str, Any]:
        """The aggregations over the full query: facets and stats with no filter of their
        own, histograms, the grid, and the total when the page did not count it."""
        query = self.query
        shared: dict[str, Any] = {}
        for i, spec in enumerate(self.facet_specs):
            if spec.name not in self.own_filters:
                values = by_rank[i]
                shared[f"facet{i}"] = (_terms_request(self.ix, spec, query.max_facet_values)
                                       if values is None else ranked_facets.request(spec))
        for i, spec in enumerate(self.stats_specs):
            if spec.name not in self.own_filters:
                shared[f"stats{i}"] = facet_aggs.stats_request(spec)
        for i, (spec, interval) in enumerate(self.histogram_specs):
            shared[f"histogram{i}"] = facet_aggs.histogram_request(spec, interval)
        if query.geo_grid is not None:
            shared["grid"] = geogrid.grid_request(query.geo_grid)
        if counted_total is None and shared:  # the page came from the exact words: count here
            shared[_TOTAL] = {"value_count": {"field": SEQ_FIELD}}
        return shared

    def _aggregate(self, full: tantivy.Query, counted_total: int | None,
                   every: list[Any] | None,
                   by_rank: list[ranked_facets.Named]) -> tuple[dict[str, Any], tantivy.Query]:
        """The shared aggregations' results, in one tantivy call; and the full query, as
        the documents it matches when the page's search found them all."""
        ix = self.ix
        shared = self._shared_requests(counted_total, by_rank)
        results: dict[str, Any] = {}
        by_ranks = {int(key[len("facet"):]) for key in shared if key.startswith("facet")
                    and by_rank[int(key[len("facet"):])] is not None}
        if every and len(by_ranks) == len(shared):
            # every match is known and only facets counted by rank are asked: read their ranks
            for i in by_ranks:
                results[f"facet{i}"] = ranked_facets.counted(ix.searcher, self.facet_specs[i],
                                                             by_rank[i] or {}, every)
            shared = {}
        elif every is not None:  # every match is known: name them instead of searching again
            full = ix.documents(every)
        if shared and (counted_total is None or counted_total > 0):
            results = ix.aggregate(full, shared)
            for i, values in enumerate(by_rank):
                if values is not None and f"facet{i}" in results:
                    results[f"facet{i}"] = ranked_facets.named(values, results[f"facet{i}"])
        return results, full

    def _facet_counts(self, full: tantivy.Query, results: dict[str, Any], total: int,
                      by_rank: list[ranked_facets.Named]) -> dict[str, list[FacetValue]]:
        """Each facet's values: from the shared results, or counted without its own
        filters."""
        facet_counts: dict[str, list[FacetValue]] = {}
        for i, spec in enumerate(self.facet_specs):
            skip = self.own_filters.get(spec.name)
            scope = full if skip is None else self.combined(skip)
            counted = results.get(f"facet{i}") if skip is None else None
            facet_counts[spec.name] = count_values(self.ix, scope, spec,
                                                   self.query.max_facet_values, counted,
                                                   total > 0 or skip is not None, by_rank[i])
        return facet_counts

    def _stats(self, results: dict[str, Any]) -> dict[str, FieldStats]:
        """Each stats field's figures: from the shared results, or computed without its own
        filters."""
        stats: dict[str, FieldStats] = {}
        for i, spec in enumerate(self.stats_specs):
            skip = self.own_filters.get(spec.name)
            found = (results.get(f"stats{i}") if skip is None else
                     self.ix.aggregate(self.combined(skip),
                                       {"s": facet_aggs.stats_request(spec)})["s"])
            field_stats = facet_aggs.field_stats(found)
            if field_stats is not None:
                stats[spec.name] = field_stats
        return stats


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
