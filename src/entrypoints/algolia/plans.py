"""One Algolia query planned against its handle: the domain query the ``AlgoliaSearch`` use
case runs, and the Algolia answer shaped from the domain result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from searchport.domain.analytics.records import Tracking
from searchport.domain.catalog import IndexEntry
from searchport.domain.params import clamp
from searchport.domain.results import EngineResult
from searchport.domain.rules.search import RuleAsk, RuleOutcome
from searchport.domain.usecases.algolia_search import (
    MAX_FACET_VALUES,
    FacetHits,
    FacetHitsQuery,
)
from searchport.entrypoints.algolia import params as ap
from searchport.entrypoints.algolia.highlight import DEFAULT_POST, DEFAULT_PRE, Tags
from searchport.entrypoints.algolia.query import Plan, algolia_filters, plan_search, shape_result
from searchport.entrypoints.algolia.responses import (
    AlgoliaResult,
    FacetHit,
    FacetHitsResult,
    WordsOnlyResult,
)
from searchport.entrypoints.algolia.words import read_words

OUTER_KEYS = frozenset({"indexName", "type", "facet", "facetName"})


class SearchCall:
    """A search (``AlgoliaSearch``'s ``SearchPlan``)."""

    __slots__ = ("_entry", "_plan", "_raw")

    def __init__(self, entry: IndexEntry, plan: Plan, raw: ap.RawParams) -> None:
        self._entry, self._plan, self._raw = entry, plan, raw

    @property
    def query(self) -> Any:
        return self._plan.query

    @property
    def cache_params(self) -> Any:
        return [self._plan, self._raw.encoded]

    @property
    def rule_ask(self) -> RuleAsk:
        return self._plan.rule_ask

    @property
    def fallback_words(self) -> tuple[tuple[str, ...], ...]:
        return self._plan.words.fallbacks

    @property
    def relevancy_strictness(self) -> int | None:
        return self._plan.relevancy_strictness

    def shape(self, result: EngineResult, took_ms: int, exact_facet_counts: bool,
              rules: RuleOutcome | None = None) -> AlgoliaResult:
        return shape_result(self._entry, self._plan, result, self._raw, took_ms,
                            exact_facet_counts, rules)

    @property
    def tracking(self) -> Tracking:
        return ap.tracking(self._raw.values)

    def hits_of(self, answer: AlgoliaResult) -> int:
        return answer.nb_hits

    def answer_hits(self, answer: AlgoliaResult) -> Sequence[Mapping[str, Any]]:
        return answer.hits

    def words_only(self, answer: AlgoliaResult) -> WordsOnlyResult:
        return WordsOnlyResult(**msgspec.structs.asdict(answer))


class FacetHitsCall(msgspec.Struct, frozen=True):
    """A search for facet values (``AlgoliaSearch``'s ``FacetHitsPlan``)."""

    query: FacetHitsQuery
    tags: Tags

    def shape(self, hits: FacetHits, took_ms: int) -> FacetHitsResult:
        needle = self.query.needle
        return FacetHitsResult(
            facet_hits=[FacetHit(value=v.value, highlighted=_highlighted(v.value, needle,
                                                                         self.tags),
                                 count=v.count) for v in hits.values],
            exhaustive_facets_count=hits.exhaustive,
            processing_time_ms=took_ms,
        )


def plan(entry: IndexEntry, request: dict[str, Any],
         facet: str | None) -> SearchCall | FacetHitsCall:
    """``facet`` set: a search for values of that facet (the path's, or ``type: facet``)."""
    raw = ap.collect(request, OUTER_KEYS)
    values = raw.values
    if facet is None:
        return SearchCall(entry, plan_search(entry, values), raw)
    query = FacetHitsQuery(
        field=entry.fields.real(facet or ap.text(values, "facetName")),
        needle=ap.text(values, "facetQuery").strip(),
        limit=clamp(ap.integer(values, "maxFacetHits"), 10, 1, MAX_FACET_VALUES),
        filters=algolia_filters(values, entry),
        text=ap.text(values, "query"),
        optional_words=read_words(values, ap.text(values, "query")).optional,
    )
    return FacetHitsCall(query, Tags(ap.text(values, "highlightPreTag", DEFAULT_PRE),
                                     ap.text(values, "highlightPostTag", DEFAULT_POST)))


def _highlighted(value: str, needle: str, tags: Tags) -> str:
    at = value.casefold().find(needle.casefold()) if needle else -1
    if at < 0 or len(value.casefold()) != len(value):  # casefold changed the length: no marks
        return tags.plain(value)
    end = at + len(needle)
    return (tags.plain(value[:at]) + tags.pre + tags.plain(value[at:end]) + tags.post
            + tags.plain(value[end:]))
