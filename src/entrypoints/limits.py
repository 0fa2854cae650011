"""Request-size guards that hold before any parameter is parsed: a query string longer than
``limits.maxQueryBytes`` is a 414 (bodies are bounded by Litestar: 413)."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from searchport.entrypoints.error_bodies import error_body


def query_length_guard(max_bytes: int):  # type: ignore[no-untyped-def]
    """A Litestar middleware factory."""
    sentence = (f"The query string is longer than {max_bytes} bytes; send fewer or shorter "
                "parameters")

    def middleware(app: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP or len(scope.get("query_string", b"")) <= max_bytes:
                await app(scope, receive, send)
                return
            await send({"type": "http.response.start", "status": 414, "headers": [
                (b"content-type", b"application/json"), (b"cache-control", b"no-store")]})
            body = error_body(414, sentence, scope["path"])
            await send({"type": "http.response.body", "body": body, "more_body": False})

        return guarded

    return middleware
