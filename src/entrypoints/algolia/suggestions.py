"""The search a user sends for a query suggestion: the Algolia search of the source handle
for the suggestion's query, whose figures (total, facet counts) the suggestion's record
carries (``BuildSuggestions``' ``SourceSearch``)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from searchport.domain.results import FacetValue
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.build_suggestions import SourceAnswer
from searchport.entrypoints.algolia.requests import AlgoliaQuery


class _Figures(msgspec.Struct, kw_only=True):
    """What a suggestion keeps of an Algolia result."""

    nb_hits: int = msgspec.field(name="nbHits")
    facets: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)


_decode = msgspec.json.Decoder(_Figures).decode


class SuggestionSearch:
    """Asks ``search`` (built without cache or query log) as a user's client would: the
    query and the facets, nothing else changed from Algolia's defaults but what no figure
    depends on (one hit, no highlights)."""

    def __init__(self, search: AlgoliaSearch) -> None:
        self._search = search

    async def __call__(self, handle: str, query: str, facets: Sequence[str]) -> SourceAnswer:
        request = {"query": query, "facets": list(facets), "hitsPerPage": 1,
                   "attributesToHighlight": [], "analytics": False}
        (body,) = await self._search((AlgoliaQuery(handle=handle, request=request),))
        figures = _decode(body)
        return SourceAnswer(total=figures.nb_hits, facets={
            name: [FacetValue(value=value, count=count) for value, count in counts.items()]
            for name, counts in figures.facets.items()})
