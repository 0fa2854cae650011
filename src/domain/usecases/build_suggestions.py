"""BuildSuggestions: a ``querySuggestions`` handle's records, from the query log of its
source handle and what the source finds for each popular query."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

import msgspec

from searchport.domain.analytics.records import utc_day
from searchport.domain.analytics.reports import PopularQuery
from searchport.domain.catalog import Catalog
from searchport.domain.config import IndexConfig
from searchport.domain.results import FacetValue
from searchport.domain.suggestions.records import (
    Suggestion,
    top_values,
    without_typing_prefixes,
)
from searchport.domain.suggestions.selection import eligible, exclusion, nb_words

if TYPE_CHECKING:
    from searchport.ports.analytics import AnalyticsStore

# the most popular queries read from the log for one build, and how many the source is
# asked about at once
MAX_SUGGESTIONS = 100_000
CONCURRENCY = 8


class SourceAnswer(msgspec.Struct, frozen=True, kw_only=True):
    total: int  # the records found
    facets: dict[str, list[FacetValue]]  # the counts of each facet asked, by its public name


class SourceSearch(Protocol):
    """The search a user sends for a suggestion (Algolia's, where every word of a query
    must match), neither logged nor cached: the suggestion's figures are its own."""

    async def __call__(self, handle: str, query: str, facets: Sequence[str]
                       ) -> SourceAnswer: ...


class BuildSuggestions:
    """The suggestions of one ``querySuggestions`` handle, most popular first."""

    def __init__(self, *, catalog: Catalog, store: AnalyticsStore, search: SourceSearch,
                 clock: Callable[[], float]) -> None:
        self._catalog = catalog
        self._store = store
        self._search = search
        self._clock = clock

    async def __call__(self, handle: str) -> list[Suggestion]:
        config = self._catalog.get_entry(handle).config
        source = config.source or ""
        today = utc_day(self._clock())
        popular = await self._store.popular_queries(
            source, today - timedelta(days=config.period - 1), today,
            min_count=config.min_count, limit=MAX_SUGGESTIONS)
        excluded = exclusion(config.exclude)
        # a query whose searches found fewer than minHits records on average is not asked
        # again
        candidates = iter([p for p in without_typing_prefixes(popular)
                           if p.nb_hits >= config.min_hits
                           and eligible(p.query, min_letters=config.min_letters,
                                        excluded=excluded)])
        found: dict[str, Suggestion] = {}
        await asyncio.gather(*(self._ask(source, config, candidates, found)
                               for _ in range(CONCURRENCY)))
        return sorted(found.values(), key=lambda s: (-s.popularity, s.query))

    async def _ask(self, source: str, config: IndexConfig, candidates: Iterator[PopularQuery],
                   found: dict[str, Suggestion]) -> None:
        """Ask the source about the candidates, one at a time, until none is left."""
        attributes = [facet.attribute for facet in config.facets]
        for candidate in candidates:
            answer = await self._search(source, candidate.query, attributes)
            if answer.total < config.min_hits:
                continue
            found[candidate.query] = Suggestion(
                query=candidate.query, popularity=candidate.count,
                nb_words=nb_words(candidate.query), exact_nb_hits=answer.total,
                facets={f.attribute: top_values(answer.facets.get(f.attribute, ()), f.amount)
                        for f in config.facets})
