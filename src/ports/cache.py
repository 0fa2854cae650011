"""The response-cache port."""

from __future__ import annotations

from typing import Protocol


class CachePort(Protocol):
    """A byte cache keyed by strings. Never raises, never hangs: an outage is a miss."""

    @property
    def status(self) -> str:
        """``disabled``, ``memory``, ``connected`` or ``error``, as last seen (no I/O)."""
        ...

    async def probe(self) -> str:
        """The status after checking the backend now (at most one short round trip)."""
        ...

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds (> 0)."""
        ...

    async def clear(self) -> int:
        """Drop searchport's own entries only; the number removed (or -1 if unknown)."""
        ...

    async def close(self) -> None: ...

