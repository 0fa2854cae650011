"""Health: liveness, the cache's state and each handle's engine, never waiting on one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchport.domain.responses import HealthResponse

if TYPE_CHECKING:
    from searchport.domain.engine_health import EngineHealth
    from searchport.ports.cache import CachePort


class Health:
    """``ok`` while the process answers and every engine does (or is not known yet);
    ``degraded`` while an engine is unreachable. Engine statuses come from a cached view."""

    def __init__(self, *, cache: CachePort, version: str,
                 engines: EngineHealth | None = None) -> None:
        self._cache = cache
        self._version = version
        self._engines = engines

    async def __call__(self, request: None = None) -> HealthResponse:
        cache = await self._cache.probe()
        engines = await self._engines.current() if self._engines is not None else {}
        degraded = "unreachable" in engines.values()
        return HealthResponse(status="degraded" if degraded else "ok", cache=cache,
                              version=self._version, engines=engines)
