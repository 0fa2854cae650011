"""Search: full-text search on one handle."""

from __future__ import annotations

import msgspec

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.recorder import AnalyticsRecorder
from searchport.domain.analytics.records import Visitor
from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.query import Filter, SearchQuery
from searchport.domain.responses import SearchResponse, WordsOnlyResponse
from searchport.domain.rules.effects import RulePlan
from searchport.domain.rules.search import rule_plan, search_with_rules
from searchport.domain.search_request import (
    SearchRequest,
    build_search_query,
    page_count,
    rule_ask,
)
from searchport.domain.semantic import with_meaning
from searchport.domain.shaping import fill_histogram, shape_clusters, shape_facets, shape_hit


class Search:
    """Run one search and shape the response the same way for every engine."""

    def __init__(self, *, catalog: Catalog, recorder: AnalyticsRecorder | None = None) -> None:
        self._catalog = catalog
        self._recorder = recorder

    async def __call__(self, request: SearchRequest, access: Access = FULL_ACCESS,
                       visitor: Visitor | None = None) -> SearchResponse:
        """``visitor``: who asked, for the query log (with ``request.tracking``)."""
        entry = access.entry(self._catalog, request.handle)
        query, page, per_page = build_search_query(entry, request)
        asked = query.filters
        # the request's own filters select facet values for rule conditions, not the key's
        rules = None if entry.rules is None else await rule_plan(
            entry, query, rule_ask(request, page, per_page))
        query = msgspec.structs.replace(query, filters=access.restrict(entry, asked))
        query, degraded = await with_meaning(entry, query)
        answer = await self._search(entry, query, page, per_page, rules, access.forced(entry))
        if degraded:  # by words alone though meaning was asked for: the answer says so
            answer = WordsOnlyResponse(**msgspec.structs.asdict(answer))
        if self._recorder is None:
            return answer
        return self._recorder.searched(
            answer, handle=entry.handle, query=request.q, tracking=request.tracking,
            visitor=visitor, nb_hits=answer.total_hits, hits=answer.hits, page=page - 1,
            filters=asked, public=entry.fields.public)

    async def _search(
        self, entry: IndexEntry, query: SearchQuery, page: int, per_page: int,
        rules: RulePlan | None = None, forced: tuple[Filter, ...] = (),
    ) -> SearchResponse:
        return await search_and_shape(entry, query, page, per_page, rules, forced)


async def search_and_shape(
    entry: IndexEntry, query: SearchQuery, page: int, per_page: int,
    rules: RulePlan | None = None, forced: tuple[Filter, ...] = (),
) -> SearchResponse:
    """Run ``query`` on the handle's engine and shape the answer as ``/search`` does."""
    if rules is None:
        result = await entry.search()(query)
    else:
        result = (await search_with_rules(entry.search(), query, rules, page=page - 1,
                                          per_page=per_page, forced=forced)).result
    fields = entry.fields
    histograms: dict[str, list] | msgspec.UnsetType = msgspec.UNSET  # type: ignore[type-arg]
    if query.histograms:
        found = result.histograms
        histograms = {
            fields.public(spec.field): fill_histogram(spec, found.get(spec.field, []))
            for spec in query.histograms
        }
    return SearchResponse(
        hits=[shape_hit(fields, hit) for hit in result.hits],
        total_hits=result.total,
        page=page,
        per_page=per_page,
        total_pages=page_count(result.total if result.sorted_total is None
                               else result.sorted_total, per_page,
                               entry.config.max_result_window),
        sorted_hits=msgspec.UNSET if result.sorted_total is None else result.sorted_total,
        facets=shape_facets(fields, result.facets, query.max_facet_values),
        suggestions=result.suggestions,
        histograms=histograms,
        geo_clusters=(
            shape_clusters(fields, result.geo_clusters or [])
            if query.geo_grid is not None
            else msgspec.UNSET
        ),
        user_data=list(rules.user_data) if rules and rules.user_data else msgspec.UNSET,
    )

