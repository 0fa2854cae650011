"""Bearer-token authentication, checked before any parameter is parsed."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_to_bytes

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from searchport.domain.access import FULL_ACCESS, Access
from searchport.domain.analytics.records import Visitor
from searchport.entrypoints.http.error_bodies import error_body, is_algolia_path, send_whole
from searchport.entrypoints.http.timing import stats_of
from searchport.entrypoints.keys.keyring import Keyring, Principal

UNAUTHORIZED = "Unauthorized"
PRINCIPAL = "searchport.principal"  # the ASGI scope's key for the resolved token
ACCESS = "searchport.access"  # ... and for its ``Access``, once let through
OPEN_PATHS = ("/health", "/openapi")


ALGOLIA_KEY = b"x-algolia-api-key"


def bearer_token(scope: Scope) -> bytes:
    """The token of the request (empty when there is none): ``Authorization: Bearer``, else
    the ``x-algolia-api-key`` header the algoliasearch client sends, else, on the Algolia
    routes only, that key in the query string (the browser client's default, which avoids a
    CORS preflight). ``x-algolia-application-id`` may be anything."""
    algolia = b""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            return token.strip() if scheme.lower() == b"bearer" else b""
        if name == ALGOLIA_KEY:
            algolia = value.strip()
    if algolia or not is_algolia_path(scope.get("path", "")):
        return algolia
    return _query_key(scope.get("query_string", b""))


def _query_key(query: bytes) -> bytes:
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if unquote_to_bytes(name).lower() == ALGOLIA_KEY:
            return unquote_to_bytes(value.replace(b"+", b" ")).strip()
    return b""


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


USER_TOKEN = b"x-algolia-usertoken"


def visitor_of(scope: Scope, trust_forwarded_for: bool) -> Visitor:
    """Who made the request, for the analytics: its ``X-Algolia-UserToken`` header, its
    client's address and when it arrived."""
    token = None
    for name, value in scope.get("headers", ()):
        if name == USER_TOKEN:
            token = value[:256].decode("latin-1").strip() or None
            break
    stats = stats_of(scope)
    return Visitor(user_token=token, client=client_address(scope, trust_forwarded_for),
                   started=stats.started if stats is not None else None)


def principal_of(scope: Scope, keyring: Keyring, trust_forwarded_for: bool) -> Principal | None:
    """Who the request's token speaks for (``None``: no valid token), resolved once per
    request: the rate limit asks first, the key check next."""
    state: Any = scope
    if PRINCIPAL not in state:
        token = bearer_token(scope)
        state[PRINCIPAL] = (keyring.resolve(token, client_address(scope, trust_forwarded_for))
                            if token else None)
    found: Principal | None = state[PRINCIPAL]
    return found


def access_of(scope: Scope) -> Access:
    """The request's ``Access``, once the key check let it through (no key configured: full)."""
    state: Any = scope
    found: Access = state.get(ACCESS, FULL_ACCESS)
    return found


def is_open_path(path: str, open_paths: tuple[str, ...] = OPEN_PATHS) -> bool:
    return any(path == p or path.startswith(p + "/") for p in open_paths)


def bearer_auth(keyring: Keyring, also_open: tuple[str, ...] = (),  # type: ignore[no-untyped-def]
                trust_forwarded_for: bool = False):
    """A Litestar middleware factory; a no-op when no key is configured. ``also_open``:
    more paths that need no token (``/metrics`` when configured public). A valid token's
    ``Access`` is put in the ASGI scope for the use cases (``access_of``)."""
    open_paths = OPEN_PATHS + also_open

    def middleware(app: ASGIApp) -> ASGIApp:
        if not keyring.enabled:
            return app

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if (
                scope["type"] != ScopeType.HTTP
                or scope.get("method") == "OPTIONS"
                or is_open_path(scope["path"], open_paths)
            ):
                await app(scope, receive, send)
                return
            principal = principal_of(scope, keyring, trust_forwarded_for)
            if principal is not None:
                state: Any = scope
                state[ACCESS] = principal.access
                await app(scope, receive, send)
                return
            await send_whole(send, 401, [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="searchport"'),
                (b"cache-control", b"no-store"),
            ], error_body(401, UNAUTHORIZED, scope["path"]))

        return guarded

    return middleware
