"""Rate limiting per client address and per token: 429 with ``Retry-After``, before auth.

Checked before the token is (a client guessing keys is limited too), after routing (an
unknown route is a cheap 404 anyway). ``/health``, ``/metrics`` and the API docs are never
limited: a flood must not blind the monitoring.
Tokens are counted by a hash: the store never sees one.
"""

from __future__ import annotations

import hashlib
import math

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from searchport.domain.config import RateLimitConfig
from searchport.entrypoints.auth import bearer_token
from searchport.entrypoints.error_bodies import error_body, send_whole
from searchport.ports.rate_limit import RateLimitStore

EXEMPT_PATHS = ("/health", "/openapi", "/metrics")  # probes, docs and scrapers


def client_address(scope: Scope, trust_forwarded_for: bool) -> str:
    """The peer's address, or the last ``X-Forwarded-For`` entry (the one your proxy added)
    when the config says a proxy sets it."""
    if trust_forwarded_for:
        for name, value in scope.get("headers", ()):
            if name == b"x-forwarded-for":
                last = value.rsplit(b",", 1)[-1].strip()
                if last:
                    return last[:64].decode("latin-1")
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _exempt(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in EXEMPT_PATHS)


def _refusal(seconds: float, path: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    wait = max(1, math.ceil(seconds))
    sentence = f"Too many requests: try again in {wait} second{'s' if wait > 1 else ''}"
    body = error_body(429, sentence, path)
    headers = [
        (b"content-type", b"application/json"),
        (b"retry-after", str(wait).encode("ascii")),
        (b"cache-control", b"no-store"),
    ]
    return headers, body


def rate_limit(settings: RateLimitConfig, store: RateLimitStore):  # type: ignore[no-untyped-def]
    """A Litestar middleware factory; a no-op when no rule is configured."""
    per_ip, per_token = settings.per_ip, settings.per_token

    def middleware(app: ASGIApp) -> ASGIApp:
        if not settings.enabled:
            return app

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            if (
                scope["type"] != ScopeType.HTTP
                or scope.get("method") == "OPTIONS"
                or _exempt(scope["path"])
            ):
                await app(scope, receive, send)
                return
            wait = 0.0
            if per_ip is not None:
                address = client_address(scope, settings.trust_forwarded_for)
                wait = await store.hit(f"ip:{address}", per_ip.limit, per_ip.window)
            if wait <= 0 and per_token is not None:
                token = bearer_token(scope)
                if token:
                    digest = hashlib.sha256(token).hexdigest()[:32]
                    wait = await store.hit(f"token:{digest}", per_token.limit, per_token.window)
            if wait <= 0:
                await app(scope, receive, send)
                return
            await send_whole(send, 429, *_refusal(wait, scope["path"]))

        return limited

    return middleware
