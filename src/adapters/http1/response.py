"""Reading an HTTP/1.x answer: its head (``parse_head``), the framing of its body
(``BodyFraming``), a chunked body (``ChunkedBody``) and its content coding (``decoded``).

Failures are ``HeadError`` (the head is not HTTP: the exchange says ``Dropped``) and
``BodyError`` (the body cannot be read: ``BadAnswer``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Mapping
from typing import TypeVar

MAX_HEAD = 64 * 1024  # bytes of a head, trailers included
MAX_BODY = 256 * 1024 * 1024  # bytes of a body, on the wire and decoded
MAX_CHUNK_LINE = 4096  # a chunk's size line with its extensions


class HeadError(Exception):
    """The answer's head is not HTTP/1.x (or too large)."""


class BodyError(Exception):
    """The answer's body cannot be read as its head announced it."""


class Headers(Mapping[str, str]):
    """An answer's header fields, looked up whatever the case of the name; repeated fields
    are joined with ``", "``. Iterating gives the names in lower case."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields  # keyed by lower-case name

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()]

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._fields.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"Headers({sorted(self._fields)})"  # names only: values may be secrets


def parse_head(head: bytes | bytearray) -> tuple[int, int, Headers]:
    """Status, minor HTTP version (0 or 1) and headers of a head without its blank line."""
    text = head.decode("latin-1")
    if "\r\n " in text or "\r\n\t" in text:  # obsolete folded lines: one line each
        text = _unfolded(text)
    lines = text.split("\r\n")
    status = _STATUS_LINES.get(lines[0])
    if status is None:
        status = _kept(_STATUS_LINES, lines[0], _status(lines[0]))
    fields: dict[str, str] = {}
    for line in lines[1:]:
        field = _FIELD_LINES.get(line)
        if field is None:
            field = _field(line)
            if field[0] not in VARYING:
                _kept(_FIELD_LINES, line, field)
        name, value = field
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return status[0], status[1], Headers(fields)


# An engine sends the same status lines and mostly the same header lines over and over:
# each is parsed once and kept (a few hundred at most, forgotten all at once when full).
KEPT_LINES = 512
VARYING = frozenset({"date", "content-length", "etag", "last-modified", "expires", "age"})
_STATUS_LINES: dict[str, tuple[int, int]] = {}
_FIELD_LINES: dict[str, tuple[str, str]] = {}
_STATUS = re.compile(r"HTTP/1\.([01]) ([0-9]{3})(?: |$)")
_T = TypeVar("_T")


def _kept(lines: dict[str, _T], line: str, parsed: _T) -> _T:
    if len(lines) >= KEPT_LINES:
        lines.clear()
    lines[line] = parsed
    return parsed


def _status(line: str) -> tuple[int, int]:
    found = _STATUS.match(line)
    if found is None:
        raise HeadError("the status line is not HTTP/1.x")
    return int(found[2]), int(found[1])


def _field(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon or not name or name[-1] in " \t":
        raise HeadError("a header line is not a field")
    return name.lower(), value.strip(" \t")


def _unfolded(text: str) -> str:
    lines = text.split("\r\n")
    if len(lines) < 2 or lines[1][:1] in (" ", "\t"):
        raise HeadError("a header starts with white space")
    kept = lines[:1]
    for line in lines[1:]:
        if line[:1] in (" ", "\t"):
            kept[-1] = f"{kept[-1]} {line.strip()}"
        else:
            kept.append(line)
    return "\r\n".join(kept)


class BodyFraming:
    """How an answer's body ends, from its head: ``length`` bytes (0: none), ``chunked``,
    or at the connection's close (``length`` None); ``reusable``: the connection may carry
    another request afterwards."""

    __slots__ = ("chunked", "length", "reusable")

    def __init__(self, status: int, version: int, headers: Headers, head_only: bool) -> None:
        connection = (headers.get("connection") or "").lower()
        self.reusable = ("close" not in connection if version == 1
                         else "keep-alive" in connection)
        self.chunked = False
        self.length: int | None = 0
        if head_only or status in (204, 304) or status < 200:
            return
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.strip().lower() != "chunked":
                raise BodyError("the answer has a transfer coding other than chunked")
            self.chunked = True
            if "content-length" in headers:  # both: the length is ignored, the link is not safe
                self.reusable = False
            return
        declared = headers.get("content-length")
        if declared is None:
            self.length = None
            self.reusable = False
            return
        values = {v.strip() for v in declared.split(",")}
        value = values.pop() if len(values) == 1 else ""
        if not value.isdigit() or not value.isascii():
            raise HeadError("the Content-Length is not a number")
        self.length = int(value)
        if self.length > MAX_BODY:
            raise BodyError("the answer's body is too large")


class ChunkedBody:
    """A chunked body read as it arrives: ``feed`` consumes what it can from the buffer
    and returns True once the last chunk and the trailers are read."""

    __slots__ = ("_left", "_parts", "_size", "_trailers")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._left = -1  # bytes of chunk data (and its CRLF) still to read; -1: a size line
        self._trailers = -1  # bytes of trailers read so far; -1: not there yet

    def content(self) -> bytes:
        return b"".join(self._parts)

    def feed(self, buffer: bytearray) -> bool:
        while buffer:
            if self._trailers >= 0:
                return self._trailer_lines(buffer)
            if self._left < 0:
                end = buffer.find(b"\r\n", 0, MAX_CHUNK_LINE + 2)
                if end < 0:
                    if len(buffer) > MAX_CHUNK_LINE:
                        raise BodyError("a chunk size line is too long")
                    return False
                size_text = bytes(buffer[:end]).partition(b";")[0].strip()
                if not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
                    raise BodyError("a chunk size is not a hexadecimal number")
                size = int(size_text, 16)
                del buffer[: end + 2]
                if size == 0:
                    self._trailers = 0
                    continue
                self._size += size
                if self._size > MAX_BODY:
                    raise BodyError("the answer's body is too large")
                self._left = size + 2
                continue
            if len(buffer) < self._left:  # take the data there is; its CRLF comes later
                take = min(len(buffer), self._left - 2)
                if take > 0:
                    self._parts.append(bytes(buffer[:take]))
                    del buffer[:take]
                    self._left -= take
                return False
            data_end = self._left - 2
            if buffer[data_end:self._left] != b"\r\n":
                raise BodyError("a chunk does not end with CRLF")
            if data_end:
                self._parts.append(bytes(buffer[:data_end]))
            del buffer[: self._left]
            self._left = -1
        return False

    def _trailer_lines(self, buffer: bytearray) -> bool:
        """Trailer fields are read and left out: searchport needs none."""
        while True:
            end = buffer.find(b"\r\n")
            if end < 0:
                if self._trailers + len(buffer) > MAX_HEAD:
                    raise BodyError("the trailers are too large")
                return False
            self._trailers += end + 2
            if self._trailers > MAX_HEAD:
                raise BodyError("the trailers are too large")
            del buffer[: end + 2]
            if end == 0:
                return True


def decoded(content: bytes, coding: str | None) -> bytes:
    """The body with its content coding (gzip, deflate, identity) undone."""
    if coding is None or not content:
        return content
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return content
    if coding in ("gzip", "x-gzip"):
        return _inflate(content, 16 + zlib.MAX_WBITS, members=True)
    if coding == "deflate":  # zlib-wrapped as the standard says; raw deflate as some send
        wbits = zlib.MAX_WBITS if content[0] & 0x0F == 8 and int.from_bytes(
            content[:2], "big") % 31 == 0 else -zlib.MAX_WBITS
        return _inflate(content, wbits, members=False)
    raise BodyError("the answer has a content coding searchport does not read")


def _inflate(data: bytes, wbits: int, *, members: bool) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            inflater = zlib.decompressobj(wbits)
            part = inflater.decompress(data, MAX_BODY + 1 - size)
            size += len(part)
            if size > MAX_BODY or inflater.unconsumed_tail:
                raise BodyError("the answer's body is too large once decompressed")
            parts.append(part)
            if not inflater.eof:
                raise BodyError("the compressed body is cut short")
            data = inflater.unused_data
            if not data or not members:
                break
    except zlib.error:
        raise BodyError("the compressed body is not valid") from None
    return parts[0] if len(parts) == 1 else b"".join(parts)
