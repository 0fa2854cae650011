"""Two hot requests served straight from the ASGI scope, beside Litestar.

Profiled under load (bench/RESULTS.md), Litestar's request object, routing, dependency
resolution and response building cost more than searchport's own work on the two requests
a gateway answers most cheaply:

- ``POST /{handle}/query``, the raw query: a pass-through, one engine exchange
  (``RawQueryLane``);
- a ``GET`` whose answer this process holds in its cache, the in-process tier of the
  response cache (``CachedAnswerLane``).

The lanes run the same guards as Litestar (the very middleware functions: rate limit, key,
query-string length; ``guarded_once`` keeps a request from meeting them twice), the same use
case or cache entry, and send the same answers and error bodies, byte for byte
(tests/unit/test_lanes.py sends every request both ways and compares). Litestar still owns
the routes: it documents them (OpenAPI) and answers every request the lanes leave alone
(CORS preflights among them). A request with ``Origin`` gets the headers Litestar's CORS
middleware would add, built from the same ``CORSConfig`` (``SimpleCors``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from litestar.config.cors import CORSConfig
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from msgspec import UNSET

from searchport.domain.errors import SearchportError
from searchport.domain.response_cache import Encoded
from searchport.domain.usecases.raw_query import RawQuery, RawQueryRequest
from searchport.entrypoints.auth import access_of
from searchport.entrypoints.error_bodies import error_body, send_whole
from searchport.entrypoints.http_cache import PRIVATE, PUBLIC, matching_etag
from searchport.entrypoints.http_errors import (
    HTTP_MESSAGES,
    INTERNAL_ERROR,
    log_internal,
    status_of,
)
from searchport.entrypoints.request_context import REQUEST_ID_KEY
from searchport.entrypoints.timing import ObservedCache, current_stats

ROUTE = "/{handle}/query"  # the template Litestar gives this route (the metrics' label)
# the routes whose 200 answer is exactly the one cache entry they looked up (``json_answer``)
CACHED_ROUTES = frozenset({
    "/{handle}/search", "/{handle}/autocomplete", "/{handle}/facets/{field}",
    "/{handle}/documents/{doc_id}", "/{handle}/mapping",
})
GUARDED = "searchport.guarded"
LEARNED = "searchport.learned"  # the cached lane's entry for the request, past the guards
ETAG_MEMO_BYTES = 8 * 1024 * 1024  # bodies whose ETag is remembered, at most
Middleware = Callable[[ASGIApp], ASGIApp]

_JSON = (b"content-type", b"application/json")
_NO_STORE = (b"cache-control", b"no-store")
_CLOSE = (b"connection", b"close")  # a body left unread: the connection cannot be reused


def guarded_once(guards: Sequence[Middleware]) -> Middleware:
    """The guards as one middleware (the first the outermost, as in Litestar's list) that a
    request meets at most once: a lane that ran them and then hands the request to Litestar
    does not have it counted twice by the rate limit."""

    def middleware(app: ASGIApp) -> ASGIApp:
        guarded = app
        for guard in reversed(guards):
            guarded = guard(guarded)

        async def once(scope: Scope, receive: Receive, send: Send) -> None:
            if scope.get(GUARDED):
                await app(scope, receive, send)
                return
            scope[GUARDED] = True  # type: ignore[literal-required]
            await guarded(scope, receive, send)

        return once

    return middleware


class SimpleCors:
    """The headers Litestar's CORS middleware adds to the answer to a request with ``Origin``
    (not a preflight: the lanes leave those to Litestar), from the same ``CORSConfig``: its
    simple headers, the allowed headers and methods, and the origin itself (with ``Vary:
    Origin``) when allowed."""

    MARK = b"access-control-allow-methods"  # Litestar's CORS always sets it

    def __init__(self, config: CORSConfig) -> None:
        self._config = config
        always = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                  for name, value in config.simple_headers.items()]
        always.append((b"access-control-allow-headers",
                       ", ".join(sorted(set(config.allow_headers))).encode("latin-1")))
        always.append((self.MARK, ", ".join(sorted(set(config.allow_methods))).encode("latin-1")))
        self._always = always

    def headers(self, origin: bytes, has_cookie: bool) -> list[tuple[bytes, bytes]]:
        config = self._config
        every = config.is_allow_all_origins
        if (every and has_cookie) or (not every and config.is_origin_allowed(
                origin.decode("latin-1"))):
            named = [(n, v) for n, v in self._always if n != b"access-control-allow-origin"]
            return [*named, (b"access-control-allow-origin", origin), (b"vary", b"Origin")]
        return self._always

    def wrap(self, send: Send, scope: Scope) -> Send:
        """``send`` adding those headers, if the request has ``Origin``; an answer Litestar
        gave (a request a lane handed on) already has them and is left alone."""
        origin = None
        has_cookie = False
        for name, value in scope["headers"]:
            if name == b"origin" and origin is None:
                origin = value
            elif name == b"cookie":
                has_cookie = True
        if origin is None:
            return send
        extra = self.headers(origin, has_cookie)

        async def cors_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name == self.MARK for name, _ in headers):
                    message = {**message, "headers": headers + extra}
            await send(message)

        return cors_send


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


class RawQueryLane:
    """ASGI: takes ``POST /<configured handle>/query``; passes the rest to ``app``
    (Litestar)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        raw_query: Callable[[], RawQuery],
        handles: Sequence[str],
        max_body_bytes: int,
        guard: Middleware | None = None,
        cors: CORSConfig | None = None,
    ) -> None:
        self.app = app
        self._cors = SimpleCors(cors) if cors else None
        self._raw_query = raw_query  # asked per request, so a container override holds
        self._paths = {f"/{handle}/query": handle for handle in handles}
        self._max_body_bytes = max_body_bytes
        self._served = guard(self._serve) if guard else self._serve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == ScopeType.HTTP
            and scope["method"] == "POST"
            and scope["path"] in self._paths
        ):
            handle = self._paths[scope["path"]]
            scope["path_params"] = {"handle": handle}
            scope["path_template"] = ROUTE
            if self._cors is not None:
                send = self._cors.wrap(send, scope)
            await self._served(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        try:
            body = await self._body(scope, receive)
            answer = await self._raw_query()(
                RawQueryRequest(handle=scope["path_params"]["handle"], body=body),
                access_of(scope),
            )
        except _Disconnected:
            return  # nobody is left to answer
        except _TooLarge:
            await _send(send, 413, [_JSON, _NO_STORE, _CLOSE],
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


class Learned(NamedTuple):
    key: str  # the response cache's key for this URL
    template: str  # Litestar's route template and path parameters, for the metrics
    params: dict[str, Any]


class LearnedUrls:
    """URL (path, query string) -> the cache key its answer is stored under, least recently
    used first out, bounded by entries and by bytes. The key is a pure function of the URL
    (the handle's config does not change while the process runs), so an entry never goes
    wrong; it only ever points at a cache entry that may have expired."""

    def __init__(self, max_entries: int = 10_000, max_bytes: int = 8 * 1024 * 1024) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[tuple[str, bytes], Learned] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, url: tuple[str, bytes]) -> Learned | None:
        learned = self._entries.get(url)
        if learned is not None:
            self._entries.move_to_end(url)
        return learned

    def put(self, url: tuple[str, bytes], learned: Learned) -> None:
        if url in self._entries:
            return
        self._entries[url] = learned
        self._bytes += _size(url, learned)
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            dropped_url, dropped = self._entries.popitem(last=False)
            self._bytes -= _size(dropped_url, dropped)


def _size(url: tuple[str, bytes], learned: Learned) -> int:
    return len(url[0]) + len(url[1]) + len(learned.key) + 200  # with the bookkeeping


class CachedAnswerLane:
    """ASGI: answers a ``GET`` from this process's cache tier when an
    earlier request for the same URL was answered from, or stored into, the cache: the same
    body, ``ETag``, ``Cache-Control`` and ``304`` as ``json_answer``. Anything else, and a
    URL whose entry is gone, goes to ``app`` (Litestar), which then teaches the lane the
    URL's cache key.

    No I/O happens here: with Redis alone (no in-process tier) the lane stays out of the way.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        cache: Callable[[], ObservedCache],
        private: bool,
        guard: Middleware | None = None,
        cors: CORSConfig | None = None,
        urls: LearnedUrls | None = None,
    ) -> None:
        self.app = app
        self._cors = SimpleCors(cors) if cors else None
        self._cache = cache  # asked per request, so a container override holds
        self._cache_control = (PRIVATE if private else PUBLIC).encode("ascii")
        self._urls = urls or LearnedUrls()
        self._served = guard(self._serve) if guard else self._serve
        self._etags: dict[str, tuple[bytes, bytes]] = {}  # key -> (body, its ETag), last seen
        self._etag_bytes = 0  # the bodies' sizes: they may outlive their cache entries

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != ScopeType.HTTP
            or scope["method"] != "GET"
            or not self._cache().in_process
        ):
            await self.app(scope, receive, send)
            return
        url = (scope["path"], scope["query_string"])
        learned = self._urls.get(url)
        if learned is None:
            await self.app(scope, receive, send)
            self._learn(scope, url)
            return
        scope["path_params"] = learned.params
        scope["path_template"] = learned.template
        scope[LEARNED] = learned  # type: ignore[literal-required]
        if self._cors is not None:
            send = self._cors.wrap(send, scope)
        await self._served(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """After the guards: the held entry, or Litestar (whose guards then stand aside)."""
        learned: Learned = scope[LEARNED]  # type: ignore[literal-required]
        # a key with a scope of its own never gets an answer learned under another
        body = None if access_of(scope).restricted else self._cache().held(learned.key)
        if body is None:
            await self.app(scope, receive, send)
            return
        etag = self._etag(learned.key, body)
        for name, value in scope["headers"]:
            if name == b"if-none-match":
                named = matching_etag(etag.decode("ascii"), value.decode("latin-1"))
                if named is not None:
                    await send_whole(send, 304, [(b"etag", named.encode("latin-1")),
                                                 (b"cache-control", self._cache_control)], b"")
                    return
                break
        await _send(send, 200, [_JSON, (b"etag", etag), (b"cache-control", self._cache_control)],
                    body)

    def _etag(self, key: str, body: bytes) -> bytes:
        """The digest ETag of ``body``, computed once while the entry stays the same bytes."""
        known = self._etags.get(key)
        if known is not None and known[0] is body:
            return known[1]
        etag = f'"{Encoded(body).digest}"'.encode("ascii")
        if self._etag_bytes + len(body) > ETAG_MEMO_BYTES:  # bodies kept alive past the cache
            self._etags.clear()
            self._etag_bytes = 0
        if key in self._etags:
            self._etag_bytes -= len(self._etags[key][0])
        self._etags[key] = (body, etag)
        self._etag_bytes += len(body)
        return etag

    def _learn(self, scope: Scope, url: tuple[str, bytes]) -> None:
        stats = current_stats.get()
        template = scope.get("path_template")
        if (
            stats is not None
            and not access_of(scope).restricted  # a scoped answer's key is not the URL's
            and stats.status == 200
            and stats.lookups == 1
            and stats.cache_key is not None
            and template in CACHED_ROUTES
        ):
            params = dict(scope.get("path_params") or {})
            self._urls.put(url, Learned(stats.cache_key, str(template), params))


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """With its ``Content-Length``, as Litestar sends it."""
    headers.append((b"content-length", str(len(body)).encode("ascii")))
    await send_whole(send, status, headers, body)

