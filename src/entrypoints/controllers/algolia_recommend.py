"""Algolia Recommend's ``POST /1/indexes/*/recommendations``: the looking-similar model.

``looking-similar`` is the one model searchport can answer from the records themselves:
the records nearest in meaning to one record (``SimilarDocuments``, docs/semantic.md). The
other models learn from events searchport does not keep: each is a 400 naming the one
served.

Request and answer follow Algolia's published Recommend specification (its
``getRecommendations``): each request names ``indexName`` (a handle), ``model``,
``objectID`` and ``threshold`` (0..100, the least ``_score`` a recommendation has), with
``maxRecommendations`` (1..30, default 30) and ``queryParameters`` (``filters``,
``facetFilters``, ``numericFilters``, the geo filters, ``attributesToRetrieve``). A hit is
the record (its attributes) with ``_score``: 100 times its cosine with the record (0 when
opposite or unrelated), best first; the record itself is never among them.

``fallbackParameters`` (the specification's "search parameters to use for a fallback
request if there aren't enough recommendations"): when fewer recommendations than
``maxRecommendations`` pass the filters and the threshold, a search of the handle with
those parameters (as ``POST /1/indexes/:handle/query`` takes them, kept out of the query
log unless they say ``analytics``) fills the rest, in its order, after the
recommendations: its hits that are neither the record nor already recommended, without
``_score`` (they were not scored against the record) and, unless its parameters ask for
them, without highlights. Its page is the recommendations'
own: ``page``, ``hitsPerPage``, ``offset`` and ``length`` are a 400.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from litestar import Controller, Request, post
from litestar.openapi.datastructures import ResponseSpec

from searchport.domain.access import Access
from searchport.domain.catalog import IndexEntry
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import SearchQuery
from searchport.domain.shaping import shape_document
from searchport.domain.usecases.algolia_search import AlgoliaSearch
from searchport.domain.usecases.similar import SimilarDocuments
from searchport.entrypoints.algolia.query import algolia_filters
from searchport.entrypoints.algolia.requests import AlgoliaQuery
from searchport.entrypoints.controllers import params as p
from searchport.entrypoints.controllers.algolia_records import as_record, attribute_names
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of
from searchport.entrypoints.http.http_cache import Prepared, json_body

MODEL = "looking-similar"
OTHER_MODELS = ("related-products", "bought-together", "trending-items", "trending-facets")
MAX_RECOMMENDATIONS = 30
MAX_REQUESTS = 50
# the queryParameters searchport applies (filters and what a hit returns)
QUERY_PARAMETERS = frozenset({
    "filters", "facetFilters", "numericFilters", "aroundLatLng", "aroundRadius",
    "insideBoundingBox", "insidePolygon", "attributesToRetrieve"})
KEYS = frozenset({"indexName", "model", "objectID", "threshold", "maxRecommendations",
                  "queryParameters", "fallbackParameters"})
# the fallback search fills the recommendations' page: it has none of its own
FALLBACK_PAGING = ("page", "hitsPerPage", "offset", "length")
AnyRequest = Request[Any, Any, Any]


class RecommendHits(msgspec.Struct, rename="camel"):
    """One request's recommendations (Recommend's ``recommendationsResults``)."""

    hits: list[dict[str, Any]]
    nb_hits: int
    page: int
    nb_pages: int
    hits_per_page: int
    processing_time_ms: int = msgspec.field(name="processingTimeMS")


class RecommendResponse(msgspec.Struct):
    results: list[RecommendHits]


class LookingSimilar(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    object_id: str
    threshold: float
    limit: int
    parameters: dict[str, Any]
    fallback: dict[str, Any] | None = None  # fallbackParameters


def read_request(request: Any, at: str) -> LookingSimilar:
    """One entry of ``requests``, checked as the specification types it."""
    if not isinstance(request, dict):
        raise InvalidRequest(f"{at}: must be an object")
    model = request.get("model")
    if model != MODEL:
        known = f"'{model}' is not served" if model in OTHER_MODELS else \
            f"'{model}' is not a Recommend model" if model is not None else "is required"
        raise InvalidRequest(f"{at}.model {known}: searchport answers the looking-similar "
                             "model only, by meaning (docs/semantic.md)")
    unknown = sorted(set(request) - KEYS)
    if unknown:
        raise InvalidRequest(f"{at}: unknown or unsupported parameter '{unknown[0]}'")
    handle, object_id = request.get("indexName"), request.get("objectID")
    if not isinstance(handle, str) or not handle:
        raise InvalidRequest(f"{at}.indexName is required (a string)")
    if not isinstance(object_id, str) or not object_id:
        raise InvalidRequest(f"{at}.objectID is required (a string)")
    threshold = request.get("threshold")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) \
            or not 0 <= threshold <= 100:
        raise InvalidRequest(f"{at}.threshold is required: a number from 0 to 100")
    limit = request.get("maxRecommendations", MAX_RECOMMENDATIONS)
    if not isinstance(limit, int) or isinstance(limit, bool) \
            or not 1 <= limit <= MAX_RECOMMENDATIONS:
        raise InvalidRequest(f"{at}.maxRecommendations must be an integer from 1 to "
                             f"{MAX_RECOMMENDATIONS}")
    parameters = request.get("queryParameters", {})
    if not isinstance(parameters, dict):
        raise InvalidRequest(f"{at}.queryParameters must be an object")
    unsupported = sorted(set(parameters) - QUERY_PARAMETERS)
    if unsupported:
        raise InvalidRequest(f"{at}.queryParameters.{unsupported[0]} is not supported on "
                             "the looking-similar model")
    fallback = request.get("fallbackParameters")
    if fallback is not None and not isinstance(fallback, dict):
        raise InvalidRequest(f"{at}.fallbackParameters must be an object")
    paging = [name for name in FALLBACK_PAGING if fallback and name in fallback]
    if paging:
        raise InvalidRequest(f"{at}.fallbackParameters.{paging[0]}: the fallback search "
                             "fills the recommendations (maxRecommendations), it has no "
                             "page of its own")
    return LookingSimilar(handle=handle, object_id=object_id, threshold=float(threshold),
                          limit=limit, parameters=parameters, fallback=fallback)


def read_body(raw: bytes) -> list[LookingSimilar]:
    try:
        body = msgspec.json.decode(raw) if raw.strip() else None
    except (msgspec.DecodeError, RecursionError):
        raise InvalidRequest("The request body is not valid JSON") from None
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list):
        raise InvalidRequest('The body must be {"requests": [..]}')
    if len(requests) > MAX_REQUESTS:
        raise InvalidRequest(f"At most {MAX_REQUESTS} requests in one call")
    return [read_request(r, f"requests[{i}]") for i, r in enumerate(requests)]


async def fallback_hits(search: AlgoliaSearch, ask: LookingSimilar,
                        recommended: list[dict[str, Any]], access: Access,
                        at: str) -> list[dict[str, Any]]:
    """The fallback search's hits that are neither the record nor recommended, as many as
    ``maxRecommendations`` leaves room for: with the attributes ``queryParameters``
    retrieves and without highlights, unless ``fallbackParameters`` says otherwise."""
    asked = ask.fallback or {}
    taken = {ask.object_id, *(hit["objectID"] for hit in recommended)}
    room = ask.limit - len(recommended)
    retrieved = ask.parameters.get("attributesToRetrieve")
    params = {"attributesToHighlight": [], "analytics": False,
              **({} if retrieved is None else {"attributesToRetrieve": retrieved}),
              **asked, "hitsPerPage": room + len(taken), "page": 0}
    try:
        (answer,) = await search((AlgoliaQuery(handle=ask.handle, request=params),), access)
    except InvalidRequest as error:
        raise InvalidRequest(f"{at}.fallbackParameters: {error.message}") from None
    # a recommendation has no highlights: a fallback hit has those its parameters ask
    plain = {"_highlightResult": "attributesToHighlight" not in asked,
             "_snippetResult": "attributesToSnippet" not in asked}
    hits = [{k: v for k, v in hit.items() if not plain.get(k)} for hit in answer.hits
            if hit.get("objectID") not in taken]
    return hits[:room]


async def recommend(similar: SimilarDocuments, search: AlgoliaSearch, ask: LookingSimilar,
                    access: Access, at: str) -> RecommendHits:
    started = time.perf_counter()
    attributes = attribute_names(ask.parameters.get("attributesToRetrieve"),
                             "queryParameters.attributesToRetrieve")

    def plan(entry: IndexEntry) -> SearchQuery:
        return SearchQuery(filters=algolia_filters(ask.parameters, entry), limit=ask.limit,
                           max_facet_values=0)

    found = await similar.nearest(ask.handle, ask.object_id, plan, access)
    fields = found.entry.fields
    hits = []
    for hit, cosine in zip(found.result.hits, found.cosines, strict=True):
        score = round(max(0.0, cosine) * 100, 2)
        if score < ask.threshold:
            continue
        hits.append({**as_record(shape_document(fields, hit), attributes), "_score": score})
    if ask.fallback is not None and len(hits) < ask.limit:
        hits += await fallback_hits(search, ask, hits, access, at)
    return RecommendHits(hits=hits, nb_hits=len(hits), page=0, nb_pages=1 if hits else 0,
                         hits_per_page=ask.limit,
                         processing_time_ms=round((time.perf_counter() - started) * 1000))


def algolia_recommend_controller(uc: UseCases) -> type[Controller]:
    class AlgoliaRecommendController(Controller):
        tags = ["algolia"]

        @post("/1/indexes/*/recommendations", status_code=200,
              responses={200: ResponseSpec(
                  data_container=RecommendResponse, generate_examples=False,
                  description="One result per request, in request order: the records "
                  "nearest in meaning, each with _score (0..100)."), **p.ALGOLIA_ERRORS},
              summary="Algolia Recommend: looking-similar",
              description='Algolia Recommend\'s {"requests": [{"indexName", "model": '
              '"looking-similar", "objectID", "threshold", "maxRecommendations", '
              '"queryParameters", "fallbackParameters"}]}: the records nearest in meaning '
              "to objectID (the handle's semantic section, docs/semantic.md), then, when "
              "fewer pass, the fallback search's hits. Other models are a 400.")
        async def recommendations(self, request: AnyRequest) -> Prepared:
            asks = read_body(await request.body())
            access = access_of(request.scope)
            similar, search = uc.similar_documents(), uc.algolia_search()
            results = [await recommend(similar, search, ask, access, f"requests[{i}]")
                       for i, ask in enumerate(asks)]
            return json_body(msgspec.json.encode(RecommendResponse(results=results)))

    return AlgoliaRecommendController
