"""Service routes: health, the index list, cache clearing and metrics."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from searchport.domain.access import Access
from searchport.domain.errors import Forbidden
from searchport.domain.responses import CacheClearResponse, HealthResponse, IndexListResponse
from searchport.entrypoints.controllers.params import GUARDS
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of
from searchport.entrypoints.http.http_cache import Prepared, json_body
from searchport.entrypoints.http.response_store import forget_kept

AnyRequest = Request[Any, Any, Any]
_encode = msgspec.json.Encoder().encode


def _unrestricted(access: Access, what: str) -> None:
    """What concerns every handle is for keys that read every record."""
    if access.restricted:
        raise Forbidden(f"This API key is restricted to some handles or records: it may not "
                        f"{what}")


def service_routes(uc: UseCases, *, metrics: bool) -> list[HTTPRouteHandler]:
    """``/health``, ``/indexes``, ``/cache/clear`` and, when ``metrics``, ``/metrics``."""

    # no parameter: a probe pays no signature model; its body is encoded here and sent as
    # prepared messages, without a Response object (http_cache.Prepared)
    @get("/health", summary="Health and cache status (no auth)", tags=["service"],
         responses={200: ResponseSpec(data_container=HealthResponse, generate_examples=False,
                                      description="Liveness, the cache and each engine.")})
    async def health() -> Prepared:
        return json_body(_encode(await uc.health()()))

    @get("/indexes", summary="Configured handles, engines and capabilities",
         responses=GUARDS, tags=["service"])
    async def indexes(request: AnyRequest) -> IndexListResponse:
        return await uc.list_indexes()(None, access_of(request.scope))

    @post("/cache/clear", status_code=200, summary="Drop searchport's own cache entries",
          responses=GUARDS, tags=["service"])
    async def clear_cache(request: AnyRequest) -> CacheClearResponse:
        _unrestricted(access_of(request.scope), "clear the cache")
        await forget_kept(request.app)  # the whole answers Litestar keeps (http_cache)
        return await uc.clear_cache()()

    @get(
        "/metrics",
        summary="Prometheus metrics of this process",
        description="Requests by route and status, latencies, engine calls and errors by "
        "handle, cache hits and misses, in the Prometheus text format. Needs the token when a "
        "key is configured, unless `metrics.public` is true.",
        tags=["service"],
        media_type="text/plain",
        responses=GUARDS,
    )
    async def metrics_route(request: AnyRequest) -> Response[bytes]:
        _unrestricted(access_of(request.scope), "read the metrics")
        found = uc.metrics()
        return Response(found.render(), media_type=found.content_type)

    return [health, indexes, clear_cache, *([metrics_route] if metrics else [])]
