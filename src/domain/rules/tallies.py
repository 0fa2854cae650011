"""What an engine counted over the organic hits and over the promoted records that match
the search, added up: facet counts, ``FieldStats`` and histogram buckets (two disjoint sets
of records, since promoted records are left out of the organic search)."""

from __future__ import annotations

import msgspec

from searchport.domain.query import SearchQuery
from searchport.domain.results import Bucket, EngineResult, FacetValue, FieldStats


def added_counts(facets: dict[str, list[FacetValue]], more: dict[str, list[FacetValue]],
                 limit: int) -> dict[str, list[FacetValue]]:
    """Facet counts of two disjoint sets of records added up, most frequent first."""
    found: dict[str, list[FacetValue]] = {}
    for name in {*facets, *more}:
        counts: dict[str, int] = {}
        for value in (*facets.get(name, ()), *more.get(name, ())):
            counts[value.value] = counts.get(value.value, 0) + value.count
        found[name] = [FacetValue(value=v, count=c) for v, c in
                       sorted(counts.items(), key=lambda vc: (-vc[1], vc[0]))[:limit]]
    return found


def added_stats(stats: dict[str, FieldStats], more: dict[str, FieldStats]
                ) -> dict[str, FieldStats]:
    """The stats of two disjoint sets of records as one: ``sum`` and ``count`` add up when
    both sides know them, ``avg`` is their quotient (unknown when either is)."""
    found = dict(stats)
    for name, extra in more.items():
        own = found.get(name)
        if own is None:
            found[name] = extra
            continue
        total = None if own.sum is None or extra.sum is None else own.sum + extra.sum
        count = None if own.count is None or extra.count is None else own.count + extra.count
        found[name] = FieldStats(
            min=min(own.min, extra.min), max=max(own.max, extra.max), sum=total, count=count,
            avg=None if total is None or not count else total / count)
    return found


def added_histograms(histograms: dict[str, list[Bucket]], more: dict[str, list[Bucket]],
                     intervals: dict[str, float]) -> dict[str, list[Bucket]]:
    """Histogram buckets of two disjoint sets of records added up by key, in key order,
    every bucket from the first to the last (empty ones too, as the engines answer)."""
    found: dict[str, list[Bucket]] = {}
    for name in {*histograms, *more}:
        interval = intervals.get(name) or 0.0
        if interval <= 0:  # not asked as such: the organic buckets as they are
            found[name] = list(histograms.get(name, ()))
            continue
        counts: dict[int, int] = {}
        keys: dict[int, float] = {}
        for bucket in (*histograms.get(name, ()), *more.get(name, ())):
            step = round(bucket.key / interval)
            counts[step] = counts.get(step, 0) + bucket.count
            keys.setdefault(step, bucket.key)
        if not counts:
            found[name] = []
            continue
        first, last = min(counts), max(counts)
        found[name] = [Bucket(key=keys.get(step, keys[first] + (step - first) * interval),
                              count=counts.get(step, 0)) for step in range(first, last + 1)]
    return found


def added_up(organic: EngineResult, promoted: EngineResult, query: SearchQuery
             ) -> EngineResult:
    """``organic`` with what ``promoted`` counted for ``query`` added to its facets, stats
    and histograms."""
    intervals = {spec.field: spec.interval for spec in query.histograms}
    return msgspec.structs.replace(
        organic, facets=added_counts(organic.facets, promoted.facets, query.max_facet_values),
        stats=added_stats(organic.stats, promoted.stats),
        histograms=added_histograms(organic.histograms, promoted.histograms, intervals))
