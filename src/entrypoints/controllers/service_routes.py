"""Service routes: health, the index list and cache clearing."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.di import NamedDependency

from searchport.domain.responses import CacheClearResponse, HealthResponse, IndexListResponse
from searchport.domain.usecases.clear_cache import ClearCache
from searchport.domain.usecases.health import Health
from searchport.domain.usecases.list_indexes import ListIndexes


class ServiceController(Controller):
    tags = ["service"]

    @get("/health", summary="Health and cache status (no auth)")
    async def health(self, health_uc: NamedDependency[Health]) -> HealthResponse:
        return await health_uc()

    @get("/indexes", summary="Configured handles, engines and capabilities")
    async def indexes(self, list_indexes: NamedDependency[ListIndexes]) -> IndexListResponse:
        return await list_indexes()

    @post("/cache/clear", status_code=200, summary="Drop searchport's own cache entries")
    async def clear_cache(self, clear_cache_uc: NamedDependency[ClearCache]) -> CacheClearResponse:
        return await clear_cache_uc()
