"""The outermost ASGI layer: a request id, ``Server-Timing`` and one ``Vary`` on every
response; each finished request counted in the metrics and, when the access log is on, one
``RequestRecord`` to its observers."""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from searchport.entrypoints.http.http_cache import weakened
from searchport.entrypoints.http.observability import UNMATCHED, Metrics, RequestRecord
from searchport.entrypoints.http.timing import STATS_KEY, RequestStats, current_stats

logger = logging.getLogger("searchport")
Observer = Callable[[RequestRecord], None]

REQUEST_ID_KEY = "searchport.request_id"
_VALID_ID = re.compile(rb"[A-Za-z0-9._-]{1,64}")


def _incoming_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id" and _VALID_ID.fullmatch(value):
            return value.decode("ascii")
    return None


def complete_headers(headers: list[tuple[bytes, bytes]], vary: tuple[bytes, ...]) -> None:
    """One ``Vary`` holding every token already set plus ``vary``, deduplicated (done here,
    outermost, because inner layers, CORS and compression, replace each other's ``Vary``);
    the ETag of a compressed body made weak (``http_cache.weakened``)."""
    names = {name.lower() for name, _ in headers}
    if b"content-encoding" in names and b"etag" in names:
        headers[:] = [(name, weakened(value) if name.lower() == b"etag" else value)
                      for name, value in headers]
    if b"vary" not in names:
        if vary:
            headers.append((b"vary", b", ".join(vary)))
        return
    tokens: dict[bytes, bytes] = {}
    kept = []
    for name, value in headers:
        if name.lower() == b"vary":
            for token in value.split(b","):
                if token.strip():
                    tokens.setdefault(token.strip().lower(), token.strip())
        else:
            kept.append((name, value))
    for token in vary:
        tokens.setdefault(token.lower(), token)
    headers[:] = kept
    if tokens:
        headers.append((b"vary", b", ".join(tokens.values())))


class RequestContext:
    """Wraps the app: tags each HTTP request with an id, times it, completes ``Vary``."""

    def __init__(
        self,
        app: ASGIApp,
        vary: tuple[bytes, ...] = (b"Accept-Encoding",),
        metrics: Metrics | None = None,
        observers: Sequence[Observer] = (),
    ) -> None:
        """``metrics`` count every request; ``observers`` (the access log) get its record,
        which is only built for them."""
        self.app = app
        self.vary = vary
        self.metrics = metrics
        self.observers = tuple(observers)

    def __getattr__(self, name: str) -> Any:  # expose the wrapped Litestar app's attributes
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        # not a secret, only unique: the Mersenne Twister (reseeded in each forked worker)
        # costs a fraction of os.urandom's system call
        request_id = _incoming_id(scope) or f"{random.getrandbits(64):016x}"
        scope[REQUEST_ID_KEY] = request_id  # type: ignore[literal-required]
        started = time.perf_counter()
        stats = RequestStats(started)
        scope[STATS_KEY] = stats  # type: ignore[literal-required]
        token = current_stats.set(stats)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                stats.status = message["status"]
                total = (time.perf_counter() - started) * 1000
                timing = f"engine;dur={stats.engine_seconds * 1000:.2f}, total;dur={total:.2f}"
                headers = list(message.get("headers", ()))
                complete_headers(headers, self.vary)
                headers.append((b"x-request-id", request_id.encode("ascii")))
                headers.append((b"server-timing", timing.encode("ascii")))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            current_stats.reset(token)
            if self.metrics is not None:
                self.metrics.answered(scope.get("path_template") or UNMATCHED,
                                      scope["method"], stats.status,
                                      time.perf_counter() - started)
            if self.observers:
                self._observe(scope, request_id, stats.status, started, stats)

    def _observe(
        self, scope: Scope, request_id: str, status: int, started: float, stats: RequestStats
    ) -> None:
        handle = scope.get("path_params", {}).get("handle")
        record = RequestRecord(
            ts=time.time(),
            request_id=request_id,
            method=str(scope.get("method", "")),
            route=str(scope.get("path_template") or UNMATCHED),
            handle=handle[:64] if isinstance(handle, str) else None,
            status=status,
            ms=round((time.perf_counter() - started) * 1000, 3),
            engine_ms=round(stats.engine_seconds * 1000, 3),
            # a whole response Litestar's response cache sent is a hit too (``ResponseStore``)
            cache=stats.cache,
        )
        for observe in self.observers:
            try:
                observe(record)
            except Exception:  # an observer's failure never fails the request
                logger.exception("request observer failed")
