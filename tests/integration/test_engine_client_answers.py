"""``EngineClient`` over real sockets, what is sent and how answers are read: the request
as written on the wire, every way an answer's body can end (Content-Length, chunked with
extensions and trailers, the connection's close), interim 1xx answers, bodies that cannot
exist (HEAD, 204, 304), content codings, and a property: any body, framed and split any
way, arrives byte for byte."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

import brotli
import pycurl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchport import __version__
from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import Answer, BadAnswer
from tests.scripted_http import (
    Request,
    Script,
    ScriptedServer,
    answer_bytes,
    event_loop_kind,  # noqa: F401 - each test on both loops
    ok,
    run,
)

T = TypeVar("T")
DOCUMENT = ('{"hits": {"total": {"value": 2}, "hits": ["\u00e9t\u00e9", "' + "x" * 3000
            + '"]}}').encode()


def served(answer: Callable[[Request], Script],
        test: Callable[[EngineClient, ScriptedServer], Awaitable[T]], **pool: float) -> T:
    async def main() -> T:
        async with ScriptedServer(answer) as server:
            network = EngineClient(server.origin,
                                   max_connections=int(pool.get("max_connections", 4)),
                                   keepalive_seconds=pool.get("keepalive", 30.0))
            try:
                return await test(network, server)
            finally:
                await network.aclose()

    return run(main())


def one(answer: Callable[[Request], Script], method: str = "POST",
        body: bytes | None = b'{"size": 0}') -> tuple[Answer, list[Request]]:
    async def test(network: EngineClient, server: ScriptedServer) -> tuple[Answer, list[Request]]:
        got = await network.exchange(method, server.url(), {"Accept": "application/json"},
                                     body, 2.0)
        return got, server.requests

    return served(answer, test)


def chunked(body: bytes, sizes: list[int], *, extensions: bool = False,
            trailers: bool = False) -> bytes:
    """``body`` in chunks of ``sizes`` (cycled), hexadecimal sizes, CRLFs and the last chunk."""
    out, start, n = [], 0, 0
    while start < len(body):
        size = max(1, sizes[n % len(sizes)])
        part = body[start:start + size]
        extension = f';name{n}="v {n}";flag' if extensions else ""
        out.append(f"{len(part):x}{extension}\r\n".encode() + part + b"\r\n")
        start, n = start + size, n + 1
    out.append(b"0;last\r\n" if extensions else b"0\r\n")
    if trailers:
        out.append(b"X-Checksum: abc\r\nX-Other: 1\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def test_the_request_on_the_wire() -> None:
    answer, requests = one(lambda r: ok(DOCUMENT))
    assert (answer.status_code, answer.content) == (200, DOCUMENT)
    sent = requests[0]
    assert (sent.method, sent.target, sent.body) == ("POST", "/idx/_search", b'{"size": 0}')
    names = [k.lower() for k, _ in sent.headers]
    assert len(names) == len(set(names))  # nothing twice
    assert sent.header("host") == f"127.0.0.1:{sent_port(sent)}"
    assert sent.header("content-length") == "11"
    assert sent.header("accept") == "application/json"
    # every coding this libcurl decodes, by the features it was built with
    features = pycurl.version_info()[4]
    decoded = {name for name, feature in (("deflate", pycurl.VERSION_LIBZ),
                                          ("gzip", pycurl.VERSION_LIBZ),
                                          ("br", pycurl.VERSION_BROTLI),
                                          ("zstd", getattr(pycurl, "VERSION_ZSTD", 0)))
               if features & feature}
    assert set((sent.header("accept-encoding") or "").split(", ")) == decoded
    assert {"gzip", "deflate", "br"} <= decoded
    assert sent.header("user-agent") == f"searchport/{__version__}"
    assert sent.header("connection") is None and sent.header("cookie") is None


def sent_port(request: Request) -> str:
    host = request.header("host")
    assert host is not None
    return host.rpartition(":")[2]


@pytest.mark.parametrize(("method", "body", "length"), [
    ("POST", None, "0"), ("PUT", None, "0"), ("GET", None, None), ("GET", b"{}", "2"),
    ("DELETE", None, "0")])
def test_content_length_is_declared_when_a_body_is_due(method: str, body: bytes | None,
                                                       length: str | None) -> None:
    _, requests = one(lambda r: ok(), method=method, body=body)
    assert requests[0].method == method
    assert requests[0].header("content-length") == length


def test_the_target_keeps_its_query_and_non_ascii_is_percent_encoded() -> None:
    async def test(network: EngineClient, server: ScriptedServer) -> list[str]:
        await network.exchange("GET", server.url("/c/caf\u00e9 x/documents?q=a%20b&x=1"),
                               {}, None, 2.0)
        await network.exchange("GET", server.origin, {}, None, 2.0)
        return [r.target for r in server.requests]

    assert served(lambda r: ok(), test) == ["/c/caf%C3%A9%20x/documents?q=a%20b&x=1", "/"]


def test_header_lookups_ignore_case_and_repeated_fields_read_first() -> None:
    answer, _ = one(lambda r: ok(b"{}", "X-Elastic-Product: Elasticsearch",
                                 "Warning: one", "warning: two"))
    for name in ("content-type", "Content-Type", "CONTENT-TYPE"):
        assert answer.headers.get(name) == "application/json"
        assert answer.headers[name] == "application/json"
        assert name in answer.headers
    assert answer.headers.get("x-elastic-product") == "Elasticsearch"
    assert answer.headers.get("Warning") == "one"  # a repeated field: its first value
    assert answer.headers.get("retry-after") is None and "retry-after" not in answer.headers
    assert {name.lower() for name in answer.headers} == {
        "content-type", "x-elastic-product", "warning", "content-length"}


@pytest.mark.parametrize(("extensions", "trailers"), [(False, False), (True, True)])
def test_a_chunked_body_sent_byte_by_byte(extensions: bool, trailers: bool) -> None:
    wire = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked(DOCUMENT, [1, 7, 300, 4096], extensions=extensions, trailers=trailers))
    pieces = [wire[i:i + 1] for i in range(len(wire))]

    async def test(network: EngineClient, server: ScriptedServer) -> list[Answer]:
        return [await network.exchange("GET", server.url(), {}, None, 5.0) for _ in range(2)]

    answers = served(lambda r: Script(pieces), test)
    assert [a.content for a in answers] == [DOCUMENT, DOCUMENT]


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_compressed_bodies_arrive_decompressed(coding: str) -> None:
    if coding == "deflate":
        packed, name = zlib.compress(DOCUMENT), coding
    elif coding == "br":
        packed, name = brotli.compress(DOCUMENT), coding
    else:
        packed, name = gzip.compress(DOCUMENT), coding
    answer, _ = one(lambda r: Script([answer_bytes(200, packed, f"Content-Encoding: {name}")]))
    assert answer.content == DOCUMENT


def test_chunked_gzip() -> None:
    wire = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked(gzip.compress(DOCUMENT), [13]))
    answer, _ = one(lambda r: Script([wire]))
    assert answer.content == DOCUMENT


def wire_of(coding: str, packed: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode()
            + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(packed, [13]))


def test_gzip_of_several_members_is_a_bad_answer_never_cut_short() -> None:
    """Not what an engine sends (one gzip member per answer): it fails whole instead of
    yielding part of the document."""
    packed = gzip.compress(DOCUMENT[:100]) + gzip.compress(DOCUMENT[100:])
    with pytest.raises(BadAnswer):
        one(lambda r: Script([wire_of("gzip", packed)]))


def test_raw_deflate_is_read_whole() -> None:
    """RFC 9110's deflate is zlib's format; libcurl also reads deflate without zlib's
    header, as browsers do, and hands over the whole document."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    packed = packer.compress(DOCUMENT) + packer.flush()
    answer, _ = one(lambda r: Script([wire_of("deflate", packed)]))
    assert answer.content == DOCUMENT


