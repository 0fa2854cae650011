"""``EngineClient``: the ``Exchange`` that speaks HTTP, aiohttp's client for one engine
origin (one TLS setting, one proxy or none).

One ``aiohttp.ClientSession`` per event loop, opened on first use: a bounded keep-alive
pool (``max_connections``, idle connections closed after ``keepalive_seconds``), no
cookies, no redirects, answers decompressed by aiohttp (gzip, deflate, and brotli since
it is installed). The proxy is chosen once, when the client is made (``pools.py``), so no
exchange reads the environment.

``timeout`` is the deadline of the whole exchange (aiohttp's ``total``): waiting for a
connection, connecting, sending and reading the whole body. aiohttp's failures are raised
in searchport's vocabulary (``exchange.py``); a message never carries an address.
"""

from __future__ import annotations

import asyncio
import errno
import ssl
from collections.abc import Mapping

import aiohttp
import aiohttp.abc

from searchport import __version__
from searchport.adapters.network.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
)
from searchport.domain.running_loop import running_loop

# sent unless the caller gives its own; aiohttp adds Accept-Encoding with every coding it
# decodes, as remote engines (Elasticsearch's http.compression) save bandwidth that way
DEFAULT_HEADERS = {"User-Agent": f"searchport/{__version__}"}
# aiohttp writes "Content-Type: application/octet-stream" for a body without one: the
# adapters name the type of every body they send
SKIPPED_HEADERS = ("Content-Type",)
KEPT_TIMEOUTS = 64

# first match wins: a connector error is also an OS error, a timeout also a connection error
FAILURES: tuple[tuple[type[BaseException], type[ExchangeError]], ...] = (
    (TimeoutError, TimedOut),  # the deadline passed: waiting, connecting or reading
    (aiohttp.ClientConnectorError, Refused),  # refused, unreachable, unknown name, TLS, proxy
    (aiohttp.ClientHttpProxyError, Refused),  # the proxy refused to connect (CONNECT)
    (aiohttp.ClientConnectionError, Dropped),  # closed or reset before the head, not HTTP
    (aiohttp.ClientResponseError, Dropped),  # a head aiohttp cannot read
)


def exchange_error(exc: BaseException) -> ExchangeError:
    """The vocabulary's error for an exchange that failed before its answer's head; its
    message names the failure only (aiohttp's own names the host)."""
    kind = next((mine for theirs, mine in FAILURES if isinstance(exc, theirs)), Dropped)
    return kind(_described(exc))


def _described(exc: BaseException) -> str:
    """The failure's kind and, for a system error, its errno name (``ECONNREFUSED``):
    aiohttp's and the system's messages name the host and port."""
    number = getattr(exc, "errno", None)
    if number is None and isinstance(getattr(exc, "os_error", None), OSError):
        number = exc.os_error.errno  # type: ignore[attr-defined]
    name = errno.errorcode.get(number) if isinstance(number, int) else None
    return f"{type(exc).__name__}: {name}" if name else type(exc).__name__


class EngineClient:
    """Exchanges with one origin (``http://host:port``), through ``proxy`` when given."""

    keeps_deadline = True  # ``timeout`` bounds the whole exchange (see ResilientExchange)

    def __init__(self, origin: str, *, tls: ssl.SSLContext | bool, max_connections: int,
                 keepalive_seconds: float, proxy: str | None = None,
                 resolver: aiohttp.abc.AbstractResolver | None = None) -> None:
        """``tls``: the context for https (``True``: the default one, verifying;
        ``False``: no verification); ``proxy``: an http:// proxy URL, its credentials
        (``http://user:pass@host:port``) sent as ``Proxy-Authorization``; ``resolver``:
        how host names become addresses (default: aiohttp's, the system's)."""
        self.origin = origin.rstrip("/")
        self._tls = tls
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._proxy = proxy
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    def _session_here(self) -> aiohttp.ClientSession:
        session, loop = self._session, running_loop()
        if session is None or session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ssl=self._tls,
                                             keepalive_timeout=self._keepalive,
                                             resolver=self._resolver)
            # no cookies; proxies and credentials from the environment were read when the
            # client was made (pools.py), never per request
            session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                headers=DEFAULT_HEADERS, skip_auto_headers=SKIPPED_HEADERS)
            self._session, self._loop = session, loop
        return session

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        # a handle asks with the same timeout call after call; a retry with what is left
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = aiohttp.ClientTimeout(total=seconds)
            if len(self._timeouts) >= KEPT_TIMEOUTS:
                self._timeouts.clear()
            self._timeouts[seconds] = timeout
        return timeout

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """The whole answer, decompressed. ``ValueError`` (nothing sent) for a URL on
        another origin or a line break in a header value."""
        if not url.startswith(self.origin) or url[len(self.origin):][:1] not in ("", "/", "?"):
            raise ValueError("the URL is not on this client's origin")
        try:
            response = await self._session_here().request(
                method, url, headers=headers, data=body, allow_redirects=False,
                timeout=self._timeout(timeout), proxy=self._proxy)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise exchange_error(exc) from None
        try:
            content = await response.read()
        except TimeoutError:
            response.close()
            raise TimedOut("no complete answer in time") from None
        except aiohttp.ClientError as exc:
            response.close()
            raise BadAnswer(_described(exc)) from None
        except BaseException:  # cancelled: the connection is not handed to the next caller
            response.close()
            raise
        response.release()
        return Answer(response.status, response.headers, content)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
