"""``AiohttpTransport`` over real sockets: answers read in full, keep-alive reused, and every
failure raised as the httpx exception httpcore raises for it (``ResilientTransport`` retries
by those types)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from searchport.adapters.aiohttp_transport import AiohttpTransport
from tests.misbehaving_upstream import OK_SEARCH, misbehaving_upstream, refused_port


def exchange(url: str, *, timeout: float = 2.0, times: int = 1) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        transport = AiohttpTransport(tls=True, max_connections=4, keepalive_seconds=30)
        async with httpx.AsyncClient(transport=transport) as client:
            answers = []
            for _ in range(times):
                answers.append(await client.post(url, content=b'{"size":0}',
                                                 headers={"Content-Type": "application/json"},
                                                 timeout=timeout))
            return answers

    return asyncio.run(run())


def test_an_answer_is_read_in_full_over_one_kept_alive_connection() -> None:
    with misbehaving_upstream() as upstream:
        answers = exchange(f"{upstream.url}/cities/_search", times=3)
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert all(a.content == OK_SEARCH for a in answers)
        assert upstream.connections == 1
        assert [m for m, _ in upstream.data_requests()] == ["POST"] * 3


@pytest.mark.parametrize(("mode", "error"), [
    ("drop", httpx.RemoteProtocolError),
    ("truncated", None),  # correctly framed: a 200 whose JSON is cut, not a transport error
    ("reset_mid_body", httpx.RemoteProtocolError),
    ("hang", httpx.ReadTimeout),
])
def test_failures_are_httpx_exceptions(mode: str, error: type[Exception] | None) -> None:
    with misbehaving_upstream() as upstream:
        upstream.mode = mode
        if error is None:
            assert exchange(f"{upstream.url}/cities/_search")[0].status_code == 200
            return
        with pytest.raises(error):
            exchange(f"{upstream.url}/cities/_search", timeout=0.3)


def test_a_refused_connection_is_a_connect_error() -> None:
    with pytest.raises(httpx.ConnectError):
        exchange(f"http://127.0.0.1:{refused_port()}/cities/_search")
