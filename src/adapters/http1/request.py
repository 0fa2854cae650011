"""The bytes of one HTTP/1.1 request: its request line, the client's own headers, the
caller's headers (checked: a value cannot break the head) and the body, written at once."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from searchport import __version__

# headers the client writes itself from the request: a caller's would contradict them
FRAMING = frozenset({"host", "content-length", "transfer-encoding", "connection"})
# sent unless the caller gives its own: compressed answers are asked for, as remote
# engines (Elasticsearch's http.compression) save the most bandwidth that way
DEFAULTS = {"user-agent": f"searchport/{__version__}", "accept-encoding": "gzip, deflate"}
# methods whose request always declares a body length, even an empty one
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# what may stand in a request target as is; anything else is percent-encoded (as a browser
# would: non-ASCII text, spaces, control characters)
TARGET_SAFE = "!#$%&'()*+,/:;=?@[]~"
HEADER_CACHE_SIZE = 256
_BAD_NAME = frozenset(" \t\r\n:\x00")
_BAD_VALUE = ("\r", "\n", "\x00")


def request_target(url: str, origin: str) -> str:
    """The target (path and query) of a URL on ``origin``; ``ValueError`` for another origin."""
    if not url.startswith(origin):
        raise ValueError("the URL is not on this exchange's origin")
    target = url[len(origin):]
    if not target:
        return "/"
    if target[0] not in "/?":
        raise ValueError("the URL is not on this exchange's origin")
    if target[0] == "?":
        target = "/" + target
    if "#" in target:  # a fragment is never sent
        target = target[: target.index("#")]
    if not (target.isascii() and target.isprintable()) or " " in target:
        target = quote(target, safe=TARGET_SAFE)
    return target


def header_block(headers: Mapping[str, str]) -> bytes:
    """The caller's headers and the client's defaults, one ``Name: value`` line each;
    ``ValueError`` for a name or value that is not one line, or a framing header."""
    lines = []
    given = set()
    for name, value in headers.items():
        lowered = name.lower()
        if not name or _BAD_NAME.intersection(name):
            raise ValueError("a request header name is not a single token")
        if any(bad in value for bad in _BAD_VALUE):
            raise ValueError(f"the request header {name} has a line break in its value")
        if lowered in FRAMING:
            raise ValueError(f"the request header {name} is written by the client itself")
        given.add(lowered)
        lines.append(f"{name}: {value.strip()}\r\n")
    lines.extend(f"{name}: {value}\r\n" for name, value in DEFAULTS.items()
                 if name not in given)
    return "".join(lines).encode("utf-8")


class RequestWriter:
    """The request bytes for one origin; the rendered header blocks are kept, as engines
    are sent the same few header sets over and over."""

    __slots__ = ("_blocks", "_host_line", "_origin")

    def __init__(self, origin: str, host_header: str) -> None:
        self._origin = origin
        self._host_line = f"Host: {host_header}\r\n"
        self._blocks: dict[tuple[tuple[str, str], ...], bytes] = {}

    def render(self, method: str, url: str, headers: Mapping[str, str],
               body: bytes | None) -> bytes:
        """Head and body as one buffer; ``ValueError`` before anything is sent when the
        request cannot be written as asked."""
        if not method.isalpha() or not method.isascii():
            raise ValueError("the request method is not a token")
        key = tuple(headers.items())
        block = self._blocks.get(key)
        if block is None:
            block = header_block(headers)
            if len(self._blocks) >= HEADER_CACHE_SIZE:
                self._blocks.clear()
            self._blocks[key] = block
        target = request_target(url, self._origin)
        if body is None:
            length = "Content-Length: 0\r\n" if method in BODY_METHODS else ""
            body = b""
        else:
            length = f"Content-Length: {len(body)}\r\n"
        line = f"{method} {target} HTTP/1.1\r\n{self._host_line}{length}"
        return b"".join((line.encode("ascii"), block, b"\r\n", body))
