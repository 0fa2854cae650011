"""``EngineClient``'s failures over real sockets, each in searchport's exchange vocabulary
(``exchange.py``): ``Refused`` (no connection), ``Dropped`` (nothing usable before the
answer's head: retried by ``ResilientExchange``), ``BadAnswer`` (the body failed after the
head: never retried), ``TimedOut`` (no whole answer within the deadline), and a request
that cannot be written refused before anything is sent. After each failure the next
request on the same exchange is answered correctly.

A body whose framing or compression is broken is a ``BadAnswer`` even when it came in the
same piece as its head. The limits: libcurl's on the size of a head, and at most
100 header fields (``client.MAX_FIELDS``)."""

from __future__ import annotations

import asyncio
import time

import pytest

from searchport.adapters.network.client import EngineClient
from searchport.adapters.network.exchange import (
    RETRYABLE,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
)
from searchport.adapters.network.resilience import ResilientExchange
from tests.misbehaving_upstream import refused_port
from tests.scripted_http import (
    Request,
    Script,
    ScriptedServer,
    answer_bytes,
    event_loop_kind,  # noqa: F401 - each test on both loops
    ok,
    run,
)

BODY = b'{"hits": []}' * 50
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
CHUNKED = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"

FAILURES: dict[str, tuple[Script, type[ExchangeError]]] = {
    "closed before any byte": (Script([], then="close"), Dropped),
    "reset before any byte": (Script([], then="reset"), Dropped),
    "reset inside the head": (Script([HEAD[:20]], then="reset"), Dropped),
    "closed inside the head": (Script([HEAD], then="close"), Dropped),
    "not HTTP": (Script([b"SSH-2.0-OpenSSH_9.2\r\n\r\n"]), Dropped),
    "a header line without a colon": (Script([HEAD + b"Oops\r\n\r\n"]), Dropped),
    "a Content-Length that is not a number": (
        Script([HEAD + b"Content-Length: 12x\r\n\r\n"]), Dropped),
    "a head over 512 KiB": (
        Script([HEAD + b"X-Pad: " + b"y" * 512 * 1024 + b"\r\nContent-Length: 0\r\n\r\n"]),
        Dropped),
    "more than 128 header fields": (
        Script([HEAD + b"".join(b"X-Pad-%d: y\r\n" % n for n in range(200))
                + b"Content-Length: 0\r\n\r\n"]), Dropped),
    "reset inside the body": (
        Script([answer_bytes(200, BODY)[:-100]], then="reset"), BadAnswer),
    "closed inside the body": (
        Script([answer_bytes(200, BODY)[:-100]], then="close"), BadAnswer),
    "chunked cut short": (Script([CHUNKED + b"10\r\n0123456789"], then="close"), BadAnswer),
    "chunked without its last chunk": (
        Script([CHUNKED + b"a\r\n0123456789\r\n"], then="close"), BadAnswer),
    "a chunk size that is not hexadecimal, with the head": (
        Script([CHUNKED + b"zz\r\n0123456789\r\n0\r\n\r\n"]), BadAnswer),
    "a chunk without its CRLF, with the head": (
        Script([CHUNKED + b"2\r\nabcd\r\n0\r\n\r\n"]), BadAnswer),
    "gzip that is not gzip": (
        Script([answer_bytes(200, b"not gzip at all", "Content-Encoding: gzip")]), BadAnswer),
    "brotli that is not brotli": (
        Script([answer_bytes(200, BODY, "Content-Encoding: br")]), BadAnswer),
    "no answer in time": (Script([], then="hang"), TimedOut),
    "a head that never ends": (Script([HEAD], then="hang"), TimedOut),
    "a body dripping past the deadline": (
        Script([answer_bytes(200, BODY)[n:n + 100] for n in range(0, 800, 100)],
               pause=0.05), TimedOut),
}

@pytest.mark.parametrize("case", FAILURES)
def test_a_failure_is_told_in_the_vocabulary_and_the_next_request_is_answered(
        case: str) -> None:
    script, error = FAILURES[case]

    def answer(request: Request) -> Script:
        return script if request.body == b"fail" else ok(BODY)

    async def main() -> tuple[BaseException, float, bytes, int]:
        async with ScriptedServer(answer) as server:
            network = EngineClient(server.origin, max_connections=1,
                                   keepalive_seconds=30)
            try:
                started = time.monotonic()
                with pytest.raises(ExchangeError) as raised:
                    await network.exchange("POST", server.url(), {}, b"fail", 0.25)
                took = time.monotonic() - started
                after = await network.exchange("POST", server.url(), {}, b"next", 2.0)
                return raised.value, took, after.content, server.connections
            finally:
                await network.aclose()

    failure, took, after, connections = run(main())
    assert type(failure) is error
    assert isinstance(failure, RETRYABLE) == (error is Dropped)
    assert "127.0.0.1" not in str(failure)  # messages name no address
    if error is TimedOut:
        assert 0.2 <= took < 1.0
    else:
        assert took < 0.2
    assert after == BODY
    # the connection of a failed exchange is never reused (libcurl closes one whose body it
    # could not decompress too)
    assert connections == 2


