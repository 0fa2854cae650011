"""HTTP caching, every rule in one place: the ``ETag`` of a cacheable GET response, ``304`` on a
matching ``If-None-Match``, ``Cache-Control`` (``private`` whenever a key is configured), the
weak form of an ETag once its body is compressed, and which responses Litestar's response cache
keeps in this process (``ResponseStore``, ``response_cache_config``).

The use case's answer is encoded once, here; its ETag is the checksum of those bytes: their
length and CRC-32, a fraction of a cryptographic digest's cost, enough to tell two bodies
apart.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec
from litestar import Request
from litestar.config.response_cache import ResponseCacheConfig
from litestar.params import HeaderParameter
from litestar.types import HTTPScope, Message, Receive, Scope, Send

PUBLIC = "public, max-age=10, stale-while-revalidate=50"
PRIVATE = "private, max-age=10"
STORE = "searchport_responses"  # the name of Litestar's response-cache store
NOT_KEPT = "searchport.not_kept"  # set in a request's scope state: its response is not kept
# the header saying what a degraded answer lacks (its ``degraded``: ``WordsOnlyResponse``)
DEGRADED_HEADERS = {"semantic": b"x-searchport-semantic"}
_encoder = msgspec.json.Encoder()

IF_NONE_MATCH = HeaderParameter(
    name="If-None-Match",
    required=False,
    description="ETags of answers the client holds; a match is a 304 with no body.",
)

def matching_etag(etag: str, if_none_match: str) -> str | None:
    """The form of ``etag`` the client named (weak comparison, RFC 9110 13.1.2), if any."""
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*":
            return etag
        if tag.removeprefix("W/") == etag:
            return tag
    return None


def cache_control(private: bool) -> str:
    """``Cache-Control`` of the cacheable responses (private whenever a key is configured)."""
    return PRIVATE if private else PUBLIC


class Prepared:
    """A whole response as its two ASGI messages, built once from bytes that are ready: what a
    handler returns when it has its body's bytes and every header. It is an ASGI application,
    which Litestar sends as it is when a handler returns one (its documented "Returning ASGI
    Applications": no ``Response`` object, header container or second encoding), and its
    response cache keeps the two messages like any other."""

    __slots__ = ("_body", "_start")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]],
                 body: bytes = b"") -> None:
        self._start: Message = {"type": "http.response.start", "status": status,
                                "headers": headers}
        self._body: Message = {"type": "http.response.body", "body": body,
                               "more_body": False}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(self._start)
        await send(self._body)


JSON = b"application/json"


def json_body(body: bytes, degraded: tuple[str, ...] = ()) -> Prepared:
    """A 200 with JSON bytes that are ready and no caching headers; ``degraded``: what the
    answer lacks that was asked for (``WordsOnlyResponse``), each said in its header, and
    the answer kept by nobody."""
    said = [(DEGRADED_HEADERS[part], b"degraded") for part in degraded]
    if said:
        said.insert(0, (b"cache-control", b"no-store"))
    return Prepared(200, [*said, (b"content-type", JSON),
                          (b"content-length", b"%d" % len(body))], body)


def degraded_of(answers: list[Any]) -> tuple[str, ...]:
    """What any of ``answers`` lacks (each answer's ``degraded``), once each."""
    return tuple(dict.fromkeys(part for a in answers for part in getattr(a, "degraded", ())))


def json_response(
    request: Request[Any, Any, Any], answer: Any, if_none_match: str | None,
    cache_control: str, scope: str = "",
) -> Prepared:
    """A 200 with the answer as JSON, its ETag and ``cache_control``, or a bodiless 304 when
    the client has it. ``scope``: the fingerprint of the key's restrictions; when set, its
    CRC-32 leads the ETag, so an answer under one key's restrictions is never confirmed
    (304) to a client asking under another's."""
    body = _encoder.encode(answer)
    etag = f'"{checksum(body)}"'
    if scope:
        etag = f'"{zlib.crc32(scope.encode()):08x}{checksum(body)}"'
    control = cache_control.encode("latin-1")
    degraded: tuple[str, ...] = getattr(answer, "degraded", ())
    if degraded:  # a stand-in for what was asked: kept by nobody, said so
        request.scope.setdefault("state", {})[NOT_KEPT] = True
        control = b"no-store"
        headers = [(DEGRADED_HEADERS[part], b"degraded") for part in degraded]
        return Prepared(200, [(b"etag", etag.encode("latin-1")), (b"cache-control", control),
                              *headers, (b"content-type", JSON),
                              (b"content-length", b"%d" % len(body))], body)
    if if_none_match:
        named = matching_etag(etag, if_none_match)
        if named is not None:
            return Prepared(304, [(b"etag", named.encode("latin-1")),
                                  (b"cache-control", control)])
    return Prepared(200, [(b"etag", etag.encode("latin-1")), (b"cache-control", control),
                          (b"content-type", JSON), (b"content-length", b"%d" % len(body))],
                    body)


def checksum(body: bytes) -> str:
    """The length and CRC-32 of ``body``, in hex (``5000-1a2b3c4d``)."""
    return f"{len(body):x}-{zlib.crc32(body):08x}"


def weakened(etag: bytes) -> bytes:
    """The ETag of a compressed body: not the bytes a strong ETag was computed over, so weak
    (``W/``, as nginx does); it still matches in ``If-None-Match``."""
    return b"W/" + etag if etag.startswith(b'"') else etag


# ----------------------------------------------- whole responses kept by Litestar's cache


# Accept-Encoding too: Litestar keeps a response as compressed for the request that made it
KEYED_HEADERS = (b"if-none-match", b"authorization", b"x-algolia-api-key", b"accept-encoding")


def response_key(kind: str) -> Any:
    """Litestar's cache key of a request to a route answering ``kind``: the route, its handle,
    the path and query string as sent, ``If-None-Match`` (a 304 is kept like a 200), the
    credential (a response kept for one key is never sent for another) and
    ``Accept-Encoding`` (a body kept compressed goes only to clients that asked for that)."""

    def key(request: Request[Any, Any, Any]) -> str:
        scope = request.scope
        handle = scope["path_params"].get("handle", "")
        parts = [kind, handle, scope["path"], scope["query_string"].decode("latin-1")]
        for name, value in scope["headers"]:
            if name in KEYED_HEADERS:
                parts.append(name.decode("latin-1") + ":" + value.decode("latin-1"))
        return "\x00".join(parts)

    return key


def _kept(scope: HTTPScope, status: int) -> bool:
    return status in (200, 304) and not scope.get("state", {}).get(NOT_KEPT)


def response_cache_config() -> ResponseCacheConfig:
    return ResponseCacheConfig(store=STORE, cache_response_filter=_kept)
