"""``cache.backend: none``: a ``CachePort`` that stores nothing."""

from __future__ import annotations


class NoCache:
    """Stores nothing and finds nothing, without any I/O."""

    status = "disabled"

    async def probe(self) -> str:
        return self.status

    async def get(self, key: str) -> bytes | None:
        return None

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        return None

    async def clear(self) -> int:
        return 0

    async def close(self) -> None:
        return None
