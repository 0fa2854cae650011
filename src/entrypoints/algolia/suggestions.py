"""The search a user sends for a query suggestion: the Algolia search of the source handle
for the suggestion's query, whose figures (total, facet counts) the suggestion's record
carries (``BuildSuggestions``' ``SourceSearch``)."""

from __future__ import annotations

from collections.abc import Sequence

from searchport.domain.results import FacetValue
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.build_suggestions import SourceAnswer
from searchport.entrypoints.algolia.requests import AlgoliaQuery
from searchport.entrypoints.algolia.responses import AlgoliaResult


class SuggestionSearch:
    """Asks ``search`` (built without cache or query log) as a user's client would: the
    query and the facets, nothing else changed from Algolia's defaults but what no figure
    depends on (one hit, no highlights)."""

    def __init__(self, search: AlgoliaSearch) -> None:
        self._search = search

    async def __call__(self, handle: str, query: str, facets: Sequence[str]) -> SourceAnswer:
        request = {"query": query, "facets": list(facets), "hitsPerPage": 1,
                   "attributesToHighlight": [], "analytics": False}
        (figures,) = await self._search((AlgoliaQuery(handle=handle, request=request),))
        assert isinstance(figures, AlgoliaResult)  # a search, not a search of facet values
        return SourceAnswer(total=figures.nb_hits, facets={
            name: [FacetValue(value=value, count=count) for value, count in counts.items()]
            for name, counts in figures.facets.items()})
