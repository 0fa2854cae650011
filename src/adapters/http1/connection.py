"""``Connection``: one keep-alive HTTP/1.1 connection, an ``asyncio.Protocol`` that reads
one answer per request straight from ``data_received`` into a future.

An answer ends by its ``Content-Length``, its last chunk, or the connection's close; its
future then holds ``(status, headers, raw body)`` or an exchange error: ``Dropped`` before
the head is read whole, ``BadAnswer`` after it, ``TimedOut`` when the exchange's deadline
passes first. A connection that failed, timed out or had its answer left unread is closed,
never reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from searchport.adapters.exchange import BadAnswer, Dropped, ExchangeError, TimedOut
from searchport.adapters.http1.response import (
    MAX_BODY,
    MAX_HEAD,
    BodyError,
    BodyFraming,
    ChunkedBody,
    HeadError,
    Headers,
    parse_head,
)

Reply = tuple[int, Headers, bytes]


class Connection(asyncio.Protocol):
    """``send`` writes a request and names the future its answer goes to; ``reusable``
    says, once it is there, whether the connection may carry the next request."""

    def __init__(self, on_idle_lost: Callable[[Connection], None]) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = False
        self.idle = False  # in its pool's idle list
        self.idle_since = 0.0
        self._on_idle_lost = on_idle_lost
        self._answer: asyncio.Future[Reply] | None = None
        self._buffer: bytes | bytearray = b""
        self._head_only = False
        self._status = 0
        self._headers: Headers | None = None
        self._framing: BodyFraming | None = None
        self._chunks: ChunkedBody | None = None

    # ------------------------------------------------------------ the exchange's side

    def send(self, request: bytes, answer: asyncio.Future[Reply], *, head_only: bool) -> None:
        self._answer = answer
        self._head_only = head_only
        self._framing = None
        self._chunks = None
        self.reusable = False
        if self.closed or self.transport is None:
            answer.set_exception(Dropped("the connection closed before the request"))
            return
        self.transport.write(request)

    def time_out(self) -> None:
        self._fail(TimedOut("no complete answer in time"))

    def abort(self) -> None:
        self.reusable = False
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # ------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        answer = self._answer
        if answer is None or answer.done():  # bytes nobody asked for: the link is not HTTP
            self.abort()
            return
        buffer = self._buffer
        if buffer:
            if not isinstance(buffer, bytearray):
                buffer = self._buffer = bytearray(buffer)
            buffer += data
        else:  # most answers come in one piece: it is read in place, without a copy
            buffer = self._buffer = data
        try:
            if self._framing is None and not self._read_head(len(buffer) - len(data)):
                return
            self._read_body()
        except HeadError as exc:
            self._fail(Dropped(str(exc)))
        except BodyError as exc:
            self._fail(BadAnswer(str(exc)))

    def eof_received(self) -> bool | None:
        return None  # the transport closes; connection_lost ends any answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        if self.idle:
            self._on_idle_lost(self)
        answer = self._answer
        if answer is None or answer.done():
            return
        framing = self._framing
        if framing is None:
            answer.set_exception(Dropped("the connection closed before the answer's head"))
        elif framing.length is None and not framing.chunked and exc is None:
            self._finish(bytes(self._buffer), leftover=False)  # the body ends at the close
        else:
            answer.set_exception(BadAnswer("the connection closed inside the answer's body"))

    # ------------------------------------------------------------ reading

    def _read_head(self, searched: int) -> bool:
        """True once the final head is read (interim 1xx heads skipped)."""
        buffer = self._buffer
        start = max(0, searched - 3)
        while True:
            end = buffer.find(b"\r\n\r\n", start, MAX_HEAD + 4)
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise HeadError("the answer's head is too large")
                return False
            status, version, headers = parse_head(buffer[:end])
            self._buffer = buffer = buffer[end + 4:]
            start = 0
            if status == 101:
                raise HeadError("the server switched protocols unasked")
            if status >= 200:
                self._status, self._headers = status, headers
                self._framing = BodyFraming(status, version, headers, self._head_only)
                if self._framing.chunked:
                    self._chunks = ChunkedBody()
                return True

    def _read_body(self) -> None:
        framing = self._framing
        assert framing is not None
        buffer = self._buffer
        if self._chunks is not None:
            if not isinstance(buffer, bytearray):
                buffer = self._buffer = bytearray(buffer)
            if self._chunks.feed(buffer):
                self._finish(self._chunks.content(), leftover=bool(buffer))
            return
        length = framing.length
        if length is None:  # until the close
            if len(buffer) > MAX_BODY:
                raise BodyError("the answer's body is too large")
            return
        have = len(buffer)
        if have < length:
            return
        if have == length:
            content = bytes(buffer)  # no copy when the buffer is the piece received
        else:
            with memoryview(buffer) as view:
                content = bytes(view[:length])
        self._finish(content, leftover=have > length)

    def _finish(self, content: bytes, *, leftover: bool) -> None:
        framing, answer, headers = self._framing, self._answer, self._headers
        assert framing is not None and answer is not None and headers is not None
        self._buffer = b""
        self.reusable = framing.reusable and not leftover and not self.closed
        answer.set_result((self._status, headers, content))

    def _fail(self, error: ExchangeError) -> None:
        answer = self._answer
        self.abort()
        if answer is not None and not answer.done():
            answer.set_exception(error)
