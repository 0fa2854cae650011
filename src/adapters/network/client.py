"""``EngineClient``: the ``Exchange`` that speaks HTTP, pyreqwest's client (Python bindings
of Rust's reqwest and hyper) for one engine origin (one TLS setting, one proxy or none).

One ``pyreqwest`` client per event loop, made on first use: a bounded number of requests in
flight (``max_connections``), idle keep-alive connections closed after
``keepalive_seconds``, no cookies, no redirects, no proxy but the one chosen when the client
is made (``pools.py``), answers decompressed (gzip, deflate, brotli, zstd). HTTP is read and
written by hyper in a Tokio runtime of pyreqwest's; this module only maps.

``timeout`` is the deadline of the whole exchange (reqwest's per-request ``timeout``: from
connecting until the body is read). Failures are raised in searchport's vocabulary
(``exchange.py``); a message never carries an address.
"""

from __future__ import annotations

import asyncio
import errno
import re
from collections.abc import Mapping
from datetime import timedelta

from pyreqwest.client import Client, ClientBuilder
from pyreqwest.exceptions import BuilderError, PyreqwestError, RequestTimeoutError
from pyreqwest.middleware.types import Middleware
from pyreqwest.proxy import ProxyBuilder

from searchport import __version__
from searchport.adapters.network.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
    Tls,
)
from searchport.domain.running_loop import running_loop

SYSTEM_TLS = Tls()  # verified against the system's roots
USER_AGENT = f"searchport/{__version__}"
KEPT_TIMEOUTS = 64
# methods whose requests carry no body unless given one (RFC 9110 defines none for them)
BODILESS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "CONNECT"})
# the causes pyreqwest gives (reqwest's and hyper's words) for a failure while connecting
# and for one after the answer's head, while its body was read or decompressed
CONNECTING = "client error (Connect)"
READING_BODY = frozenset({"request or response body error", "error decoding response body"})
OS_ERROR = re.compile(r"\(os error (\d+)\)")


def _described(exc: BaseException) -> str:
    """The failure's kind and, for a system error, its errno name (``ConnectError:
    ECONNREFUSED``): pyreqwest's message and causes name the URL."""
    details = getattr(exc, "details", None)
    causes = details.get("causes") if isinstance(details, dict) else None
    for cause in reversed(causes or []):
        found = OS_ERROR.search(str(cause.get("message", "")))
        if found is not None and int(found[1]) in errno.errorcode:
            return f"{type(exc).__name__}: {errno.errorcode[int(found[1])]}"
    return type(exc).__name__


def _failure(exc: PyreqwestError) -> ExchangeError:
    """The vocabulary's error for a failed exchange, from the stage pyreqwest's causes name
    (its classes do not tell a connection closed before the head from one never made)."""
    details = getattr(exc, "details", None)
    causes = {str(cause.get("message")) for cause in
              (details.get("causes") if isinstance(details, dict) else None) or []}
    if CONNECTING in causes:  # TCP, name, TLS or proxy
        return Refused(_described(exc))
    if causes & READING_BODY:  # the head was read: the engine may have done the work
        return BadAnswer(_described(exc))
    return Dropped(_described(exc))  # closed, reset or not HTTP before the head


class EngineClient:
    """Exchanges with one origin (``http://host:port``), through ``proxy`` when given."""

    def __init__(self, origin: str, *, max_connections: int, keepalive_seconds: float,
                 tls: Tls = SYSTEM_TLS, proxy: str | None = None,
                 middleware: Middleware | None = None) -> None:
        """``tls``: verification and a CA to trust besides the system's; ``proxy``: an
        http:// proxy URL, its credentials (``http://user:pass@host:port``) sent as
        ``Proxy-Authorization``; ``middleware``: pyreqwest middleware run on every request
        (the contract tests send every engine host to a loopback server with one)."""
        self.origin = origin.rstrip("/")
        self._tls = tls
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._proxy = proxy
        self._middleware = middleware
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeouts: dict[float, timedelta] = {}

    def _client_here(self) -> Client:
        client, loop = self._client, running_loop()
        if client is None or self._loop is not loop:
            builder = (ClientBuilder()
                       .max_connections(self._max_connections)
                       .pool_idle_timeout(timedelta(seconds=self._keepalive))
                       .follow_redirects(False)
                       .default_cookie_store(False)
                       .referer(False)
                       .user_agent(USER_AGENT)
                       .no_proxy())
            if self._proxy is not None:
                builder = builder.proxy(ProxyBuilder.all(self._proxy))
            if not self._tls.verify:
                builder = builder.danger_accept_invalid_certs(True)
            elif self._tls.ca_pem is not None:
                builder = builder.add_root_certificate_pem(self._tls.ca_pem)
            if self._middleware is not None:
                builder = builder.with_middleware(self._middleware)
            client = builder.build()
            self._client, self._loop = client, loop
        return client

    def _timeout(self, seconds: float) -> timedelta:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = timedelta(seconds=seconds)
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
            request = self._client_here().request(method, url).headers(headers)
        except BuilderError:
            raise ValueError("a header that cannot be sent") from None
        if body is not None:
            request = request.body_bytes(body)
        elif method not in BODILESS:  # servers may refuse such a request without a length
            request = request.header("Content-Length", "0")
        try:
            response = await request.timeout(self._timeout(timeout)).build().send()
        except RequestTimeoutError as exc:
            raise TimedOut(_described(exc)) from None
        except PyreqwestError as exc:
            raise _failure(exc) from None
        return Answer(response.status, response.headers, bytes(await response.bytes()))

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

