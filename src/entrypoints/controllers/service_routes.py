"""Service routes: health, the index list, cache clearing and metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler

from searchport.domain.errors import Forbidden
from searchport.domain.responses import CacheClearResponse, HealthResponse, IndexListResponse
from searchport.domain.scope import Scope
from searchport.domain.usecases.clear_cache import ClearCache
from searchport.domain.usecases.health import Health
from searchport.domain.usecases.list_indexes import ListIndexes
from searchport.entrypoints.controllers.params import GUARDS
from searchport.entrypoints.observability import Metrics
from searchport.entrypoints.response_store import forget_kept


def _unrestricted(access: Scope, what: str) -> None:
    """What concerns every handle is for keys that read every record."""
    if access.restricted:
        raise Forbidden(f"This API key is restricted to some handles or records: it may not "
                        f"{what}")


def health_route(health_uc: Callable[[], Health]) -> HTTPRouteHandler:
    """``GET /health``; ``health_uc``: the use case's provider, asked per request (an override
    in the container holds). No parameter and no dependency: a probe pays no signature model
    or dependency resolution."""

    @get("/health", summary="Health and cache status (no auth)", tags=["service"])
    async def health() -> HealthResponse:
        return await health_uc()()

    return health


class ServiceController(Controller):
    tags = ["service"]

    @get("/indexes", summary="Configured handles, engines and capabilities",
         responses=GUARDS)
    async def indexes(self, list_indexes: NamedDependency[ListIndexes],
                      access: NamedDependency[Scope]) -> IndexListResponse:
        return await list_indexes(None, access)

    @post("/cache/clear", status_code=200, summary="Drop searchport's own cache entries",
          responses=GUARDS)
    async def clear_cache(
        self, request: Request[Any, Any, Any], clear_cache_uc: NamedDependency[ClearCache],
        access: NamedDependency[Scope],
    ) -> CacheClearResponse:
        _unrestricted(access, "clear the cache")
        await forget_kept(request.app)  # the whole answers Litestar keeps (http_cache)
        return await clear_cache_uc()


@get(
    "/metrics",
    summary="Prometheus metrics of this process",
    description="Requests by route and status, latencies, engine calls and errors by handle, "
    "cache hits and misses, in the Prometheus text format. Needs the token when a key is "
    "configured, unless `metrics.public` is true.",
    tags=["service"],
    media_type="text/plain",
    responses=GUARDS,
)
async def metrics_route(metrics: NamedDependency[Metrics],
                        access: NamedDependency[Scope]) -> Response[bytes]:
    _unrestricted(access, "read the metrics")
    return Response(metrics.render(), media_type=metrics.content_type)
