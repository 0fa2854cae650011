"""Where Litestar's response cache keeps whole responses, beside the in-process tier of
searchport's own cache (``cache.backend`` memory, or the memory tier in front of Redis).

A kept response lives under the tier's bounds (``cache.maxEntries``, ``cache.maxBytes``, counted
apart), its clock and the response cache's TTLs (the handle's ``cache`` section; never past
``localTtl`` in front of Redis); ``POST /cache/clear`` drops it with the rest
(``forget_kept``). A hit is served by Litestar before any parameter is parsed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from litestar.stores.base import Store

from searchport.adapters.cache.memory import MemoryCache
from searchport.entrypoints.http.http_cache import STORE
from searchport.entrypoints.http.timing import current_stats


class ResponseStore(Store):
    """A Litestar ``Store``: a ``MemoryCache`` as bounded and timed as ``tier``. ``ttl(kind,
    handle)``: how long a response of that route on that handle is kept (0: never); ``on_hit``:
    a cache hit, for the metrics."""

    __slots__ = ("_cap", "_kept", "_on_hit", "_ttl")

    def __init__(
        self,
        tier: MemoryCache,
        ttl: Callable[[str, str], float],
        *,
        cap: float = math.inf,
        on_hit: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__()
        self._kept = MemoryCache(max_entries=tier.max_entries, max_bytes=tier.max_bytes,
                                 clock=tier.clock)
        self._ttl = ttl
        self._cap = cap
        self._on_hit = on_hit

    async def set(self, key: str, value: str | bytes,
                  expires_in: int | timedelta | None = None) -> None:
        kind, handle, _ = key.split("\x00", 2)
        ttl = min(self._ttl(kind, handle), self._cap)
        if ttl > 0:
            self._kept.store(key, value.encode() if isinstance(value, str) else value, ttl)

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        value = self._kept.lookup(key)
        if value is not None:
            # Litestar sends what it finds here as the response: the request's record says so
            stats = current_stats.get()
            if stats is not None:
                stats.cache = "hit"
            if self._on_hit is not None:
                self._on_hit(True)
        return value

    async def delete(self, key: str) -> None:
        self._kept.store(key, b"", 0)  # storing with no TTL drops the entry

    async def delete_all(self) -> None:
        await self._kept.clear()

    async def exists(self, key: str) -> bool:
        return self._kept.lookup(key) is not None

    async def expires_in(self, key: str) -> int | None:
        return None  # not tracked per key; never asked by the response cache


async def forget_kept(app: Any) -> None:
    """Drop the responses Litestar's response cache keeps in ``app`` (a Litestar app), if any."""
    store = app.state.get(STORE)
    if store is not None:
        await store.delete_all()
