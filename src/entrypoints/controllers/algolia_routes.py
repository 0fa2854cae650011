"""Algolia's search protocol: the routes the stock ``algoliasearch`` client and
InstantSearch.js call, with the handle as index name.

Bodies are read as JSON whatever the ``Content-Type``: the v5 browser client sends
``Content-Type: text/plain`` (no CORS preflight) with a JSON body whose parameters are flat
next to ``indexName``; the v4 client sent ``application/x-www-form-urlencoded`` with
``params`` as a URL-encoded string. Error bodies carry Algolia's ``message`` and ``status``
next to ``error`` (``entrypoints.http.error_bodies``): the clients show ``message``.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter

from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.entrypoints.algolia.requests import (
    AlgoliaQueries,
    multi_queries,
    one_query,
    url_query,
)
from searchport.entrypoints.algolia.responses import AlgoliaResult, FacetHitsResult, MultiResponse
from searchport.entrypoints.controllers import params as p
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of, visitor_of
from searchport.entrypoints.http.http_cache import Prepared, degraded_of, json_body

Handle = Annotated[str, PathParameter(description="An index handle (the Algolia index name).")]
Facet = Annotated[str, PathParameter(description="The facet attribute (alias allowed).")]
AnyRequest = Request[Any, Any, Any]


def _answers(body: Any, description: str) -> dict[int, ResponseSpec]:
    return {200: ResponseSpec(data_container=body, generate_examples=False,
                              description=description), **p.ALGOLIA_ERRORS}


MULTI = _answers(MultiResponse, "One result per query, in request order.")
ONE = _answers(AlgoliaResult, "The hits, counts and facets of the query.")
FACET_HITS = _answers(FacetHitsResult, "The facet values matching facetQuery.")


def algolia_controller(uc: UseCases, *, trust_forwarded_for: bool = False
                       ) -> type[Controller]:
    """Algolia's search routes, calling ``uc.algolia_search``; ``trust_forwarded_for``: the
    client's address (for the analytics) is the proxy's last X-Forwarded-For."""

    async def _answer(search: AlgoliaSearch, call: AlgoliaQueries, scope: Any) -> Prepared:
        answers = await search(call.queries, access_of(scope),
                               visitor_of(scope, trust_forwarded_for))
        # a NeuralSearch answered by words alone says so (docs/semantic.md)
        return json_body(call.body(answers), degraded_of(answers))

    class AlgoliaController(Controller):
        tags = ["algolia"]

        @post("/{handle:str}/instantsearch", status_code=200, responses=MULTI,
              summary="InstantSearch multi-query on one handle",
              description='Algolia\'s multi-query body {"requests": [{"params": ..}]}; each '
              "indexName, when given, must be this handle. Answers {\"results\": [..]}.")
        async def instantsearch(self, request: AnyRequest,
                                handle: Handle) -> Prepared:
            call = multi_queries(await request.body(), handle)
            return await _answer(uc.algolia_search(), call, request.scope)

        @post("/1/indexes/*/queries", status_code=200, responses=MULTI,
              summary="Algolia multi-queries",
              description="Several queries, each on the handle named by its indexName, answered "
              "in request order.")
        async def queries(self, request: AnyRequest) -> Prepared:
            return await _answer(uc.algolia_search(), multi_queries(await request.body()),
                                 request.scope)

        @post("/1/indexes/{handle:str}/query", status_code=200, responses=ONE,
              summary="Algolia search on one handle")
        async def query(self, request: AnyRequest, handle: Handle) -> Prepared:
            return await _answer(uc.algolia_search(), one_query(await request.body(), handle),
                                 request.scope)

        @get("/1/indexes/{handle:str}", responses=ONE,
             summary="Algolia search on one handle, the parameters in the URL",
             description="As POST /1/indexes/{handle}/query: each search parameter in the "
             "query string (a list as JSON or comma-separated), or all of them URL-encoded "
             "in params.")
        async def query_in_url(self, request: AnyRequest, handle: Handle) -> Prepared:
            call = url_query(request.scope["query_string"], handle)
            return await _answer(uc.algolia_search(), call, request.scope)

        @post("/1/indexes/{handle:str}/facets/{facet:str}/query", status_code=200,
              responses=FACET_HITS, summary="Algolia search for facet values")
        async def facet_values(self, request: AnyRequest, handle: Handle,
                               facet: Facet) -> Prepared:
            call = one_query(await request.body(), handle, facet)
            return await _answer(uc.algolia_search(), call, request.scope)

    return AlgoliaController
