"""Routes under ``/{handle}``: search, facets, autocomplete, documents, mapping, raw query.

``index_controller(cached=True)`` has Litestar's response cache keep the GET routes' whole
responses (``http_cache``), so that a repeated request is answered before any parameter is
parsed; it is asked for when the cache has a tier in this process (``app.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import PathParameter, QueryParameter

from searchport.domain.analytics.records import DEFAULT_TRACKING, Tracking
from searchport.domain.errors import InvalidRequest
from searchport.domain.responses import (
    AutocompleteResponse,
    FacetSearchResponse,
    SearchResponse,
)
from searchport.domain.search_request import SearchRequest
from searchport.domain.usecases.autocomplete import AutocompleteRequest
from searchport.domain.usecases.facet_search import FacetSearchRequest
from searchport.domain.usecases.get_document import GetDocumentRequest
from searchport.domain.usecases.get_mapping import GetMappingRequest
from searchport.domain.usecases.raw_query import RawQueryRequest
from searchport.domain.usecases.similar import SimilarRequest
from searchport.entrypoints.controllers import params as p
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of, visitor_of
from searchport.entrypoints.http.http_cache import (
    IF_NONE_MATCH,
    Prepared,
    cache_control,
    json_body,
    json_response,
    response_key,
)

Handle = Annotated[str, PathParameter(description="An index handle (see GET /indexes).")]
Json = str | None
IfNoneMatch = Annotated[str | None, IF_NONE_MATCH]
JsonBytes = Prepared  # the use case's encoded response, sent as is (see http_cache)
Req = Request[Any, Any, Any]


def tracking(analytics: bool | None, click_analytics: bool | None, tags: str | None,
             user_token: str | None) -> Tracking:
    """A search's analytics parameters (Algolia's defaults when none is given)."""
    if analytics is None and click_analytics is None and tags is None and user_token is None:
        return DEFAULT_TRACKING
    return Tracking(analytics=analytics is not False, click_analytics=bool(click_analytics),
                    tags=tuple(t.strip() for t in tags.split(",") if t.strip()) if tags else (),
                    user_token=user_token or None)


SIMILAR = b"/similar"


def similar_target(raw_path: bytes, doc_id: str) -> str | None:
    """The id whose similar documents a ``/documents/...`` path asks for: the path ends in a
    literal ``/similar`` (not ``%2Fsimilar``, which is part of an id) after an id; else
    ``None``, the document itself."""
    path = raw_path.partition(b"?")[0]  # servers send none; some test clients the query
    if not path.endswith(SIMILAR) or not doc_id.endswith("/similar"):
        return None
    target = doc_id[:-len("/similar")]
    return target or None


def _document_or_similar() -> Any:
    """The cache key of the document route: a document's (kept with ``cache.documents``),
    or, for a path ending in a literal ``/similar``, similar documents' (kept as searches)."""
    document, similar = response_key("document"), response_key("similar")

    def key(request: Req) -> str:
        doc_id = str(request.scope["path_params"].get("doc_id", ""))
        asks_similar = similar_target(request.scope.get("raw_path") or b"", doc_id[1:])
        return (document if asks_similar is None else similar)(request)  # type: ignore[no-any-return]

    return key


DOCUMENT_OR_SIMILAR = _document_or_similar()


# the similar documents' parameters, read by the document route (whose path takes
# /similar too) and left out of its OpenAPI entry
HIDDEN_PAGE = QueryParameter(include_in_schema=False)
HIDDEN_PER_PAGE = QueryParameter(name="perPage", include_in_schema=False)
HIDDEN_FILTERS = QueryParameter(include_in_schema=False)
HIDDEN_FIELDS = QueryParameter(include_in_schema=False)
HIDDEN_FACETS = QueryParameter(include_in_schema=False)


