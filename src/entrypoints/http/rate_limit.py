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
from searchport.entrypoints.http.auth import bearer_token, client_address, principal_of
from searchport.entrypoints.http.error_bodies import error_body, send_whole
from searchport.entrypoints.keys.keyring import Keyring
from searchport.ports.rate_limit import RateLimitStore

__all__ = ["client_address", "rate_limit"]

EXEMPT_PATHS = ("/health", "/openapi", "/metrics")  # probes, docs and scrapers


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


def rate_limit(settings: RateLimitConfig, store: RateLimitStore,  # type: ignore[no-untyped-def]
               keyring: Keyring | None = None):
    """A Litestar middleware factory; a no-op when no rule is configured. A token is
    counted under its key's identity (a secured key's ``userToken``, a named key's name)
    and, when its key has a rule of its own, by that rule too."""
    per_ip, per_token = settings.per_ip, settings.per_token
    own_rules = keyring is not None and keyring.has_own_rules

    def middleware(app: ASGIApp) -> ASGIApp:
        if not settings.enabled and not own_rules:
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
            if wait <= 0 and (per_token is not None or own_rules):
                wait = await _token_wait(scope)
            if wait <= 0:
                await app(scope, receive, send)
                return
            await send_whole(send, 429, *_refusal(wait, scope["path"]))

        async def _token_wait(scope: Scope) -> float:
            token = bearer_token(scope)
            if not token:
                return 0.0
            principal = (principal_of(scope, keyring, settings.trust_forwarded_for)
                         if keyring is not None else None)
            identity = (principal.identity if principal is not None
                        else f"token:{hashlib.sha256(token).hexdigest()[:32]}")
            wait = 0.0
            if per_token is not None:
                wait = await store.hit(identity, per_token.limit, per_token.window)
            if wait <= 0 and principal is not None and principal.rule is not None:
                rule = principal.rule
                wait = await store.hit(f"own:{identity}", rule.limit, rule.window)
            return wait

        return limited

    return middleware
