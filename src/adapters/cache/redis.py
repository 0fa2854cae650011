"""The Redis cache: one connection pool per process, and an outage is a fast miss.

Every call has a deadline of about two socket timeouts and redis-py's own retries are off.
After a failure the cache is "down": every call returns at once as a miss, and a background
PING tries Redis again every ``retry_after`` seconds, so no request ever waits on a Redis that
is known to be down (only the calls under way when it goes away pay one deadline). A refused,
reset or garbled connection is a failure at once; a timeout only when no other call succeeded
meanwhile (on a busy event loop a reply can be read late although Redis is fine: that call is
a miss, not an outage). An outage is logged once when it starts and once when it ends.
Values carry a header (magic, expiry, CRC-32 of the body), so anything else found under a key
(garbage, another program's value, a truncated write) is a miss.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeout

logger = logging.getLogger("searchport.cache")

T = TypeVar("T")
MAGIC = b"spc\x01"
_HEADER = struct.Struct(">4sdI")  # magic, expiry (unix seconds), CRC-32 of the body
_FAILED: Any = object()
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


def redacted(url: str) -> str:
    """The URL without its credentials, for log lines."""
    parts = urlsplit(url)
    host = parts.hostname or parts.path or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def check_url(url: str) -> None:
    """Raise ``ValueError`` (its message free of the URL's credentials) unless redis-py can
    use ``url``; no connection is made."""
    try:
        aioredis.ConnectionPool.from_url(url)
    except ValueError as exc:
        message = str(exc)
        try:
            parts = urlsplit(url)
            secrets = [parts.password, parts.username]
        except ValueError:
            secrets = []
        if any(secret and _word(secret).search(message) for secret in secrets):
            message = "not a Redis URL (redis://[user:password@]host:port/db)"
        raise ValueError(message) from None


def _word(text: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(text)}(?![A-Za-z0-9])")


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
        self._where = redacted(url)
        self._deadline = 2.5 * timeout  # a whole call: a new connection and one command
        self._client: aioredis.Redis = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout,
            # a refused connection fails at once whatever this says; a generous connect
            # timeout only spares a busy event loop false alarms when many connect at once
            socket_connect_timeout=self._deadline,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._pattern = f"{prefix}:*"
        self._retry_after = retry_after
        self._down = False
        self._retry_at = 0.0
        self._reconnect: asyncio.Task[None] | None = None  # the background PING while down
        self._closed = False
        self._last_ok = 0.0  # monotonic time of the last call Redis answered

    @property
    def status(self) -> str:
        return "error" if self._down else "connected"

    async def probe(self) -> str:
        if not self._down:
            # a PING that Redis refuses (no such database, ACL...) means nothing will work
            await self._call(self._client.ping, refusal_is_outage=True)
            return self.status
        reconnect = self._reconnect_when_due()
        if reconnect is not None:  # health may wait for the PING under way (one deadline)
            await asyncio.wait({reconnect}, timeout=self._deadline + 0.05)
        return self.status

    async def get(self, key: str) -> bytes | None:
        found = await self.get_entry(key)
        return None if found is None else found[0]

    async def get_entry(self, key: str) -> tuple[bytes, float] | None:
        """The body and its expiry (unix seconds), for a tier in front of this one."""
        raw = await self._call(lambda: self._client.get(key))
        return None if raw is _FAILED else unpack(raw)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        millis = max(1, int(ttl * 1000))
        await self._call(lambda: self._client.set(key, pack(value, ttl), px=millis))

    async def clear(self) -> int:
        """SCAN over the prefix and UNLINK in batches: never FLUSHDB."""

        async def scan_and_unlink() -> int:
            removed = 0
            batch: list[bytes] = []
            async for key in self._client.scan_iter(match=self._pattern, count=CLEAR_BATCH):
                batch.append(key)
                if len(batch) >= CLEAR_BATCH:
                    removed += await self._client.unlink(*batch)
                    batch.clear()
            if batch:
                removed += await self._client.unlink(*batch)
            return removed

        removed = await self._call(scan_and_unlink, deadline=30.0)
        return -1 if removed is _FAILED else int(removed)

    async def close(self) -> None:
        self._closed = True
        if self._reconnect is not None:
            self._reconnect.cancel()
            await asyncio.gather(self._reconnect, return_exceptions=True)
            self._reconnect = None
        await self._client.aclose()

    async def _call(
        self,
        op: Callable[[], Awaitable[T]],
        deadline: float | None = None,
        refusal_is_outage: bool = False,
    ) -> T:
        """``op()``'s result, or ``_FAILED`` after a failure, or at once while Redis is down."""
        if self._down:
            self._reconnect_when_due()
            return _FAILED  # type: ignore[no-any-return]
        started = time.monotonic()
        try:
            async with asyncio.timeout(deadline or self._deadline):
                result = await op()
        except ResponseError as exc:
            if refusal_is_outage:
                self._fail(exc)
            else:  # Redis answered (WRONGTYPE, OOM...): this key or command failed, no more
                logger.debug("cache command refused by %s: %s", self._where, exc)
            return _FAILED  # type: ignore[no-any-return]
        except (TimeoutError, RedisTimeout) as exc:
            if self._last_ok < started:  # nobody got an answer meanwhile: Redis is stuck
                self._fail(exc)
            return _FAILED  # type: ignore[no-any-return]
        except Exception as exc:  # connection refused or reset, protocol garbage...
            self._fail(exc)
            return _FAILED  # type: ignore[no-any-return]
        self._up()
        return result

    def _reconnect_when_due(self) -> asyncio.Task[None] | None:
        """The background PING under way, or a new one once the back-off has passed."""
        if self._reconnect is not None and not self._reconnect.done():
            return self._reconnect
        if self._closed or time.monotonic() < self._retry_at:
            return None
        self._retry_at = time.monotonic() + self._retry_after  # at most one try per back-off
        self._reconnect = asyncio.get_running_loop().create_task(self._try_again())
        return self._reconnect

    async def _try_again(self) -> None:
        try:
            async with asyncio.timeout(self._deadline):
                await self._client.ping()
        except Exception:  # still down; logged when the outage began (a cancel passes through)
            self._retry_at = time.monotonic() + self._retry_after
            return
        self._up()

    def _fail(self, exc: Exception) -> None:
        self._retry_at = time.monotonic() + self._retry_after
        if not self._down:
            self._down = True
            reason = str(exc) or type(exc).__name__
            logger.warning(
                "cache: Redis at %s is unreachable (%s); searches go to the engines until "
                "it is back", self._where, reason,
            )

    def _up(self) -> None:
        self._last_ok = time.monotonic()
        if self._down:
            self._down = False
            logger.info("cache: Redis at %s is reachable again", self._where)
