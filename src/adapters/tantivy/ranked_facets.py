"""Facet counts of a keyword field read through its sort column.

Every keyword field has a sort column holding, per document, the rank of its smallest value
among the field's values in sorted order (``schema.sortable_column``). When no document
holds two values of the field, that rank names the document's one value: counting ranks
counts values, without tantivy turning each bucket's term ordinal back into its text (about
half of a terms aggregation's cost on the demo's countries), and for a page search that saw
every match, the ranks of those documents alone are read, with no aggregation at all.

Whether a field qualifies, and which value each rank stands for, is read once per index
generation: every value's documents are counted beside every rank's, and the two lists, in
sorted order, must hold the same counts pair by pair (a document with two values counts once
for each value but once for a single rank, so the sums would differ). Fields with more than
``facets.FEW_VALUES`` values keep tantivy's own terms aggregation.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

import tantivy

from searchport.adapters.tantivy.facets import ALL_VALUES, FEW_VALUES
from searchport.adapters.tantivy.schema import FieldSpec, sort_field
from searchport.domain.results import FacetValue

# a field's values by rank, or None: the field keeps the terms aggregation of its values
Named = dict[int, str] | None
_UNREAD = object()


def _every(field: str) -> dict[str, Any]:
    return {"terms": {"field": field, "size": ALL_VALUES, "segment_size": ALL_VALUES}}


class RankedValues:
    """The keyword fields of one index generation whose facets are counted by rank."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self._searcher = searcher
        self._named: dict[str, Named] = {}
        self._lock = threading.Lock()

    def values(self, spec: FieldSpec) -> Named:
        """Each rank's value, when ``spec``'s facets can be counted by rank."""
        found = self._named.get(spec.name, _UNREAD)
        if found is _UNREAD:
            with self._lock:
                found = self._named.get(spec.name, _UNREAD)
                if found is _UNREAD:
                    found = self._named[spec.name] = (
                        self._read(spec.name) if spec.type == "keyword" else None)
        return found  # type: ignore[return-value]  # a dict or None

    def _read(self, name: str) -> Named:
        found = self._searcher.aggregate(
            tantivy.Query.all_query(), {"v": _every(name), "r": _every(sort_field(name))})
        by_value = sorted((str(b["key"]), int(b["doc_count"])) for b in found["v"]["buckets"])
        by_rank = sorted((int(b["key"]), int(b["doc_count"])) for b in found["r"]["buckets"])
        if (len(by_value) > FEW_VALUES or len(by_value) != len(by_rank)
                or found["v"].get("sum_other_doc_count") or found["r"].get("sum_other_doc_count")
                or any(v[1] != r[1] for v, r in zip(by_value, by_rank, strict=True))):
            return None
        return {rank: value for (value, _), (rank, _) in zip(by_value, by_rank, strict=True)}


def request(spec: FieldSpec) -> dict[str, Any]:
    """The terms aggregation of ``spec``'s ranks: every one of them (at most FEW_VALUES)."""
    return _every(sort_field(spec.name))


def named(values: dict[int, str], result: dict[str, Any]) -> list[FacetValue]:
    """A terms aggregation's answer over ranks, as the values it counted, most first (then
    by value), as ``facets.facet_values`` orders a keyword's."""
    ordered = sorted((-count, values[int(b["key"])]) for b in result["buckets"]
                     if (count := b["doc_count"]) > 0)
    return [FacetValue(value=value, count=-count) for count, value in ordered]


def counted(searcher: tantivy.Searcher, spec: FieldSpec, values: dict[int, str],
            addresses: Sequence[tantivy.DocAddress]) -> list[FacetValue]:
    """The values of exactly these documents, counted from their ranks, most first."""
    ranks = Counter(searcher.fast_field_values(sort_field(spec.name), list(addresses)))
    ordered = sorted((-count, values[int(rank)]) for rank, count in ranks.items()
                     if rank is not None)
    return [FacetValue(value=value, count=-count) for count, value in ordered]
