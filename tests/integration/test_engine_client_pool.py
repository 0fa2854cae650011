"""``EngineClient``'s connections over real sockets: kept alive and reused, bounded under
load (libcurl queues the rest), not reused once idle too long, given up when the server
closes them or says so, never reused after an answer left unread (a cancelled caller), and
one pool per event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import Answer, Dropped
from searchport.adapters.network.resilience import ResilientExchange
from tests.scripted_http import (
    Request,
    Script,
    ScriptedServer,
    answer_bytes,
    event_loop_kind,  # noqa: F401 - each test on both loops
    ok,
    run,
)


def exchange_over(server: ScriptedServer, *, max_connections: int = 4,
                  keepalive: float = 30.0) -> EngineClient:
    return EngineClient(server.origin, max_connections=max_connections,
                         keepalive_seconds=keepalive)


async def post(network: EngineClient | ResilientExchange, server: ScriptedServer,
               body: bytes = b"{}", timeout: float = 2.0) -> Answer:
    return await network.exchange("POST", server.url(), {}, body, timeout)


def echo(request: Request) -> Script:
    return ok(request.body)


def test_sequential_requests_share_one_connection() -> None:
    async def main() -> tuple[list[bytes], int]:
        async with ScriptedServer(echo) as server:
            network = exchange_over(server)
            try:
                got = [(await post(network, server, b"%d" % n)).content for n in range(20)]
            finally:
                await network.aclose()
            await asyncio.sleep(0.05)
            assert server.closed_by_client == 1  # aclose closed it
            return got, server.connections

    contents, connections = run(main())
    assert contents == [b"%d" % n for n in range(20)]
    assert connections == 1


def test_at_most_max_connections_under_a_hundred_concurrent_requests() -> None:
    async def main() -> tuple[list[bytes], ScriptedServer]:
        async with ScriptedServer(lambda r: Script(ok(r.body).pieces, delay=0.01)) as server:
            network = exchange_over(server, max_connections=8)
            try:
                answers = await asyncio.gather(
                    *(post(network, server, b"%d" % n, timeout=10.0) for n in range(100)))
            finally:
                await network.aclose()
            return [a.content for a in answers], server

    contents, server = run(main())
    assert contents == [b"%d" % n for n in range(100)]  # each caller got its own answer
    assert server.most_open == 8
    assert server.connections == 8  # the eight were reused for the other 92


def test_waiting_requests_each_get_the_one_connection_in_turn() -> None:
    """Requests beyond ``max_connections`` wait in libcurl's queue (its order is its own):
    each is answered, one at a time, on the one connection."""
    async def main() -> tuple[list[bytes], ScriptedServer]:
        async with ScriptedServer(lambda r: Script(ok(r.body).pieces, delay=0.02)) as server:
            network = exchange_over(server, max_connections=1)
            try:
                answers = await asyncio.gather(
                    *(post(network, server, b"%d" % n) for n in range(6)))
            finally:
                await network.aclose()
            return [a.content for a in answers], server

    contents, server = run(main())
    assert contents == [b"%d" % n for n in range(6)]
    assert sorted(r.body for r in server.requests) == sorted(contents)
    assert (server.most_open, server.connections) == (1, 1)


def test_an_idle_connection_is_not_reused_after_the_keepalive() -> None:
    """libcurl's ``CURLOPT_MAXAGE_CONN`` (whole seconds): a connection idle longer is
    closed when libcurl next looks for one, and another is opened."""
    async def main() -> tuple[int, int, int, int]:
        async with ScriptedServer(echo) as server:
            network = exchange_over(server, keepalive=1.0)
            try:
                await post(network, server)
                await asyncio.sleep(0.3)
                await post(network, server)  # within the keep-alive: the same connection
                reused = server.connections
                await asyncio.sleep(1.3)
                await post(network, server)
                await asyncio.sleep(0.05)  # the server hears of the close
                return reused, server.connections, server.closed_by_client, server.most_open
            finally:
                await network.aclose()

    assert run(main()) == (1, 2, 1, 1)


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    """Closed after the answer (no ``Connection: close``): the next request opens another
    connection instead of failing on the dead one."""
    async def main() -> tuple[list[int], int]:
        async with ScriptedServer(lambda r: Script(ok().pieces, then="close")) as server:
            network = exchange_over(server)
            try:
                statuses = []
                for _ in range(3):
                    statuses.append((await post(network, server)).status_code)
                    await asyncio.sleep(0.05)  # the loop hears of the close
                return statuses, server.connections
            finally:
                await network.aclose()

    assert run(main()) == ([200, 200, 200], 3)


def dropped_on_reuse(script: list[str]) -> Callable[[Request], Script]:
    """The server answers the first request, then closes that kept-alive connection as
    the next request arrives (``script`` entries: "ok" or "drop", one per request)."""
    def answer(request: Request) -> Script:
        if script.pop(0) == "drop":
            return Script([], then="close")  # the request read, not a byte back
        return ok(request.body)

    return answer


@pytest.mark.parametrize("resilient", [False, True])
def test_a_kept_connection_dropped_as_the_request_arrives(resilient: bool) -> None:
    """The race a stale keep-alive connection gives (closed as the request arrives, nothing
    of an answer sent): libcurl asks again on a new connection itself, once; a request
    dropped on that one too is ``Dropped``, which ``ResilientExchange`` retries."""
    async def main() -> tuple[list[bytes | None], int]:
        script = ["ok", "drop", "ok", "drop", "drop", "ok"]
        async with ScriptedServer(dropped_on_reuse(script)) as server:
            network = exchange_over(server)
            stack = ResilientExchange(network, retries=2, backoff=0.01)
            try:
                got: list[bytes | None] = [(await post(network, server, b"first")).content]
                # dropped on the kept connection, answered on a new one
                got.append((await post(network, server, b"second")).content)
                assert server.connections == 2
                # dropped on the kept connection, then on the new one
                if not resilient:
                    with pytest.raises(Dropped):
                        await post(network, server, b"third")
                    got.append(None)
                else:
                    got.append((await post(stack, server, b"third")).content)
                return got, server.connections
            finally:
                await stack.aclose()

    got, connections = run(main())
    assert got == [b"first", b"second", b"third" if resilient else None]
    assert connections == (4 if resilient else 3)


@pytest.mark.parametrize("head", [
    "HTTP/1.1 200 OK\r\nConnection: close\r\n",
    "HTTP/1.0 200 OK\r\n",
])
def test_an_answer_that_ends_the_connection_is_not_followed_on_it(head: str) -> None:
    wire = f"{head}Content-Length: 2\r\n\r\nok".encode()

    async def main() -> tuple[list[bytes], int]:
        async with ScriptedServer(lambda r: Script([wire])) as server:  # the server keeps it
            network = exchange_over(server)
            try:
                got = [(await post(network, server)).content for _ in range(3)]
                return got, server.connections
            finally:
                await network.aclose()

    assert run(main()) == ([b"ok"] * 3, 3)


def test_http_1_0_with_keep_alive_is_reused() -> None:
    wire = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"

    async def main() -> int:
        async with ScriptedServer(lambda r: Script([wire])) as server:
            network = exchange_over(server)
            try:
                for _ in range(3):
                    assert (await post(network, server)).content == b"ok"
                return server.connections
            finally:
                await network.aclose()

    assert run(main()) == 1


def test_a_cancelled_request_does_not_poison_the_pool() -> None:
    """The caller goes away while its answer is on the way: its late answer can never be
    read as the next caller's (libcurl closes the connection of a transfer taken out of
    it before its end)."""
    def answer(request: Request) -> Script:
        if request.body == b"slow":
            return Script([answer_bytes(200, b"late")], delay=0.3)
        return ok(b"fresh")

    async def main() -> tuple[bytes, int, int]:
        async with ScriptedServer(answer) as server:
            network = exchange_over(server, max_connections=1)
            try:
                slow = asyncio.create_task(post(network, server, b"slow"))
                await asyncio.sleep(0.05)
                slow.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await slow
                got = await post(network, server, b"next")
                await asyncio.sleep(0.4)  # the late answer would have come by now
                again = await post(network, server, b"next")
                assert again.content == b"fresh"
                return got.content, server.connections, server.closed_by_client
            finally:
                await network.aclose()

    content, connections, _ = run(main())
    assert content == b"fresh"
    assert connections in (1, 2)


def test_a_cancelled_waiter_leaves_its_place_to_the_next() -> None:
    async def main() -> list[bytes]:
        async with ScriptedServer(lambda r: Script(ok(r.body).pieces, delay=0.05)) as server:
            network = exchange_over(server, max_connections=1)
            try:
                first = asyncio.create_task(post(network, server, b"1"))
                await asyncio.sleep(0.01)
                waiting = asyncio.create_task(post(network, server, b"2"))
                third = asyncio.create_task(post(network, server, b"3"))
                await asyncio.sleep(0.01)
                waiting.cancel()
                got = [(await first).content, (await third).content]
                assert server.connections == 1
                return got
            finally:
                await network.aclose()

    assert run(main()) == [b"1", b"3"]


def test_each_event_loop_gets_its_own_pool() -> None:
    """One exchange used from two event loops in turn (as tests and the CLI do): the second
    loop does not touch the first loop's connections, it opens its own."""
    async def first_loop() -> tuple[EngineClient, int]:
        async with ScriptedServer(echo) as server:
            network = exchange_over(server)
            assert (await post(network, server, b"1")).content == b"1"
            return network, server.port

    network, port = run(first_loop())

    async def second_loop() -> tuple[bytes, int]:
        server = ScriptedServer(echo)
        server._server = await asyncio.start_server(server._serve, "127.0.0.1", port)
        try:
            started = time.monotonic()
            got = (await post(network, server, b"2")).content
            assert time.monotonic() - started < 1.0
            return got, server.connections
        finally:
            await network.aclose()
            await server.__aexit__(None, None, None)

    assert run(second_loop()) == (b"2", 1)


