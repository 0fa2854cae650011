"""Rate-limit state in Redis, shared by every process and host: the GCRA of
``domain.rate_limit`` as one Lua script, so that a check and its update are atomic.

Times are whole microseconds (exact in Lua's doubles), the state of a key is its TAT and
expires when the allowance is full again. Keys live under ``<prefix>:rl:``. While Redis is
unreachable (see ``RedisLink``) each process counts in its own memory instead: limits stay
on, per process, and no request waits or fails because of Redis.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from searchport.adapters.rate_limit.memory import MemoryRateLimitStore
from searchport.adapters.redis_link import FAILED, RedisLink

logger = logging.getLogger("searchport.ratelimit")

MICRO = 1_000_000

# KEYS[1]: the key; ARGV: now, interval, window (microseconds). Returns the microseconds to
# wait: 0 when allowed (and the new TAT stored).
GCRA = """
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local excess = new_tat - now - window
if excess > 0 then return excess end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return 0
"""


class RedisRateLimitStore:
    def __init__(
        self,
        url: str,
        *,
        prefix: str = "searchport",
        timeout: float = 0.1,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._link = RedisLink(
            url, timeout=timeout, logger=logger, label="rate limit",
            meanwhile="each process counts requests on its own",
        )
        self._script = self._link.client.register_script(GCRA)
        self._prefix = f"{prefix}:rl:"
        self._clock = clock
        self._fallback = MemoryRateLimitStore(clock=clock)

    async def hit(self, key: str, limit: int, window: float) -> float:
        now = int(self._clock() * MICRO)
        interval = math.ceil(window * MICRO / limit)
        waited = await self._link.call(lambda: self._script(
            keys=[self._prefix + key], args=[now, interval, int(window * MICRO)]
        ))
        if waited is FAILED:
            return self._fallback.hit_now(key, limit, window)
        return int(waited) / MICRO

    async def close(self) -> None:
        await self._link.close()
