"""Where Litestar's response cache keeps whole answers: the in-process tier of searchport's
own cache (``cache.backend`` memory, or the memory tier in front of Redis).

So a cached GET answer is one entry among the response cache's, under the same bounds
(``cache.maxEntries``, ``cache.maxBytes``), the same clock and TTLs (the handle's
``cache`` section; never past ``localTtl`` in front of Redis), and ``POST /cache/clear``
drops it with the rest. A hit is served by Litestar before any parameter is parsed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta

from litestar.stores.base import Store

from searchport.adapters.cache.memory import MemoryCache

PREFIX = "http\x00"  # keeps these keys apart from the response cache's (``prefix:v1:...``)


class ResponseStore(Store):
    """A Litestar ``Store`` over a ``MemoryCache``. ``ttl(kind, handle)``: how long an answer
    of that route on that handle is kept (0: never); ``on_hit``: a cache hit, for the
    metrics."""

    __slots__ = ("_cap", "_on_hit", "_tier", "_ttl")

    def __init__(
        self,
        tier: MemoryCache,
        ttl: Callable[[str, str], float],
        *,
        cap: float = math.inf,
        on_hit: Callable[[bool], None] | None = None,
    ) -> None:
        self._tier = tier
        self._ttl = ttl
        self._cap = cap
        self._on_hit = on_hit

    async def set(self, key: str, value: str | bytes,
                  expires_in: int | timedelta | None = None) -> None:
        kind, handle, _ = key.split("\x00", 2)
        ttl = min(self._ttl(kind, handle), self._cap)
        if ttl > 0:
            self._tier.store(PREFIX + key, value.encode() if isinstance(value, str) else value,
                             ttl)

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        value = self._tier.lookup(PREFIX + key)
        if value is not None and self._on_hit is not None:
            self._on_hit(True)
        return value

    async def delete(self, key: str) -> None:
        self._tier.store(PREFIX + key, b"", 0)  # storing with no TTL drops the entry

    async def delete_all(self) -> None:
        await self._tier.clear()

    async def exists(self, key: str) -> bool:
        return self._tier.lookup(PREFIX + key) is not None

    async def expires_in(self, key: str) -> int | None:
        return None  # not tracked per key; never asked by the response cache
