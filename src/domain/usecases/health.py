"""Health: liveness and the cache's state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchport.domain.responses import HealthResponse

if TYPE_CHECKING:
    from searchport.ports.cache import CachePort


class Health:
    """Always ``ok`` while the process answers; the cache's status is checked on each call."""

    def __init__(self, *, cache: CachePort, version: str) -> None:
        self._cache = cache
        self._version = version

    async def __call__(self, request: None = None) -> HealthResponse:
        cache = await self._cache.probe()
        return HealthResponse(status="ok", cache=cache, version=self._version)