def index_controller(uc: UseCases, *, cached: bool, private: bool,
                     logged: bool = False, trust_forwarded_for: bool = False) -> type[Controller]:
    """The routes, calling the use cases of ``uc``; ``cached``: whole GET responses kept by
    Litestar's response cache; ``private``: their ``Cache-Control`` is private (a key is
    configured). Each handler reads the key's access itself (``access_of``).
    ``logged``: searches go to the analytics, so the search and autocomplete answers are
    never kept whole (a kept answer is sent before the route runs, and would not be logged);
    ``trust_forwarded_for``: the client's address is the proxy's last X-Forwarded-For."""
    control = cache_control(private)
    searches_cached = cached and not logged

    async def similar_answer(request: Req, ask: SimilarRequest,
                             if_none_match: str | None) -> JsonBytes:
        access = access_of(request.scope)
        answer = await uc.similar_documents()(ask, access)
        return json_response(request, answer, if_none_match, control, access.fingerprint)

    class IndexController(Controller):
        path = "/{handle:str}"
        tags = ["search"]

        @get(
            "/search",
            cache=searches_cached, cache_key_builder=response_key("search"),
            responses=p.answers(SearchResponse, "The hits, totals, facets and extras asked for."),
            summary="Full-text search",
            description="Hits, facets, filters, sorting, highlights, histograms, geo clusters and "
            "phrase suggestions on one handle.",
        )
        async def search(
            self,
            request: Req,
            handle: Handle,
            q: Annotated[str, p.Q] = "",
            page: Annotated[int, p.PAGE] = 1,
            per_page: Annotated[int | None, p.PER_PAGE] = None,
            sort: Annotated[Json, p.SORT] = None,
            facets: Annotated[str | None, p.FACETS] = None,
            filters: Annotated[Json, p.FILTERS] = None,
            highlight: Annotated[str | None, p.HIGHLIGHT] = None,
            fields: Annotated[str | None, p.FIELDS] = None,
            suggest: Annotated[str | None, p.SUGGEST] = None,
            boosts: Annotated[Json, p.BOOSTS] = None,
            histogram: Annotated[Json, p.HISTOGRAM] = None,
            geo_grid: Annotated[Json, p.GEO_GRID] = None,
            analytics: Annotated[bool | None, p.ANALYTICS] = None,
            click_analytics: Annotated[bool | None, p.CLICK_ANALYTICS] = None,
            analytics_tags: Annotated[str | None, p.ANALYTICS_TAGS] = None,
            user_token: Annotated[str | None, p.USER_TOKEN] = None,
            rule_contexts: Annotated[str | None, p.RULE_CONTEXTS] = None,
            enable_rules: Annotated[str | None, p.ENABLE_RULES] = None,
            semantic: Annotated[float | None, p.SEMANTIC] = None,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            scope = request.scope
            access = access_of(scope)
            return json_response(request, await uc.search()(SearchRequest(
                handle=handle, q=q, page=page, per_page=per_page, sort=sort, facets=facets,
                filters=filters, highlight=highlight, fields=fields, suggest=suggest, boosts=boosts,
                histogram=histogram, geo_grid=geo_grid, rule_contexts=rule_contexts,
                enable_rules=enable_rules, semantic=semantic,
                tracking=tracking(analytics, click_analytics, analytics_tags, user_token),
            ), access, visitor_of(scope, trust_forwarded_for)), if_none_match, control,
                access.fingerprint)

        @get(
            "/facets/{field:str}",
            cache=cached, cache_key_builder=response_key("facets"),
            responses=p.answers(FacetSearchResponse, "The matching values with their counts."),
            summary="Search facet values",
            description="Values of one facet field containing q, with their counts.",
        )
        async def facet_values(
            self,
            request: Req,
            handle: Handle,
            field: Annotated[str, PathParameter(description="The facet field (alias allowed).")],
            q: Annotated[str, p.FACET_Q] = "",
            max_values: Annotated[int, p.MAX_VALUES] = 20,
            filters: Annotated[Json, p.FACET_FILTERS] = None,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            access = access_of(request.scope)
            return json_response(request, await uc.facet_search()(FacetSearchRequest(
                handle=handle, field=field, q=q, max_values=max_values, filters=filters
            ), access), if_none_match, control, access.fingerprint)

        @get(
            "/autocomplete",
            cache=searches_cached, cache_key_builder=response_key("autocomplete"),
            responses=p.answers(AutocompleteResponse, "Prefix hits and matching facet values."),
            summary="Autocomplete",
            description="Prefix hits on the last word of q, plus facet values containing q.",
        )
        async def autocomplete(
            self,
            request: Req,
            handle: Handle,
            q: Annotated[str, p.Q] = "",
            per_page: Annotated[int, p.AC_PER_PAGE] = 5,
            facets: Annotated[str | None, p.AC_FACETS] = None,
            max_facets_per_field: Annotated[int, p.AC_MAX_FACETS] = 4,
            analytics: Annotated[bool | None, p.ANALYTICS] = None,
            click_analytics: Annotated[bool | None, p.CLICK_ANALYTICS] = None,
            analytics_tags: Annotated[str | None, p.ANALYTICS_TAGS] = None,
            user_token: Annotated[str | None, p.USER_TOKEN] = None,
            semantic: Annotated[float | None, p.AC_SEMANTIC] = None,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            scope = request.scope
            access = access_of(scope)
            return json_response(request, await uc.autocomplete()(AutocompleteRequest(
                handle=handle, q=q, per_page=per_page, facets=facets,
                max_facets_per_field=max_facets_per_field, semantic=semantic,
                tracking=tracking(analytics, click_analytics, analytics_tags, user_token),
            ), access, visitor_of(scope, trust_forwarded_for)), if_none_match, control,
                access.fingerprint)

        @get(
            "/documents/{doc_id:path}",
            cache=cached, cache_key_builder=DOCUMENT_OR_SIMILAR,
            responses=p.answers(dict[str, Any], "The document: objectID, _index, its fields."),
            summary="One document by id",
            description="An id may contain '/', sent as it is or as %2F. A path that ends "
            "in a literal /similar asks for the similar documents (below): the document "
            "whose id ends in '/similar' is fetched with that last '/' sent as %2F.",
        )
        async def document(
            self,
            request: Req,
            handle: Handle,
            doc_id: Annotated[str, PathParameter(description="The document's objectID.")],
            page: Annotated[int | None, HIDDEN_PAGE] = None,
            per_page: Annotated[int | None, HIDDEN_PER_PAGE] = None,
            filters: Annotated[Json, HIDDEN_FILTERS] = None,
            fields: Annotated[str | None, HIDDEN_FIELDS] = None,
            facets: Annotated[str | None, HIDDEN_FACETS] = None,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            # a path parameter keeps ids containing "/" reachable; it arrives with its leading "/"
            similar_of = similar_target(request.scope["raw_path"], doc_id[1:])
            if similar_of is not None:
                return await similar_answer(request, SimilarRequest(
                    handle=handle, id=similar_of, filters=filters, page=page,
                    per_page=per_page, fields=fields, facets=facets), if_none_match)
            asked = [name for name, value in (("page", page), ("perPage", per_page),
                     ("filters", filters), ("fields", fields), ("facets", facets))
                     if value is not None]
            if asked:  # the parameters of similar documents, not of a document
                raise InvalidRequest(f"Unknown parameter '{asked[0]}': this route takes no "
                                     "query parameters")
            access = access_of(request.scope)
            document = await uc.get_document()(GetDocumentRequest(handle=handle, id=doc_id[1:]),
                                          access)
            return json_response(request, document, if_none_match, control, access.fingerprint)

        @get(
            "/documents/{doc_id:str}/similar",
            cache=cached, cache_key_builder=response_key("similar"),
            responses=p.answers(SearchResponse, "The documents nearest in meaning, best "
                                "first, shaped as /search's hits; the document itself is "
                                "never among them."),
            summary="Similar documents",
            description="The documents nearest in meaning to one document (docs/semantic.md, "
            "similar documents): a search by meaning alone with that document's vector, the "
            "filters applied before the nearest are chosen. _score is the one "
            "/search?semantic=1 gives on that engine. Needs the index's semantic section "
            "(else 400); an unknown id is a 404. An id containing '/' is sent as it is.",
        )
        async def similar(
            self,
            request: Req,
            handle: Handle,
            doc_id: Annotated[str, PathParameter(description="The document's objectID.")],
            page: Annotated[int, p.PAGE] = 1,
            per_page: Annotated[int | None, p.PER_PAGE] = None,
            filters: Annotated[Json, p.FILTERS] = None,
            fields: Annotated[str | None, p.FIELDS] = None,
            facets: Annotated[str | None, p.FACETS] = None,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            # the path route above answers first (Litestar routes a path parameter before
            # what follows it): this route is its OpenAPI entry, and answers as it does
            return await similar_answer(request, SimilarRequest(
                handle=handle, id=doc_id, filters=filters, page=page, per_page=per_page,
                fields=fields, facets=facets), if_none_match)

        @get(
            "/mapping",
            cache=cached, cache_key_builder=response_key("mapping"),
            responses=p.answers(dict[str, Any], "The engine's own mapping or schema, unmodified."),
            summary="The engine's field mapping or schema",
        )
        async def mapping(
            self,
            request: Req,
            handle: Handle,
            if_none_match: IfNoneMatch = None,
        ) -> JsonBytes:
            access = access_of(request.scope)
            mapping = await uc.get_mapping()(GetMappingRequest(handle=handle), access)
            return json_response(request, mapping, if_none_match, control, access.fingerprint)

        @post(
            "/query",
            status_code=200,
            responses=p.RAW_ERRORS,
            summary="Raw engine query",
            description="An engine-native query body run on this handle's index only; the "
            "engine's response comes back unmodified. For tantivy: "
            '{"query": "<tantivy query language>", "limit": 10, "offset": 0}.',
        )
        async def raw_query(self, request: Req, handle: Handle) -> Prepared:
            body = await request.body()
            result = await uc.raw_query()(RawQueryRequest(handle=handle, body=body),
                                          access_of(request.scope))
            return json_body(result)

    return IndexController
