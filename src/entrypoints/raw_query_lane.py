"""``POST /{handle}/query`` served straight from the ASGI scope, beside Litestar.

The raw query is a pass-through: the body goes to the engine and its answer comes back as
is. Profiled under load (bench/RESULTS.md), Litestar's request object, routing, dependency
resolution and response building cost about a third of such a request, more than
searchport's own work on it. This lane answers it with the same guards (the very middleware
functions Litestar runs: rate limit, key, query-string length), the same body limit, the
same use case and the same answers and error bodies, byte for byte
(tests/unit/test_raw_query_lane.py compares the two).

Litestar still owns the route: it documents it (OpenAPI) and answers every request the lane
leaves alone: other methods, other paths, a handle that is not configured, and any request
carrying ``Origin`` (Litestar's CORS handling applies to those).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from msgspec import UNSET

from searchport.domain.errors import SearchportError
from searchport.domain.usecases.raw_query import RawQuery, RawQueryRequest
from searchport.entrypoints.error_bodies import error_body
from searchport.entrypoints.http_errors import (
    HTTP_MESSAGES,
    INTERNAL_ERROR,
    log_internal,
    status_of,
)
from searchport.entrypoints.request_context import REQUEST_ID_KEY

ROUTE = "/{handle}/query"  # the template Litestar gives this route (the metrics' label)
Middleware = Callable[[ASGIApp], ASGIApp]

_JSON = (b"content-type", b"application/json")
_NO_STORE = (b"cache-control", b"no-store")


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


class RawQueryLane:
    """ASGI: takes ``POST /<configured handle>/query`` without ``Origin``; passes the rest to
    ``app`` (Litestar)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        raw_query: Callable[[], RawQuery],
        handles: Sequence[str],
        max_body_bytes: int,
        guards: Sequence[Middleware] = (),
    ) -> None:
        self.app = app
        self._raw_query = raw_query  # asked per request, so a container override holds
        self._paths = {f"/{handle}/query": handle for handle in handles}
        self._max_body_bytes = max_body_bytes
        served: ASGIApp = self._serve
        for guard in reversed(guards):  # the first guard is the outermost, as in Litestar
            served = guard(served)
        self._served = served

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == ScopeType.HTTP
            and scope["method"] == "POST"
            and scope["path"] in self._paths
            and not any(name == b"origin" for name, _ in scope["headers"])
        ):
            handle = self._paths[scope["path"]]
            scope["path_params"] = {"handle": handle}
            scope["path_template"] = ROUTE
            await self._served(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        try:
            body = await self._body(scope, receive)
            answer = await self._raw_query()(
                RawQueryRequest(handle=scope["path_params"]["handle"], body=body)
            )
        except _Disconnected:
            return  # nobody is left to answer
        except _TooLarge:
            await _send(send, 413, [_JSON, _NO_STORE],
                        error_body(413, HTTP_MESSAGES[413], path))
            return
        except SearchportError as exc:
            status = status_of(exc)
            await _send(send, status, [_JSON, _NO_STORE],
                        error_body(status, exc.message, path, details=exc.details or UNSET))
            return
        except Exception as exc:
            request_id = str(scope.get(REQUEST_ID_KEY, ""))
            log_internal(exc, "POST", path, request_id)
            await _send(send, 500, [_JSON, _NO_STORE],
                        error_body(500, INTERNAL_ERROR, path, request_id=request_id or UNSET))
            return
        await _send(send, 200, [_JSON], answer)

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        """The whole body, refused past the limit (the announced length is checked first)."""
        limit = self._max_body_bytes
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                raise _TooLarge
        chunks: list[bytes] = []
        size = 0
        while True:
            message: Any = await receive()  # an HTTP receive message
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers.append((b"content-length", str(len(body)).encode("ascii")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})

