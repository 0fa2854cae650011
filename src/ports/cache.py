"""The response-cache port."""

from __future__ import annotations

from typing import Protocol


class CachePort(Protocol):
    """A byte cache keyed by strings. Never raises: an outage is a miss."""

    @property
    def status(self) -> str:
        """``disabled``, ``memory``, ``connected`` or ``error``."""
        ...

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl: float) -> None: ...

    async def clear(self) -> int:
        """Drop searchport's own entries only; the number removed (or -1 if unknown)."""
        ...

    async def close(self) -> None: ...
