"""``HEAD`` on every ``GET`` route: the answer the ``GET`` would get, its headers and status
unchanged, without its body (RFC 9110, 9.3.2). Load balancers and uptime checkers ask
``HEAD /health``.

Litestar routes ``HEAD`` only to handlers declared for it, which may not return a body; one
such twin per ``GET`` handler would double the routes, so this layer, outside Litestar and
its compression, asks for the ``GET`` and drops the body on its way out."""

from __future__ import annotations

from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """Answers ``HEAD`` as ``GET`` without the body; any other request passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # expose the wrapped Litestar app's attributes
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.start":
                await send(message)
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        # the same scope, so the layers outside (the access log) see the route it matched;
        # its method is HEAD again for them once the answer is sent
        scope["method"] = "GET"
        try:
            await self.app(scope, receive, headers_only)
        finally:
            scope["method"] = "HEAD"
