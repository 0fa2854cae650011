"""Redis behind a small in-process tier, so that a hot key's hit rarely leaves the process."""

from __future__ import annotations

import time

from searchport.adapters.cache.memory import MemoryCache
from searchport.adapters.cache.redis import RedisCache


class TwoTierCache:
    """Reads the memory tier first, then Redis; an entry copied from Redis stays in memory for
    at most ``local_ttl`` seconds and never past its Redis expiry. Status is Redis's."""

    def __init__(self, local: MemoryCache, shared: RedisCache, *, local_ttl: float = 5.0) -> None:
        self.local = local
        self.shared = shared
        self.local_ttl = local_ttl

    @property
    def status(self) -> str:
        return self.shared.status

    async def probe(self) -> str:
        return await self.shared.probe()

    def lookup(self, key: str) -> bytes | None:
        """The memory tier's entry only (no I/O)."""
        return self.local.lookup(key)

    async def get(self, key: str) -> bytes | None:
        value = self.local.lookup(key)
        if value is not None:
            return value
        found = await self.shared.get_entry(key)
        if found is None:
            return None
        value, expires = found
        self.local.store(key, value, min(self.local_ttl, expires - time.time()))
        return value

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.local.store(key, value, min(self.local_ttl, ttl))
        await self.shared.set(key, value, ttl)

    async def clear(self) -> int:
        """Redis's entries (this process's memory tier is emptied too; other processes' memory
        tiers keep theirs for at most ``local_ttl`` seconds)."""
        await self.local.clear()
        return await self.shared.clear()

    async def close(self) -> None:
        await self.local.close()
        await self.shared.close()
