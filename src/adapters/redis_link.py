"""One process's link to Redis, where an outage is a fast failure, never a wait.

Every call has a deadline of about two socket timeouts and redis-py's own retries are off.
After a failure the link is "down": every call fails at once, and a background PING tries
Redis again every ``retry_after`` seconds, so no request ever waits on a Redis that is known
to be down (only the calls under way when it goes away pay one deadline). A refused, reset
or garbled connection is a failure at once; a timeout only when no other call succeeded
meanwhile (on a busy event loop a reply can be read late although Redis is fine: that call
fails, but it is no outage). An outage is logged once when it starts and once when it ends,
with the URL's host and port only, never its credentials.

The response cache and the rate-limit store each hold one link.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeout

T = TypeVar("T")
FAILED: Any = object()  # what ``RedisLink.call`` returns when Redis did not answer


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


class RedisLink:
    """A Redis client (one pool) and the outage state around it."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 0.1,
        retry_after: float = 1.0,
        logger: logging.Logger,
        label: str,
        meanwhile: str,
    ) -> None:
        """``label`` names the user in log lines (``cache``); ``meanwhile`` says what happens
        during an outage (``searches go to the engines``)."""
        self.where = redacted(url)
        self.deadline = 2.5 * timeout  # a whole call: a new connection and one command
        self.client: aioredis.Redis = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout,
            # a refused connection fails at once whatever this says; a generous connect
            # timeout only spares a busy event loop false alarms when many connect at once
            socket_connect_timeout=self.deadline,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._logger = logger
        self._label = label
        self._meanwhile = meanwhile
        self._retry_after = retry_after
        self.down = False
        self._retry_at = 0.0
        self._reconnect: asyncio.Task[None] | None = None  # the background PING while down
        self._closed = False
        self._last_ok = 0.0  # monotonic time of the last call Redis answered

    async def probe(self) -> bool:
        """Whether Redis answers now (at most about one deadline)."""
        if not self.down:
            # a PING that Redis refuses (no such database, ACL...) means nothing will work
            await self.call(self.client.ping, refusal_is_outage=True)
            return not self.down
        reconnect = self._reconnect_when_due()
        if reconnect is not None:  # a probe may wait for the PING under way (one deadline)
            await asyncio.wait({reconnect}, timeout=self.deadline + 0.05)
        return not self.down

    async def call(
        self,
        op: Callable[[], Awaitable[T]],
        deadline: float | None = None,
        refusal_is_outage: bool = False,
    ) -> T:
        """``op()``'s result, or ``FAILED`` after a failure, or at once while Redis is down."""
        if self.down:
            self._reconnect_when_due()
            return FAILED  # type: ignore[no-any-return]
        started = time.monotonic()
        try:
            async with asyncio.timeout(deadline or self.deadline):
                result = await op()
        except ResponseError as exc:
            if refusal_is_outage:
                self._fail(exc)
            else:  # Redis answered (WRONGTYPE, OOM...): this key or command failed, no more
                self._logger.debug("Redis at %s refused a command: %s", self.where, exc)
            return FAILED  # type: ignore[no-any-return]
        except (TimeoutError, RedisTimeout) as exc:
            if self._last_ok < started:  # nobody got an answer meanwhile: Redis is stuck
                self._fail(exc)
            return FAILED  # type: ignore[no-any-return]
        except Exception as exc:  # connection refused or reset, protocol garbage...
            self._fail(exc)
            return FAILED  # type: ignore[no-any-return]
        self._up()
        return result

    async def close(self) -> None:
        self._closed = True
        if self._reconnect is not None:
            self._reconnect.cancel()
            await asyncio.gather(self._reconnect, return_exceptions=True)
            self._reconnect = None
        await self.client.aclose()

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
            async with asyncio.timeout(self.deadline):
                await self.client.ping()
        except Exception:  # still down; logged when the outage began (a cancel passes through)
            self._retry_at = time.monotonic() + self._retry_after
            return
        self._up()

    def _fail(self, exc: Exception) -> None:
        self._retry_at = time.monotonic() + self._retry_after
        if not self.down:
            self.down = True
            reason = str(exc) or type(exc).__name__
            self._logger.warning(
                "%s: Redis at %s is unreachable (%s); %s until it is back",
                self._label, self.where, reason, self._meanwhile,
            )

    def _up(self) -> None:
        self._last_ok = time.monotonic()
        if self.down:
            self.down = False
            self._logger.info("%s: Redis at %s is reachable again", self._label, self.where)
