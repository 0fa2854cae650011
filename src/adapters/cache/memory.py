"""An in-process cache: least recently used first out, bounded by entries and by bytes."""

from __future__ import annotations

import time
from collections.abc import Callable

from searchport.adapters.lru import Lru

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
        self.clock = clock
        self._entries: Lru[str, tuple[bytes, float]] = Lru(max_entries, max_bytes, _size)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return int(self._entries.bytes)

    async def probe(self) -> str:
        return self.status

    def lookup(self, key: str) -> bytes | None:
        """The entry if this process holds it and it has not expired (no I/O)."""
        found = self._entries.get(key)
        if found is None:
            return None
        value, expires = found
        if expires <= self.clock():
            self._entries.discard(key)
            return None
        return value

    def store(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` for ``ttl`` seconds; a TTL of 0 or less drops the entry."""
        if ttl <= 0:
            self._entries.discard(key)
            return
        self._entries.put(key, (value, self.clock() + ttl))

    async def get(self, key: str) -> bytes | None:
        return self.lookup(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.store(key, value, ttl)

    async def clear(self) -> int:
        removed = len(self._entries)
        self._entries.clear()
        return removed

    async def close(self) -> None:
        self._entries.clear()


def _size(key: str, entry: tuple[bytes, float]) -> int:
    return len(key) + len(entry[0]) + ENTRY_OVERHEAD
