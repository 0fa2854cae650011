"""A scriptable HTTP/1.1 server on 127.0.0.1 inside the test's own event loop, for the
engine client's tests (``tests/integration/test_engine_client_*.py``).

For every request it reads, ``answer(request)`` says what goes back: a ``Script`` of raw
byte pieces (written one by one, with pauses if asked) and what happens afterwards (keep
the connection, close it, reset it, or hang). It counts the connections it accepted, the
most open at once, and the requests it read, so tests can see reuse and limits.

``run`` runs a test's coroutine on the event loop the ``event_loop_kind`` fixture picked:
every test that imports the fixture runs on asyncio's own loop and on uvloop, the loop
``searchport serve`` runs on.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
import uvloop

T = TypeVar("T")
_LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
_loop_kind = ["asyncio"]


@pytest.fixture(autouse=True, params=sorted(_LOOPS))
def event_loop_kind(request: pytest.FixtureRequest) -> Iterator[str]:
    _loop_kind[0] = request.param
    yield request.param
    _loop_kind[0] = "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=_LOOPS[_loop_kind[0]]) as runner:
        return runner.run(main)


@dataclass
class Request:
    method: str
    target: str
    headers: list[tuple[str, str]]  # as sent: names in their own case, in order
    body: bytes
    connection: int  # 1 for the first connection the server accepted, and so on

    def header(self, name: str) -> str | None:
        found = [v for k, v in self.headers if k.lower() == name.lower()]
        return found[0] if found else None


@dataclass
class Script:
    pieces: list[bytes] = field(default_factory=list)
    delay: float = 0.0  # before the first piece
    pause: float = 0.0  # between pieces
    then: str = "keep"  # keep | close | reset | hang


def answer_bytes(status: int, body: bytes, *headers: str, reason: str = "X") -> bytes:
    """A Content-Length answer."""
    lines = [f"HTTP/1.1 {status} {reason}", *headers, f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


def ok(body: bytes = b'{"ok": true}', *headers: str) -> Script:
    return Script([answer_bytes(200, body, "Content-Type: application/json", *headers)])


class ScriptedServer:
    def __init__(self, answer: Callable[[Request], Script],
                 tls: ssl.SSLContext | None = None) -> None:
        """``tls``: serve https with this context."""
        self.answer = answer
        self.tls = tls
        self.requests: list[Request] = []
        self.connections = 0
        self.open_now = 0
        self.most_open = 0
        self.closed_by_client = 0  # connections whose client closed them
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        """The port it listens on (kept once it is stopped)."""
        if self._port is None:
            assert self._server is not None
            self._port = int(self._server.sockets[0].getsockname()[1])
        return self._port

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def url(self, path: str = "/idx/_search") -> str:
        return f"{self.origin}{path}"

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self._port = None
        self._port = self.port
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        if self._tasks:  # each ends as its connection is gone; a sleeping one is cut short
            _, pending = await asyncio.wait(set(self._tasks), timeout=0.5)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        self._writers.add(writer)
        try:
            while True:
                request = await read_request(reader, number)
                if request is None:
                    self.closed_by_client += 1
                    return
                self.requests.append(request)
                if not await self._play(self.answer(request), reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            self.closed_by_client += 1
        finally:
            self.open_now -= 1
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.transport.abort()

    async def _play(self, script: Script, reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> bool:
        """True when the connection stays open for the next request."""
        if script.delay:
            await asyncio.sleep(script.delay)
        for n, piece in enumerate(script.pieces):
            if n and script.pause:
                await asyncio.sleep(script.pause)
            writer.write(piece)
            await writer.drain()
        if script.then == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if script.then == "close":
            writer.close()
            return False
        if script.then == "hang":
            if await reader.read() == b"":  # until the client gives up and closes
                self.closed_by_client += 1
            return False
        return True


async def read_request(reader: asyncio.StreamReader, connection: int) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head[:-4].decode("utf-8").split("\r\n")
    method, target, version = lines[0].split(" ")
    assert version in ("HTTP/1.1", "HTTP/1.0"), lines[0]
    headers = [(k, v.strip()) for k, _, v in (line.partition(":") for line in lines[1:])]
    length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
    body = await reader.readexactly(length) if length else b""
    return Request(method, target, headers, body, connection)
