"""The rate-limit store port."""

from __future__ import annotations

from typing import Protocol


class RateLimitStore(Protocol):
    """Counts requests per key (see ``domain.rate_limit``). Never raises, never hangs."""

    async def hit(self, key: str, limit: int, window: float) -> float:
        """Count one request for ``key``: 0 when allowed, else the seconds to wait."""
        ...

    async def close(self) -> None: ...