def test_a_body_ending_at_the_close() -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + DOCUMENT

    async def test(network: EngineClient, server: ScriptedServer) -> list[bytes]:
        return [(await network.exchange("GET", server.url(), {}, None, 2.0)).content
                for _ in range(2)]

    script = Script([wire[:50], wire[50:]], pause=0.01, then="close")
    assert served(lambda r: script, test) == [DOCUMENT, DOCUMENT]


def test_interim_answers_are_skipped() -> None:
    script = Script([b"HTTP/1.1 100 Continue\r\n\r\n",
                     b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
                     + answer_bytes(201, DOCUMENT)], pause=0.01)
    answer, _ = one(lambda r: script)
    assert (answer.status_code, answer.content) == (201, DOCUMENT)
    assert "link" not in answer.headers


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("GET", 204), ("GET", 304)])
def test_answers_without_a_body_leave_the_connection_usable(method: str, status: int) -> None:
    """The head announces a length (HEAD) or none is allowed (204, 304): nothing is waited
    for, and the next answer on the same connection is read whole."""
    head = f"HTTP/1.1 {status} X\r\nContent-Length: 999\r\nETag: \"e\"\r\n\r\n".encode()

    def answer(request: Request) -> Script:
        return Script([head]) if request.method == method else ok(DOCUMENT)

    async def test(network: EngineClient, server: ScriptedServer) -> tuple[Answer, Answer]:
        first = await network.exchange(method, server.url(), {}, None, 2.0)
        second = await network.exchange("POST", server.url(), {}, b"{}", 2.0)
        assert server.connections == 1
        return first, second

    first, second = served(answer, test)
    assert (first.status_code, first.content, first.headers.get("etag")) == (status, b"", '"e"')
    assert (second.status_code, second.content) == (200, DOCUMENT)


@st.composite
def framed_answers(draw: st.DrawFn) -> tuple[bytes, Script]:
    body = draw(st.binary(max_size=3000))
    content = body
    headers = "HTTP/1.1 200 OK\r\n"
    if draw(st.booleans()):
        content = gzip.compress(body, compresslevel=draw(st.integers(0, 9)))
        headers += "Content-Encoding: gzip\r\n"
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    if framing == "length":
        wire = f"{headers}Content-Length: {len(content)}\r\n\r\n".encode() + content
    elif framing == "chunked":
        sizes = draw(st.lists(st.integers(1, 700), min_size=1, max_size=8))
        wire = f"{headers}Transfer-Encoding: chunked\r\n\r\n".encode() + chunked(
            content, sizes, extensions=draw(st.booleans()), trailers=draw(st.booleans()))
    else:
        wire = f"{headers}Connection: close\r\n\r\n".encode() + content
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(wire) - 1)), max_size=12))))
    pieces = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    return body, Script([p for p in pieces if p], then="close" if framing == "close" else "keep")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(framed_answers())
def test_any_body_arrives_byte_identical(case: tuple[bytes, Script]) -> None:
    body, script = case
    answer, _ = one(lambda r: script)
    assert answer.content == body
