"""``AiohttpTransport``: the network under the engine clients, httpx's transport interface
over aiohttp's client.

Why not httpx's own: httpcore 1.0's connection pool walks every pooled connection twice per
request (with a ``poll()`` and a ``getpeername()`` on each idle socket) and wakes queued
requests that then lose the race, so with 32 requests in flight one exchange cost about
2 ms of CPU, against 0.1 ms through aiohttp's pool and C HTTP parser (bench/RESULTS.md,
"Performance"). httpx stays the API above it: clients, ``MockTransport`` in tests and
``ResilientTransport``, which reads failures as httpx's exceptions, so aiohttp's are mapped
to the httpx exception httpcore raises for the same failure (``FAILURES``).
"""

from __future__ import annotations

import asyncio
import functools
import ssl

import aiohttp
import httpx
import yarl

from searchport.adapters.resilience import PartialAnswer

# first match wins: the timeouts are also connection errors, the connector errors OS errors
FAILURES: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (TimeoutError, httpx.ReadTimeout),  # aiohttp's socket read timeout
    (aiohttp.ClientConnectorError, httpx.ConnectError),  # refused, unreachable, TLS
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),  # closed before the head
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),  # body cut short
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),  # not HTTP
    (aiohttp.ClientConnectionError, httpx.ReadError),  # reset, other socket errors
)
# httpx computed these for its own wire format; aiohttp writes them itself
DROPPED_HEADERS = frozenset({"content-length", "transfer-encoding"})
# the answer's framing: aiohttp has undone it (the body is read whole and decompressed)
FRAMING_HEADERS = frozenset({b"content-length", b"transfer-encoding", b"content-encoding"})


def _as_httpx(exc: BaseException, request: httpx.Request) -> httpx.TransportError:
    mapped = next((m for failure, m in FAILURES if isinstance(exc, failure)),
                  httpx.TransportError)
    return mapped(f"{type(exc).__name__}: {exc}", request=request)


# parsed once: engines are asked the same few URLs and timeouts over and over
_yarl = functools.lru_cache(maxsize=256)(yarl.URL)


@functools.lru_cache(maxsize=64)
def _timeout(connect: float | None, read: float | None) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)


class AiohttpTransport(httpx.AsyncBaseTransport):
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

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The whole answer, read and decompressed in memory (an ``httpx.Response`` whose
        ``content`` is ready); a failure after its head is a ``PartialAnswer``."""
        timeout = request.extensions.get("timeout") or {}
        headers = [(k, v) for k, v in request.headers.multi_items()
                   if k.lower() not in DROPPED_HEADERS]
        try:
            response = await self._session_here().request(
                request.method, _yarl(str(request.url)), headers=headers,
                data=await request.aread() or None, allow_redirects=False,
                timeout=_timeout(timeout.get("connect"), timeout.get("read")),
            )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _as_httpx(exc, request) from exc
        try:
            body = await response.read()
        except TimeoutError as exc:
            raise _as_httpx(exc, request) from exc
        except aiohttp.ClientError as exc:
            raise PartialAnswer(f"{type(exc).__name__}: {exc}", request=request) from exc
        finally:
            response.release()
        kept = [(k, v) for k, v in response.raw_headers if k.lower() not in FRAMING_HEADERS]
        return httpx.Response(response.status, headers=kept, content=body, request=request,
                              extensions={"http_version": b"HTTP/1.1"})

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
