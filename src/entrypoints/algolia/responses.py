"""Algolia's response bodies, with Algolia's own key names."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

AlgoliaHit = dict[str, Any]  # objectID, the document's fields, _highlightResult, _snippetResult


class FacetStats(msgspec.Struct, kw_only=True):
    """A numeric facet over the matching records; ``avg`` and ``sum`` are left out when the
    engine cannot tell them exactly (Meilisearch with 100 or more distinct values)."""

    min: float
    max: float
    avg: float | msgspec.UnsetType = msgspec.UNSET
    sum: float | msgspec.UnsetType = msgspec.UNSET


class Exhaustive(msgspec.Struct, kw_only=True):
    """``exhaustive``: whether ``nbHits`` and the facet counts are exact (Algolia's
    ``exhaustiveNbHits`` and ``exhaustiveFacetsCount`` say the same, deprecated)."""

    nb_hits: bool = msgspec.field(name="nbHits")
    facets_count: bool = msgspec.field(name="facetsCount")


class AlgoliaResult(msgspec.Struct, kw_only=True):
    """One search's answer (``POST /1/indexes/:handle/query``, one of ``results``)."""

    hits: list[AlgoliaHit]
    nb_hits: int = msgspec.field(name="nbHits")
    nb_pages: int = msgspec.field(name="nbPages")
    page: int
    hits_per_page: int = msgspec.field(name="hitsPerPage")
    facets: dict[str, dict[str, int]]
    facets_stats: dict[str, FacetStats] | msgspec.UnsetType = msgspec.UNSET
    exhaustive_nb_hits: bool = msgspec.field(name="exhaustiveNbHits")
    exhaustive_facets_count: bool = msgspec.field(name="exhaustiveFacetsCount")
    exhaustive: Exhaustive
    processing_time_ms: int = msgspec.field(name="processingTimeMS")
    query: str
    params: str
    index: str
    # the handle's defaults.facets as Algolia's facet ordering (InstantSearch's
    # dynamicWidgets render the facets it names, in its order); unset without defaults
    rendering_content: dict[str, Any] | msgspec.UnsetType = msgspec.field(
        name="renderingContent", default=msgspec.UNSET)
    # the applied query rules' userData, and the rules themselves (docs/rules.md)
    user_data: list[dict[str, Any]] | msgspec.UnsetType = msgspec.field(
        name="userData", default=msgspec.UNSET)
    applied_rules: list[dict[str, str]] | msgspec.UnsetType = msgspec.field(
        name="appliedRules", default=msgspec.UNSET)
    # a virtual replica's relevant sort (docs/replicas.md): the relevant hits, the only ones
    # paged through, and the strictness that chose them
    nb_sorted_hits: int | msgspec.UnsetType = msgspec.field(name="nbSortedHits",
                                                            default=msgspec.UNSET)
    applied_relevancy_strictness: int | msgspec.UnsetType = msgspec.field(
        name="appliedRelevancyStrictness", default=msgspec.UNSET)
    # with clickAnalytics: the search in the analytics (added per answer, after caching)
    query_id: str | msgspec.UnsetType = msgspec.field(name="queryID", default=msgspec.UNSET)
    # what the answer lacks that was asked for, never in its body (``WordsOnlyResult``)
    degraded: ClassVar[tuple[str, ...]] = ()


class WordsOnlyResult(AlgoliaResult, kw_only=True):
    """A NeuralSearch answered by words alone, its embedder failing or late
    (docs/semantic.md): the keyword search's body, ``X-Searchport-Semantic: degraded``."""

    degraded: ClassVar[tuple[str, ...]] = ("semantic",)


def rendering_content(facets: tuple[str, ...] | list[str]) -> dict[str, Any] | msgspec.UnsetType:
    """Algolia's ``renderingContent`` for facets shown in this order. No ``values``
    ordering: with one, InstantSearch's lists would stop putting refined values first."""
    if not facets:
        return msgspec.UNSET
    return {"facetOrdering": {"facets": {"order": list(facets)}}}


class FacetHit(msgspec.Struct, kw_only=True):
    value: str
    highlighted: str
    count: int


class FacetHitsResult(msgspec.Struct, kw_only=True):
    """A facet-value search's answer."""

    facet_hits: list[FacetHit] = msgspec.field(name="facetHits")
    exhaustive_facets_count: bool = msgspec.field(name="exhaustiveFacetsCount")
    processing_time_ms: int = msgspec.field(name="processingTimeMS")


class MultiResponse(msgspec.Struct, kw_only=True):
    # each an AlgoliaResult, or a FacetHitsResult for a query of type "facet" (two untagged
    # structs cannot share a union in msgspec's schema, hence the plain objects)
    results: list[dict[str, Any]]
