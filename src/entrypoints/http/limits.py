"""Request-size guards that hold before any parameter is parsed: a query string longer than
``limits.maxQueryBytes`` is a 414 (bodies are bounded by Litestar: 413)."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from searchport.entrypoints.http.error_bodies import error_body, send_whole


def query_length_guard(max_bytes: int):  # type: ignore[no-untyped-def]
    """A Litestar middleware factory."""
    sentence = (f"The query string is longer than {max_bytes} bytes; send fewer or shorter "
                "parameters")

    def middleware(app: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or len(scope.get("query_string", b"")) <= max_bytes:
                await app(scope, receive, send)
                return
            await send_whole(send, 414, [(b"content-type", b"application/json"),
                                         (b"cache-control", b"no-store")],
                             error_body(414, sentence, scope["path"]))

        return guarded

    return middleware
