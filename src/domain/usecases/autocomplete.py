"""Autocomplete: prefix hits on the last word plus matching facet values."""

from __future__ import annotations

import asyncio

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import DEFAULT_TRACKING, Tracking, Visitor
from searchport.domain.catalog import Catalog
from searchport.domain.params import clamp, parse_list
from searchport.domain.query import FacetValuesQuery, SearchQuery
from searchport.domain.responses import AutocompleteResponse, WordsOnlyAutocomplete
from searchport.domain.results import FacetValue
from searchport.domain.semantic import complete_words, semantic_share, with_meaning
from searchport.domain.shaping import order_facet_values, shape_hit

MAX_HITS = 20
MAX_FACET_VALUES = 20


class AutocompleteRequest(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    q: str = ""
    per_page: int | None = None
    facets: str | None = None
    max_facets_per_field: int | None = None
    tracking: Tracking = DEFAULT_TRACKING
    # the share of meaning (0..1; None: the handle's ratio), of the complete words only
    semantic: float | None = None


class Autocomplete:
    """Suggest documents and facet values while the user types."""

    def __init__(self, *, catalog: Catalog, recorder: AnalyticsRecorder | None = None) -> None:
        self._catalog = catalog
        self._recorder = recorder

    async def __call__(self, request: AutocompleteRequest, access: Access = FULL_ACCESS,
                       visitor: Visitor | None = None) -> AutocompleteResponse:
        """``visitor``: who asked, for the query log (with ``request.tracking``)."""
        entry = access.entry(self._catalog, request.handle)
        forced = access.forced(entry)
        fields, engine = entry.fields, entry.engine
        per_page = clamp(request.per_page, 5, 1, MAX_HITS)
        per_field = clamp(request.max_facets_per_field, 4, 1, MAX_FACET_VALUES)
        names = parse_list("facets", request.facets) or ()
        meaning = complete_words(request.q)
        query = SearchQuery(
            text=request.q,
            limit=per_page,
            search_fields=fields.configured_weights,
            prefix_last_word=True,
            exact_total=entry.config.exact_totals,
            filters=forced,
            # by meaning: the complete words; the word being typed matches as a prefix
            semantic=semantic_share(entry.config, request.semantic, meaning),
        )
        query, degraded = await with_meaning(entry, query, meaning)
        text = request.q.strip()
        lookups = [
            FacetValuesQuery(field=fields.real(n), text=text, limit=per_field, filters=forced)
            for n in names
        ]
        result, facet_lists = await asyncio.gather(
            engine.search(query), asyncio.gather(*map(engine.facet_values, lookups)))
        # facets are answered under the names asked for
        facets: dict[str, list[FacetValue]] = {
            name: order_facet_values(values, per_field)
            for name, values in zip(names, facet_lists, strict=True)
            if values
        }
        answer = (WordsOnlyAutocomplete if degraded else AutocompleteResponse)(
            hits=[shape_hit(fields, hit) for hit in result.hits],
            total_hits=result.total,
            facets=facets if facets else msgspec.UNSET,
        )
        if self._recorder is None:
            return answer
        return self._recorder.searched(
            answer, handle=entry.handle, query=request.q, tracking=request.tracking,
            visitor=visitor, nb_hits=answer.total_hits, hits=answer.hits)
