"""ClearCache: drop searchport's own cache entries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchport.domain.responses import CacheClearResponse

if TYPE_CHECKING:
    from searchport.ports.cache import CachePort


class ClearCache:
    """Remove only searchport's entries, never a whole cache database."""

    def __init__(self, *, cache: CachePort) -> None:
        self._cache = cache

    async def __call__(self, request: None = None) -> CacheClearResponse:
        if self._cache.status == "disabled":
            return CacheClearResponse(cleared=False, message="No cache configured")
        removed = await self._cache.clear()
        if removed < 0:
            return CacheClearResponse(cleared=False, message="The cache could not be reached")
        return CacheClearResponse(cleared=True, removed=removed)
