"""Response compression: brotli when the client accepts it, else gzip; each distinct body
compressed once.

Litestar's own middleware compresses every response anew. Searches are answered many times
over with the same bytes (identical requests in flight share one body, cache hits repeat
one), and compressing 20 KB costs more than the rest of serving it from the cache. A response
with a strong ``ETag`` (a checksum of its body, ``http_cache.py``) is compressed once per
encoding and kept in a small LRU keyed by that ``ETag`` (and checked to be the same bytes);
other responses (raw query, errors, documentation) are compressed each time, streamed ones chunk
by chunk. A compressed response's ETag is weakened (``http_cache.weakened``).
"""

from __future__ import annotations

import zlib
from typing import Any, Protocol

import brotli  # type: ignore[import-untyped]
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from searchport.adapters.lru import Lru
from searchport.entrypoints.http.http_cache import CHECKSUM_ETAG, weakened

MINIMUM_SIZE = 1024  # bytes: smaller bodies go as they are
GZIP_LEVEL = 5
BROTLI_QUALITY = 5
MEMO_ENTRIES = 512
MEMO_BYTES = 16 * 1024 * 1024  # bytes kept (plain and compressed), at most


class _Stream(Protocol):
    def compress(self, data: bytes) -> bytes: ...

    def finish(self) -> bytes: ...


class _Gzip:
    def __init__(self) -> None:
        self._z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)

    def compress(self, data: bytes) -> bytes:
        return self._z.compress(data)

    def finish(self) -> bytes:
        return self._z.flush()


class _Brotli:
    def __init__(self) -> None:
        self._c = brotli.Compressor(quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT)

    def compress(self, data: bytes) -> bytes:
        return bytes(self._c.process(data))

    def finish(self) -> bytes:
        return bytes(self._c.finish())


def _stream(encoding: str) -> _Stream:
    return _Brotli() if encoding == "br" else _Gzip()


def _whole(encoding: str, body: bytes) -> bytes:
    if encoding == "br":
        return bytes(brotli.compress(body, quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT))
    return zlib.compress(body, GZIP_LEVEL, wbits=16 + zlib.MAX_WBITS)


def chosen_encoding(accept_encoding: bytes) -> str | None:
    """``br`` or ``gzip`` when ``Accept-Encoding`` accepts it (``q=0`` refuses), else None."""
    accepted = set()
    for item in accept_encoding.lower().split(b","):
        token, _, params = item.partition(b";")
        quality = params.strip()
        if quality.startswith(b"q="):
            try:
                if float(quality[2:]) <= 0:
                    continue
            except ValueError:
                continue
        accepted.add(token.strip())
    if b"br" in accepted:
        return "br"
    if b"gzip" in accepted or b"*" in accepted:
        return "gzip"
    return None


class CompressedBodies:
    """Compressed bodies by (strong ETag, encoding), least recently used first out, bounded in
    entries and bytes. An entry holds its plain body too: a checksum names the bytes almost
    surely, the comparison makes it sure."""

    def __init__(self, max_entries: int = MEMO_ENTRIES, max_bytes: int = MEMO_BYTES) -> None:
        self._entries: Lru[tuple[bytes, str], tuple[bytes, bytes]] = Lru(
            max_entries, max_bytes, lambda key, kept: len(kept[0]) + len(kept[1]))

    def get(self, etag: bytes, encoding: str, body: bytes) -> bytes:
        key = (etag, encoding)
        kept = self._entries.get(key)
        if kept is not None and kept[0] == body:
            return kept[1]
        packed = _whole(encoding, body)
        self._entries.put(key, (body, packed))
        return packed


class Compression:
    """ASGI middleware around the app (inside ``RequestContext``, which completes
    ``Vary``)."""

    def __init__(self, app: ASGIApp, bodies: CompressedBodies | None = None) -> None:
        self.app = app
        self.bodies = bodies or CompressedBodies()

    def __getattr__(self, name: str) -> Any:  # expose the wrapped Litestar app's attributes
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        encoding = None
        if scope["type"] == ScopeType.HTTP:
            for name, value in scope["headers"]:
                if name == b"accept-encoding":
                    encoding = chosen_encoding(value)
                    break
        if encoding is None:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Sender(send, encoding, self.bodies))


class _Sender:
    """The ``send`` of one response, compressing its body when worth it."""

    def __init__(self, send: Send, encoding: str, bodies: CompressedBodies) -> None:
        self._send: Any = send  # typed loosely: this class builds the messages itself
        self._encoding = encoding
        self._bodies = bodies
        self._start: Any = None  # the held http.response.start message
        self._stream: _Stream | None = None

    async def __call__(self, message: Any) -> None:  # an ASGI message
        kind = message["type"]
        if kind == "http.response.start":
            self._start = message
            return
        body: bytes = message.get("body", b"")
        more = message.get("more_body", False)
        if kind == "http.response.body" and self._stream is not None:  # being compressed
            chunk = self._stream.compress(body)
            if not more:
                chunk += self._stream.finish()
            await self._send({"type": "http.response.body", "body": chunk, "more_body": more})
            return
        if kind != "http.response.body" or self._start is None:  # nothing to compress
            await self._flush_start()
            await self._send(message)
            return
        start, self._start = self._start, None
        headers = list(start.get("headers", ()))
        names = {name.lower() for name, _ in headers}
        if b"content-encoding" in names or (not more and len(body) < MINIMUM_SIZE):
            await self._send(start)
            await self._send(message)
            return
        headers = [(n, v) for n, v in headers if n.lower() != b"content-length"]
        headers.append((b"content-encoding", self._encoding.encode()))
        headers.append((b"vary", b"Accept-Encoding"))
        etag_at = next((i for i, (n, _) in enumerate(headers) if n.lower() == b"etag"), -1)
        etag = headers[etag_at][1] if etag_at >= 0 else None
        if etag is not None:
            headers[etag_at] = (headers[etag_at][0], weakened(etag))
        if more:
            self._stream = _stream(self._encoding)
            await self._send({**start, "headers": headers})
            chunk = self._stream.compress(body)
            await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
            return
        if etag is not None and CHECKSUM_ETAG.fullmatch(etag):  # names this very body
            packed = self._bodies.get(etag, self._encoding, body)
        else:
            packed = _whole(self._encoding, body)
        headers.append((b"content-length", str(len(packed)).encode()))
        await self._send({**start, "headers": headers})
        await self._send({"type": "http.response.body", "body": packed, "more_body": False})

    async def _flush_start(self) -> None:
        start, self._start = self._start, None
        if start is not None:
            await self._send(start)
