"""The bodies of Algolia's search calls, read into ``AlgoliaQueries``.

``{"requests": [{"indexName": .., "params": ..}, ..]}`` (multi-queries; ``type: "facet"``
with ``facet`` makes one of them a facet-value search, as client v5 sends it) or one
request object (``/1/indexes/:handle/query``, ``.../facets/:facet/query``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import msgspec

from searchport.domain.catalog import IndexEntry
from searchport.domain.errors import InvalidRequest
from searchport.entrypoints.algolia.plans import FacetHitsCall, SearchCall
from searchport.entrypoints.algolia.plans import plan as plan_query

MAX_REQUESTS = 50
_encoder = msgspec.json.Encoder()


class AlgoliaQuery(msgspec.Struct, frozen=True, kw_only=True):
    handle: str
    request: dict[str, Any]  # the request object as sent: params, or flat parameters
    facet: str | None = None  # set: a search for values of this facet

    def plan(self, entry: IndexEntry) -> SearchCall | FacetHitsCall:
        """This query against its handle (``AlgoliaSearch``'s ``ProtocolQuery``)."""
        return plan_query(entry, self.request, self.facet)


class AlgoliaQueries(msgspec.Struct, frozen=True, kw_only=True):
    queries: tuple[AlgoliaQuery, ...]
    single: bool = False  # answer the one result itself, not {"results": [..]}

    def body(self, answers: list[Any]) -> bytes:
        """The call's answer, as JSON, from its queries' answers, in request order."""
        return _encoder.encode(answers[0] if self.single else {"results": answers})


def _object(body: bytes) -> dict[str, Any]:
    if not body.strip():
        return {}
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        raise InvalidRequest("The request body is not valid JSON") from None
    if not isinstance(value, dict):
        raise InvalidRequest("The request body must be a JSON object")
    return value


def multi_queries(body: bytes, handle: str | None = None) -> AlgoliaQueries:
    """``handle``: the URL's handle (``/:handle/instantsearch``); each ``indexName`` must
    then be absent or the same. Otherwise each request names its handle in ``indexName``."""
    value = _object(body)
    strategy = value.get("strategy", "none")
    if strategy != "none":
        raise InvalidRequest("strategy: only \"none\" is supported (every query is answered)")
    requests = value.get("requests")
    unknown = set(value) - {"requests", "strategy"}
    if unknown:
        raise InvalidRequest(f"{sorted(unknown)[0]} is not a field of a multi-query body")
    if not isinstance(requests, list) or not requests:
        raise InvalidRequest("requests: must be a non-empty list of query objects")
    if len(requests) > MAX_REQUESTS:
        raise InvalidRequest(f"requests: at most {MAX_REQUESTS} queries in one call")
    queries = []
    for position, request in enumerate(requests):
        if not isinstance(request, dict):
            raise InvalidRequest(f"requests[{position}]: must be an object")
        name = request.get("indexName", handle)
        if not isinstance(name, str) or not name:
            raise InvalidRequest(f"requests[{position}].indexName: must name an index handle")
        if handle is not None and name != handle:
            raise InvalidRequest(
                f"requests[{position}].indexName: {name!r} differs from the handle {handle!r} "
                "of the URL; use POST /1/indexes/*/queries to query several handles"
            )
        facet = None
        kind = request.get("type", "default")
        if kind == "facet":
            facet = request.get("facet")
            if not isinstance(facet, str) or not facet:
                raise InvalidRequest(f"requests[{position}].facet: must name a facet attribute")
        elif kind != "default":
            raise InvalidRequest(f"requests[{position}].type: must be \"default\" or \"facet\"")
        queries.append(AlgoliaQuery(handle=name, request=request, facet=facet))
    return AlgoliaQueries(queries=tuple(queries))


def url_query(query_string: bytes, handle: str) -> AlgoliaQueries:
    """Algolia's search with its parameters in the URL (``GET /1/indexes/:handle?query=..``):
    each one as a parameter of the query string (a list as JSON or comma-separated), or all
    of them URL-encoded in ``params``, as in a body. The ``x-algolia-*`` credentials a
    browser client may put there are not search parameters."""
    try:
        pairs = parse_qsl(query_string.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("The query string is not valid URL-encoded UTF-8") from None
    request = {name: value for name, value in pairs
               if not name.lower().startswith("x-algolia-")}
    return AlgoliaQueries(queries=(AlgoliaQuery(handle=handle, request=request),), single=True)


def one_query(body: bytes, handle: str, facet: str | None = None) -> AlgoliaQueries:
    request = _object(body)
    return AlgoliaQueries(queries=(AlgoliaQuery(handle=handle, request=request, facet=facet),),
                          single=True)
