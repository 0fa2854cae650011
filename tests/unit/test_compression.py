"""``Compression``: brotli or gzip as the client accepts, bodies that decompress to what the
app sent (whole or streamed), and each digest-tagged answer compressed once."""

from __future__ import annotations

import asyncio
import gzip
import os
import zlib
from typing import Any

import brotli  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.entrypoints.http import compression
from searchport.entrypoints.http.compression import CompressedBodies, Compression, chosen_encoding


def digest_etag(body: bytes) -> bytes:
    """The ETag the cacheable routes set: the body's length and CRC-32, in hex."""
    return f'"{len(body):x}-{zlib.crc32(body):08x}"'.encode()


def app_sending(chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": i < len(chunks) - 1})
    return app


def run(app: Any, accept: bytes | None) -> tuple[dict[bytes, bytes], bytes, int]:
    """Headers, the body as sent on the wire, and the number of body messages."""
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    headers = [] if accept is None else [(b"accept-encoding", accept)]
    scope = {"type": "http", "method": "GET", "path": "/", "headers": headers}
    asyncio.run(app(scope, receive, send))
    start = sent[0]
    assert start["type"] == "http.response.start"
    bodies = [m for m in sent[1:] if m["type"] == "http.response.body"]
    assert not bodies[-1].get("more_body", False)
    return dict(start["headers"]), b"".join(m["body"] for m in bodies), len(bodies)


def decoded(encoding: bytes | None, wire: bytes) -> bytes:
    if encoding == b"br":
        return bytes(brotli.decompress(wire))
    if encoding == b"gzip":
        return gzip.decompress(wire)
    return wire


@pytest.mark.parametrize(("accept", "expected"), [
    (b"gzip, deflate, br", "br"),
    (b"gzip", "gzip"),
    (b"br;q=0, gzip", "gzip"),
    (b"gzip;q=0", None),
    (b"identity", None),
    (b"*", "gzip"),
    (b"BR", "br"),
    (b"gzip;q=bogus, br;q=0.5", "br"),
    (b"", None),
])
def test_the_encoding_follows_accept_encoding(accept: bytes, expected: str | None) -> None:
    assert chosen_encoding(accept) == expected


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.binary(max_size=3000), min_size=1, max_size=6),
       accept=st.sampled_from([None, b"identity", b"gzip", b"br", b"gzip, br"]),
       tagged=st.booleans())
def test_what_arrives_decompresses_to_what_the_app_sent(
        chunks: list[bytes], accept: bytes | None, tagged: bool) -> None:
    body = b"".join(chunks)
    headers = [(b"content-type", b"application/json")]
    if len(chunks) == 1:
        headers.append((b"content-length", str(len(body)).encode()))
    if tagged:
        headers.append((b"etag", digest_etag(body)))
    got, wire, _ = run(Compression(app_sending(chunks, headers)), accept)
    encoding = got.get(b"content-encoding")
    assert decoded(encoding, wire) == body
    if encoding is not None:
        assert got[b"vary"] == b"Accept-Encoding"
        assert b"content-length" not in got or got[b"content-length"] == str(len(wire)).encode()
    compressed = accept is not None and chosen_encoding(accept) is not None and (
        len(chunks) > 1 or len(body) >= compression.MINIMUM_SIZE)
    assert (encoding is not None) == compressed


def test_a_digest_tagged_answer_is_compressed_once_per_encoding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"hits": [' + b'{"name": "Paris"},' * 400 + b'{}]}'
    calls: list[str] = []
    whole = compression._whole

    def counted(encoding: str, data: bytes) -> bytes:
        calls.append(encoding)
        return whole(encoding, data)

    monkeypatch.setattr(compression, "_whole", counted)
    bodies = CompressedBodies()
    app = Compression(app_sending([body], [(b"etag", digest_etag(body))]), bodies)
    for accept in (b"br", b"br", b"gzip", b"br", b"gzip"):
        _, wire, _ = run(app, accept)
        assert decoded(accept, wire) == body
    assert calls == ["br", "gzip"]

    other = b"x" * 5000  # a static file's ETag names no bytes: compressed every time
    calls.clear()
    app = Compression(app_sending([other], [(b"etag", b'"1700000000.0-5000-123"')]), bodies)
    for _ in range(2):
        run(app, b"gzip")
    assert calls == ["gzip", "gzip"]


def test_the_memo_stays_within_its_bounds() -> None:
    memo = CompressedBodies(max_entries=3, max_bytes=10_000_000)
    bodies = [os.urandom(2000) for _ in range(5)]
    for body in bodies:
        memo.get(digest_etag(body), "gzip", body)
    assert len(memo._entries) == 3
    # an entry counts its plain body and its compressed one (random bytes do not shrink):
    # ~4 KB each
    small = CompressedBodies(max_entries=100, max_bytes=5000)
    for body in bodies:
        memo.get(digest_etag(body), "gzip", body)
        small.get(digest_etag(body), "gzip", body)
    assert small._entries.bytes <= 5000 and len(small._entries) == 1


def test_an_encoded_or_small_body_goes_as_it_is() -> None:
    packed = gzip.compress(b"x" * 5000)
    got, wire, _ = run(Compression(app_sending([packed], [(b"content-encoding", b"gzip")])),
                       b"br")
    assert got[b"content-encoding"] == b"gzip" and wire == packed
    got, wire, _ = run(Compression(app_sending([b"{}"], [])), b"br")
    assert b"content-encoding" not in got and wire == b"{}"
