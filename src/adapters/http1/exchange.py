"""``Http1Exchange``: the ``Exchange`` under the server engines, searchport's own HTTP/1.1
client for one engine origin.

It does what an engine exchange needs and nothing else: keep-alive connections in a
bounded pool (``pool.py``), a request written at once (``request.py``), the answer read
whole from the protocol's callbacks (``connection.py``, ``response.py``) and decompressed.
No redirects, proxies, cookies or settings from the environment. A general client library
cost several times the CPU per exchange (bench/RESULTS.md, "The engine client").

``timeout`` is the deadline of the whole exchange: waiting for a connection, connecting,
and reading the whole answer. Past it the exchange raises ``TimedOut`` and closes that
connection. A caller cancelled while it waits has its connection closed too: a connection
goes back to the pool only with its answer read whole.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from urllib.parse import urlsplit

from searchport.adapters.exchange import Answer, BadAnswer
from searchport.adapters.http1.connection import Reply
from searchport.adapters.http1.pool import Pool
from searchport.adapters.http1.request import RequestWriter
from searchport.adapters.http1.response import BodyError, decoded
from searchport.domain.running_loop import running_loop


class Http1Exchange:
    """Requests to one origin (``http://host:port``), over one pool per event loop."""

    keeps_deadline = True  # ``timeout`` bounds the whole exchange (see ResilientExchange)

    def __init__(self, origin: str, *, tls: ssl.SSLContext | bool, max_connections: int,
                 keepalive_seconds: float) -> None:
        """``tls``: the context for https (``True``: the default one, verifying;
        ``False``: no verification)."""
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the origin is not an http:// or https:// URL")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._tls_setting = tls
        self._tls: ssl.SSLContext | None = None
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._writer = RequestWriter(origin.rstrip("/"), parts.netloc.rpartition("@")[2])
        self._pool: Pool | None = None

    def _pool_here(self) -> Pool:
        pool, loop = self._pool, running_loop()
        if pool is None or pool.loop is not loop or pool.closed:
            if self._https and self._tls is None:
                self._tls = _context(self._tls_setting)
            pool = Pool(loop, host=self._host, port=self._port, tls=self._tls,
                        max_connections=self._max_connections, keepalive=self._keepalive)
            self._pool = pool
        return pool

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """The whole answer, decompressed. ``ValueError`` (nothing sent) for a request
        that cannot be written: another origin, a line break in a header value."""
        request = self._writer.render(method, url, headers, body)
        pool = self._pool_here()
        loop = pool.loop
        deadline = loop.time() + timeout
        connection = await pool.checkout(deadline)
        answer: asyncio.Future[Reply] = loop.create_future()
        timer = loop.call_at(deadline, connection.time_out)
        try:
            connection.send(request, answer, head_only=method == "HEAD")
            status, answer_headers, content = await answer
        except BaseException:  # failed, timed out or cancelled: the answer is not read
            connection.abort()
            raise
        finally:
            timer.cancel()
            pool.checkin(connection)
        try:
            content = decoded(content, answer_headers.get("content-encoding"))
        except BodyError as exc:
            raise BadAnswer(str(exc)) from None
        return Answer(status, answer_headers, content)

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None and not pool.closed:
            pool.close()


def _context(tls: ssl.SSLContext | bool) -> ssl.SSLContext:
    if isinstance(tls, ssl.SSLContext):
        return tls
    context = ssl.create_default_context()
    if not tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context
