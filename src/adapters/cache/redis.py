"""The Redis cache: one connection pool per process (a ``RedisLink``), and an outage is a
fast miss (see ``redis_link`` for how an outage is detected, logged and ended).

Values carry a header (magic, expiry, CRC-32 of the body), so anything else found under a key
(garbage, another program's value, a truncated write) is a miss.
"""

from __future__ import annotations

import logging
import struct
import time
import zlib

from searchport.adapters.redis_link import FAILED, RedisLink, check_url, redacted

__all__ = ["MAGIC", "RedisCache", "check_url", "pack", "redacted", "unpack"]

logger = logging.getLogger("searchport.cache")

MAGIC = b"spc\x01"
_HEADER = struct.Struct(">4sdI")  # magic, expiry (unix seconds), CRC-32 of the body
CLEAR_BATCH = 500


def pack(body: bytes, ttl: float, now: float | None = None) -> bytes:
    expires = (time.time() if now is None else now) + ttl
    return _HEADER.pack(MAGIC, expires, zlib.crc32(body)) + body


def unpack(raw: object, now: float | None = None) -> tuple[bytes, float] | None:
    """The body and its expiry (unix seconds), or ``None`` for anything not ours or stale."""
    if not isinstance(raw, bytes) or len(raw) < _HEADER.size:
        return None
    magic, expires, crc = _HEADER.unpack_from(raw)
    body = raw[_HEADER.size:]
    if magic != MAGIC or zlib.crc32(body) != crc:
        return None
    if expires <= (time.time() if now is None else now):
        return None
    return body, expires


class RedisCache:
    """``CachePort`` over Redis; keys live under ``<prefix>:`` and nothing else is touched."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "searchport",
        timeout: float = 0.1,
        retry_after: float = 1.0,
    ) -> None:
        self._link = RedisLink(
            url, timeout=timeout, retry_after=retry_after, logger=logger, label="cache",
            meanwhile="searches go to the engines",
        )
        self._pattern = f"{prefix}:*"

    @property
    def status(self) -> str:
        return "error" if self._link.down else "connected"

    async def probe(self) -> str:
        await self._link.probe()
        return self.status

    async def get(self, key: str) -> bytes | None:
        found = await self.get_entry(key)
        return None if found is None else found[0]

    async def get_entry(self, key: str) -> tuple[bytes, float] | None:
        """The body and its expiry (unix seconds), for a tier in front of this one."""
        raw = await self._link.call(lambda: self._link.client.get(key))
        return None if raw is FAILED else unpack(raw)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        millis = max(1, int(ttl * 1000))
        await self._link.call(lambda: self._link.client.set(key, pack(value, ttl), px=millis))

    async def clear(self) -> int:
        """SCAN over the prefix and UNLINK in batches: never FLUSHDB."""
        client = self._link.client

        async def scan_and_unlink() -> int:
            removed = 0
            batch: list[bytes] = []
            async for key in client.scan_iter(match=self._pattern, count=CLEAR_BATCH):
                batch.append(key)
                if len(batch) >= CLEAR_BATCH:
                    removed += await client.unlink(*batch)
                    batch.clear()
            if batch:
                removed += await client.unlink(*batch)
            return removed

        removed = await self._link.call(scan_and_unlink, deadline=30.0)
        return -1 if removed is FAILED else int(removed)

    async def close(self) -> None:
        await self._link.close()
