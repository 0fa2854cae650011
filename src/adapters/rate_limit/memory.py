"""Rate-limit state in this process: one instant per key, at most ``max_keys`` keys.

When full, the key that was least recently seen goes first: it is also the one whose state
matters least (an evicted key starts over with its full allowance).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from searchport.adapters.lru import Lru
from searchport.domain.rate_limit import gcra


class MemoryRateLimitStore:
    def __init__(self, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic):
        self._tats: Lru[str, float] = Lru(max_keys)
        self._clock = clock

    async def hit(self, key: str, limit: int, window: float) -> float:
        return self.hit_now(key, limit, window)

    def hit_now(self, key: str, limit: int, window: float) -> float:
        """``hit`` without awaiting (for a store that falls back to this one)."""
        now = self._clock()
        verdict = gcra(self._tats.get(key), now, limit, window)
        if verdict.allowed:
            self._tats.put(key, verdict.tat)
        return verdict.retry_after

    def __len__(self) -> int:
        return len(self._tats)

    async def close(self) -> None:
        self._tats.clear()
