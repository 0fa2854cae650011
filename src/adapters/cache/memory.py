"""An in-process cache: least recently used first out, bounded by entries and by bytes."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

ENTRY_OVERHEAD = 96  # bytes of bookkeeping counted per entry besides its key and value


class MemoryCache:
    """Entries expire after their TTL; past ``max_entries`` or ``max_bytes`` the least
    recently used go first. Everything runs on the event loop, so no lock is needed."""

    status = "memory"

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    async def probe(self) -> str:
        return self.status

    def lookup(self, key: str) -> bytes | None:
        found = self._entries.get(key)
        if found is None:
            return None
        value, expires = found
        if expires <= self._clock():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return value

    def store(self, key: str, value: bytes, ttl: float) -> None:
        if key in self._entries:
            self._drop(key)
        size = _size(key, value)
        if ttl <= 0 or size > self.max_bytes:
            return
        self._entries[key] = (value, self._clock() + ttl)
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    def _drop(self, key: str) -> None:
        value, _ = self._entries.pop(key)
        self._bytes -= _size(key, value)

    async def get(self, key: str) -> bytes | None:
        return self.lookup(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.store(key, value, ttl)

    async def clear(self) -> int:
        removed = len(self._entries)
        self._entries.clear()
        self._bytes = 0
        return removed

    async def close(self) -> None:
        self._entries.clear()
        self._bytes = 0


def _size(key: str, value: bytes) -> int:
    return len(key) + len(value) + ENTRY_OVERHEAD
