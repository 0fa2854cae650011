"""A real HTTP/1.1 server on 127.0.0.1 that fails the way engines and proxies fail.

It runs its own asyncio loop in a thread, so synchronous tests (Litestar's ``TestClient``,
a ``searchport serve`` process) can talk to it. ``mode`` picks what every data request
gets; ``GET .../_mapping`` always answers a small valid mapping unless ``fail_mapping``,
so an Elasticsearch adapter's bookkeeping does not blur the counts. It counts the
connections it accepted and the requests it read (``requests``: method and path).

Modes: ``ok`` (a valid empty Elasticsearch search answer), ``hang`` (read the request,
never answer), ``slow`` (answer ``ok`` after ``delay`` seconds), ``drip`` (the ``ok``
answer in 20 pieces 0.2 s apart: no single read is slow, the whole takes 4 s), ``status`` (answer
``status`` with a JSON error), ``html`` (200 with an HTML page), ``truncated`` (200 with
half a JSON body, correctly framed), ``reset_mid_body`` (send half the announced body,
then reset the connection), ``drop`` (close without answering). ``script`` overrides
``mode`` for the next requests, one entry each (``["503", "503"]`` then ``mode``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

OK_SEARCH = json.dumps({
    "took": 1, "timed_out": False,
    "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
    "hits": {"total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []},
}).encode()
MAPPING = json.dumps({"cities": {"mappings": {"properties": {
    "name": {"type": "text"}}}}}).encode()
HTML = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"


class MisbehavingUpstream:
    def __init__(self) -> None:
        self.mode = "ok"
        self.status = 500
        self.delay = 5.0
        self.fail_mapping = False
        self.script: list[str] = []
        self.connections = 0
        self.requests: list[tuple[str, str]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def data_requests(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if not r[1].endswith("/_mapping")]

    def start(self) -> MisbehavingUpstream:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(timeout=10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                keep_open = await self._answer(request, reader, writer)
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, request: tuple[str, str], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bool:
        if request[1].endswith("/_mapping") and not self.fail_mapping:
            await _send(writer, 200, MAPPING)
            return True
        mode = self.script.pop(0) if self.script else self.mode
        if mode.isdigit():
            await _send(writer, int(mode), b'{"error": "scripted", "status": %s}' % mode.encode())
        elif mode == "ok":
            await _send(writer, 200, OK_SEARCH)
        elif mode == "status":
            await _send(writer, self.status,
                        b'{"error": {"type": "boom", "reason": "x"}, "status": %d}' % self.status)
        elif mode == "slow":
            await asyncio.sleep(self.delay)
            await _send(writer, 200, OK_SEARCH)
        elif mode == "hang":
            await reader.read()  # until the client gives up and closes
            return False
        elif mode == "drip":  # every read well within a read timeout, the whole far past it
            writer.write(_head(200, len(OK_SEARCH), "application/json"))
            step = -(-len(OK_SEARCH) // 20)
            for start in range(0, len(OK_SEARCH), step):
                await asyncio.sleep(0.2)
                writer.write(OK_SEARCH[start:start + step])
                await writer.drain()
        elif mode == "html":
            await _send(writer, 200, HTML, content_type="text/html")
        elif mode == "truncated":
            await _send(writer, 200, OK_SEARCH[: len(OK_SEARCH) // 2])
        elif mode == "reset_mid_body":
            head = _head(200, len(OK_SEARCH), "application/json")
            writer.write(head + OK_SEARCH[: len(OK_SEARCH) // 2])
            await writer.drain()
            _reset(writer)
            return False
        elif mode == "drop":
            return False
        else:
            raise AssertionError(f"unknown mode {mode}")
        return True


def _head(status: int, length: int, content_type: str) -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\nX-Elastic-Product: Elasticsearch\r\n\r\n").encode()


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes,
                content_type: str = "application/json") -> None:
    writer.write(_head(status, len(body), content_type) + body)
    await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST instead of a FIN (SO_LINGER 0)."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str] | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    length = 0
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length:
        await reader.readexactly(length)
    return method, path.split("?", 1)[0]


def refused_port() -> int:
    """A loopback port nobody listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def misbehaving_upstream() -> Iterator[MisbehavingUpstream]:
    upstream = MisbehavingUpstream().start()
    try:
        yield upstream
    finally:
        upstream.stop()


def open_fds() -> int:
    import os

    return len(os.listdir("/proc/self/fd"))
