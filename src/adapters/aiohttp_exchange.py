"""``AiohttpExchange``: the network under the engine clients, an ``Exchange`` over aiohttp's
client.

Why aiohttp and not httpx's own transport: httpcore 1.0's connection pool walks every pooled
connection twice per request (with a ``poll()`` and a ``getpeername()`` on each idle socket)
and wakes queued requests that then lose the race, so with 32 requests in flight one
exchange cost about 2 ms of CPU, against 0.1 ms through aiohttp's pool and C HTTP parser
(bench/RESULTS.md, "Performance"). aiohttp's failures are raised in searchport's exchange
vocabulary (``FAILURES``; ``exchange.py``), which ``ResilientExchange`` retries by.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Mapping

import aiohttp
import yarl

from searchport.adapters.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
)

# first match wins: the timeouts are also connection errors, the connector errors OS errors
FAILURES: tuple[tuple[type[BaseException], type[ExchangeError]], ...] = (
    (TimeoutError, TimedOut),  # connecting or a socket read (ConnectionTimeoutError too)
    (aiohttp.ClientConnectorError, Refused),  # refused, unreachable, TLS
    (aiohttp.ServerDisconnectedError, Dropped),  # closed before the head
    (aiohttp.ClientPayloadError, Dropped),  # body cut short
    (aiohttp.ClientResponseError, Dropped),  # not HTTP
    (aiohttp.ClientConnectionError, Dropped),  # reset, other socket errors
)


def _failure(exc: BaseException) -> ExchangeError:
    kind = next((mine for theirs, mine in FAILURES if isinstance(exc, theirs)), ExchangeError)
    return kind(f"{type(exc).__name__}: {exc}")


# parsed once: engines are asked the same few URLs and timeouts over and over
_yarl = functools.lru_cache(maxsize=256)(yarl.URL)


@functools.lru_cache(maxsize=64)
def _timeout(seconds: float) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(total=None, sock_connect=seconds, sock_read=seconds)


class AiohttpExchange:
    """One aiohttp session (and connection pool) per event loop, opened on first use."""

    def __init__(self, *, tls: ssl.SSLContext | bool, max_connections: int,
                 keepalive_seconds: float) -> None:
        self._tls = tls
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_here(self) -> aiohttp.ClientSession:
        session, loop = self._session, asyncio.get_running_loop()
        if session is None or session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ssl=self._tls,
                                             keepalive_timeout=self._keepalive)
            # no cookies, no proxies or .netrc from the environment
            session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                            cookie_jar=aiohttp.DummyCookieJar())
            self._session, self._loop = session, loop
        return session

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """The whole answer, read and decompressed; a failure after its head is a
        ``BadAnswer``."""
        try:
            response = await self._session_here().request(
                method, _yarl(url), headers=headers, data=body, allow_redirects=False,
                timeout=_timeout(timeout),
            )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _failure(exc) from exc
        try:
            content = await response.read()
        except TimeoutError as exc:
            raise TimedOut(f"{type(exc).__name__}: {exc}") from exc
        except aiohttp.ClientError as exc:
            raise BadAnswer(f"{type(exc).__name__}: {exc}") from exc
        finally:
            response.release()
        return Answer(response.status, response.headers, content)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
