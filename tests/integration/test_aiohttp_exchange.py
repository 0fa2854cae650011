"""``AiohttpExchange`` over real sockets: answers read in full, keep-alive reused, and every
failure raised in searchport's exchange vocabulary (``ResilientExchange`` retries ``Dropped``
and ``Refused``; a body cut after the head is a ``BadAnswer``, never retried)."""

from __future__ import annotations

import asyncio

import pytest

from searchport.adapters.aiohttp_exchange import AiohttpExchange
from searchport.adapters.exchange import (
    RETRYABLE,
    Answer,
    BadAnswer,
    Dropped,
    Refused,
    TimedOut,
)
from tests.misbehaving_upstream import OK_SEARCH, misbehaving_upstream, refused_port


def exchange(url: str, *, timeout: float = 2.0, times: int = 1) -> list[Answer]:
    async def run() -> list[Answer]:
        network = AiohttpExchange(tls=True, max_connections=4, keepalive_seconds=30)
        try:
            return [await network.exchange("POST", url, {"Content-Type": "application/json"},
                                           b'{"size":0}', timeout) for _ in range(times)]
        finally:
            await network.aclose()

    return asyncio.run(run())


def test_an_answer_is_read_in_full_over_one_kept_alive_connection() -> None:
    with misbehaving_upstream() as upstream:
        answers = exchange(f"{upstream.url}/cities/_search", times=3)
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert all(a.content == OK_SEARCH for a in answers)
        assert upstream.connections == 1
        assert [m for m, _ in upstream.data_requests()] == ["POST"] * 3


@pytest.mark.parametrize(("mode", "error"), [
    ("drop", Dropped),
    ("truncated", None),  # correctly framed: a 200 whose JSON is cut, not a transport error
    ("reset_mid_body", BadAnswer),  # not one of the retried failures
    ("hang", TimedOut),
])
def test_failures_are_exchange_errors(mode: str, error: type[Exception] | None) -> None:
    with misbehaving_upstream() as upstream:
        upstream.mode = mode
        if error is None:
            assert exchange(f"{upstream.url}/cities/_search")[0].status_code == 200
            return
        with pytest.raises(error) as raised:
            exchange(f"{upstream.url}/cities/_search", timeout=0.3)
        assert type(raised.value) is error
        assert isinstance(raised.value, RETRYABLE) == (error is Dropped)


def test_a_refused_connection_is_refused() -> None:
    with pytest.raises(Refused):
        exchange(f"http://127.0.0.1:{refused_port()}/cities/_search")


def test_a_compressed_answer_arrives_decompressed() -> None:
    """Engines compress when asked (Elasticsearch's ``http.compression``): the exchange
    hands on the JSON itself."""
    import gzip

    document = b'{"hits": {"total": {"value": 1}}, "padding": "' + b"x" * 5000 + b'"}'
    packed = gzip.compress(document)
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.lower())
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed))
        writer.write(packed)
        await writer.drain()
        writer.close()

    async def run() -> Answer:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        network = AiohttpExchange(tls=True, max_connections=4, keepalive_seconds=30)
        try:
            return await network.exchange("POST", f"http://127.0.0.1:{port}/cities/_search",
                                          {}, b'{"size":0}', 2.0)
        finally:
            await network.aclose()
            server.close()
            await server.wait_closed()

    response = asyncio.run(run())
    assert response.status_code == 200
    assert response.content == document
    assert b"accept-encoding: gzip" in seen[0]  # asked for, so remote engines may compress
