"""Routes under ``/{handle}``: search, facets, autocomplete, documents, mapping, raw query."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from searchport.domain.responses import (
    AutocompleteResponse,
    FacetSearchResponse,
    SearchResponse,
)
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.autocomplete import Autocomplete, AutocompleteRequest
from searchport.domain.usecases.facet_search import FacetSearch, FacetSearchRequest
from searchport.domain.usecases.get_document import GetDocument, GetDocumentRequest
from searchport.domain.usecases.get_mapping import GetMapping, GetMappingRequest
from searchport.domain.usecases.raw_query import RawQuery, RawQueryRequest
from searchport.domain.usecases.search import Search
from searchport.entrypoints.controllers import params as p

HANDLE = Parameter(description="An index handle from the config (see GET /indexes).")


class IndexController(Controller):
    path = "/{handle:str}"
    tags = ["search"]

    @get(
        "/search",
        responses=p.ERRORS,
        summary="Full-text search",
        description="Hits, facets, filters, sorting, highlights, histograms, geo clusters and "
        "phrase suggestions on one handle.",
    )
    async def search(
        self,
        search_uc: Search,
        handle: str = HANDLE,
        q: str = p.Q,
        page: int = p.PAGE,
        per_page: int | None = p.PER_PAGE,
        sort: str | None = p.SORT,
        facets: str | None = p.FACETS,
        filters: str | None = p.FILTERS,
        highlight: str | None = p.HIGHLIGHT,
        fields: str | None = p.FIELDS,
        suggest: str | None = p.SUGGEST,
        boosts: str | None = p.BOOSTS,
        histogram: str | None = p.HISTOGRAM,
        geo_grid: str | None = p.GEO_GRID,
    ) -> SearchResponse:
        return await search_uc(SearchRequest(
            handle=handle, q=q, page=page, per_page=per_page, sort=sort, facets=facets,
            filters=filters, highlight=highlight, fields=fields, suggest=suggest, boosts=boosts,
            histogram=histogram, geo_grid=geo_grid,
        ))

    @get("/facets/{field:str}", responses=p.ERRORS, summary="Search facet values",
         description="Values of one facet field containing q, with their counts.")
    async def facet_values(
        self,
        facet_search: FacetSearch,
        handle: str = HANDLE,
        field: str = Parameter(description="The facet field (alias allowed)."),
        q: str = p.FACET_Q,
        max_values: int = p.MAX_VALUES,
        filters: str | None = p.FACET_FILTERS,
    ) -> FacetSearchResponse:
        return await facet_search(FacetSearchRequest(
            handle=handle, field=field, q=q, max_values=max_values, filters=filters
        ))

    @get("/autocomplete", responses=p.ERRORS, summary="Autocomplete",
         description="Prefix hits on the last word of q, plus facet values containing q.")
    async def autocomplete(
        self,
        autocomplete_uc: Autocomplete,
        handle: str = HANDLE,
        q: str = p.Q,
        per_page: int = p.AC_PER_PAGE,
        facets: str | None = p.AC_FACETS,
        max_facets_per_field: int = p.AC_MAX_FACETS,
    ) -> AutocompleteResponse:
        return await autocomplete_uc(AutocompleteRequest(
            handle=handle, q=q, per_page=per_page, facets=facets,
            max_facets_per_field=max_facets_per_field,
        ))

    @get("/documents/{doc_id:str}", responses=p.ERRORS, summary="One document by id")
    async def document(
        self,
        get_document: GetDocument,
        handle: str = HANDLE,
        doc_id: str = Parameter(description="The document's objectID."),
    ) -> dict[str, Any]:
        return await get_document(GetDocumentRequest(handle=handle, id=doc_id))

    @get("/mapping", responses=p.ERRORS, summary="The engine's field mapping or schema")
    async def mapping(self, get_mapping: GetMapping, handle: str = HANDLE) -> dict[str, Any]:
        return await get_mapping(GetMappingRequest(handle=handle))

    @post("/query", status_code=200, responses=p.RAW_ERRORS, summary="Raw engine query",
          description="An engine-native query body run on this handle's index only; the "
          "engine's response comes back unmodified. For tantivy: "
          '{"query": "<tantivy query language>", "limit": 10, "offset": 0}.')
    async def raw_query(
        self, request: Request[Any, Any, Any], raw_query_uc: RawQuery, handle: str = HANDLE
    ) -> Response[bytes]:
        body = await request.body()
        result = await raw_query_uc(RawQueryRequest(handle=handle, body=body))
        return Response(content=result, media_type="application/json")