def test_a_refused_port_is_refused() -> None:
    port = refused_port()

    async def main() -> None:
        network = EngineClient(f"http://127.0.0.1:{port}", max_connections=2,
                                keepalive_seconds=30)
        try:
            with pytest.raises(Refused) as raised:
                await network.exchange("GET", f"http://127.0.0.1:{port}/", {}, None, 2.0)
            assert str(port) not in str(raised.value)
            with pytest.raises(Refused):  # its place was given back: the pool is not stuck
                await network.exchange("GET", f"http://127.0.0.1:{port}/", {}, None, 2.0)
        finally:
            await network.aclose()

    run(main())


def test_waiting_for_a_connection_counts_against_the_deadline() -> None:
    async def main() -> tuple[type[BaseException], float]:
        async with ScriptedServer(lambda r: Script([], then="hang")) as server:
            network = EngineClient(server.origin, max_connections=1,
                                   keepalive_seconds=30)
            try:
                busy = asyncio.create_task(network.exchange("GET", server.url(), {}, None, 5))
                await asyncio.sleep(0.05)
                started = time.monotonic()
                with pytest.raises(TimedOut) as raised:
                    await network.exchange("GET", server.url(), {}, None, 0.2)
                busy.cancel()
                return type(raised.value), time.monotonic() - started
            finally:
                await network.aclose()

    kind, took = run(main())
    # the deadline is set on the loop's clock, which uvloop reads once per turn of the loop
    # (and libuv's timers count whole milliseconds): it may fire a few ms before 0.2 s of
    # time.monotonic() have passed (0.1995 s seen on a loaded machine), never much earlier
    assert kind is TimedOut and 0.19 <= took < 1.0


def test_bytes_after_a_whole_answer_end_that_connection() -> None:
    """libcurl reads the answer its head announces; the junk after it is never read as the
    next answer: the connection, idle with bytes nobody asked for, is ended, and the next
    request asked on a new connection."""
    def answer(request: Request) -> Script:
        return Script([answer_bytes(200, b"ok") + (b"junk" if request.body == b"1" else b"")])

    async def main() -> tuple[list[bytes], int]:
        async with ScriptedServer(answer) as s:
            network = EngineClient(s.origin, max_connections=1, keepalive_seconds=30)
            stack = ResilientExchange(network, retries=1, backoff=0.01)
            try:
                got = [(await network.exchange("POST", s.url(), {}, b"1", 2.0)).content]
                await asyncio.sleep(0.05)  # the junk reaches the client
                got.append((await stack.exchange("POST", s.url(), {}, b"2", 2.0)).content)
                return got, s.connections
            finally:
                await stack.aclose()

    assert run(main()) == ([b"ok", b"ok"], 2)


@pytest.mark.parametrize(("url", "headers"), [
    ("/idx/_search", {"X-Api-Key": "k\r\nX-Injected: 1"}),
    ("/idx/_search", {"X-Api-Key": "k\nX-Injected: 1"}),
    ("/idx/_search", {"X-Api-Key": "k\rX"}),
    ("http://other.example:1/idx/_search", {}),
])
def test_a_request_that_cannot_be_written_is_refused_before_sending(
        url: str, headers: dict[str, str]) -> None:
    async def main() -> int:
        async with ScriptedServer(lambda r: ok()) as server:
            network = EngineClient(server.origin, max_connections=1,
                                   keepalive_seconds=30)
            try:
                full = url if url.startswith("http") else server.url(url)
                with pytest.raises(ValueError):
                    await network.exchange("POST", full, headers, b"{}", 2.0)
                await asyncio.sleep(0.05)
                return len(server.requests)
            finally:
                await network.aclose()

    assert run(main()) == 0


def test_the_budget_of_a_resilient_call_covers_every_retry() -> None:
    """Under ``ResilientExchange`` the client keeps the deadline itself (no asyncio timer):
    each attempt gets what is left of the call's budget, so a 503 answered slowly and
    retried ends the call at the budget: the retry, given only what was left, times out."""
    seen: list[float] = []

    def slow_503(request: Request) -> Script:
        seen.append(time.monotonic())
        return Script([answer_bytes(503, b"{}")], delay=0.3)

    async def main() -> tuple[object, float]:
        async with ScriptedServer(slow_503) as server:
            network = EngineClient(server.origin, max_connections=4,
                                    keepalive_seconds=30)
            stack = ResilientExchange(network, retries=10, backoff=0.01, jitter=lambda: 0.0)
            started = time.monotonic()
            try:
                outcome: object = (await stack.exchange("GET", server.url(), {}, None,
                                                        0.5)).status_code
            except TimedOut as exc:
                outcome = exc
            finally:
                await stack.aclose()
            return outcome, time.monotonic() - started

    outcome, took = run(main())
    # the first 503 at 0.3 s, the retry cut at the budget (0.5 s); given the whole budget
    # again it would have answered at 0.6 s
    assert isinstance(outcome, TimedOut)
    assert len(seen) == 2
    assert 0.49 <= took < 0.58  # the loop's clock may run a few ms behind (see above)