def test_bytes_sent_unasked_on_an_idle_connection_end_it() -> None:
    """A server that times the connection out says so with an unasked 408 and closes:
    libcurl looks at a connection idle for a second or more before using it again, and
    one closed or holding bytes nobody asked for is never handed to the next request.
    (Idle for less, it is taken as it is: libcurl's choice, not searchport's.)"""
    stray = answer_bytes(408, b"", "Connection: close")

    def answer(request: Request) -> Script:
        if request.body == b"first":
            return Script([*ok(b"first").pieces, stray], pause=0.05, then="close")
        return ok(request.body)

    async def main() -> tuple[bytes, int]:
        async with ScriptedServer(answer) as server:
            network = exchange_over(server)
            try:
                assert (await post(network, server, b"first")).content == b"first"
                await asyncio.sleep(1.2)  # the stray answer arrives while idle
                got = await post(network, server, b"second")
                return got.content, server.connections
            finally:
                await network.aclose()

    assert run(main()) == (b"second", 2)


def test_aclose_fails_the_calls_in_flight_and_a_later_call_opens_anew() -> None:
    def answer(request: Request) -> Script:
        return Script([], then="hang") if request.body == b"hang" else ok(b"again")

    async def main() -> tuple[type[BaseException], bytes]:
        async with ScriptedServer(answer) as server:
            network = exchange_over(server)
            waiting = asyncio.create_task(post(network, server, b"hang", timeout=5.0))
            await asyncio.sleep(0.05)
            await network.aclose()
            with pytest.raises(Dropped) as raised:
                await asyncio.wait_for(waiting, 1.0)
            try:
                return type(raised.value), (await post(network, server, b"next")).content
            finally:
                await network.aclose()

    assert run(main()) == (Dropped, b"again")
