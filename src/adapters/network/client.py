"""``EngineClient``: the ``Exchange`` that speaks HTTP to one engine origin (one TLS
setting, one proxy or none), through libcurl (pycurl) driven by the event loop.

libcurl does the HTTP: it writes the request, reads the answer (its framing, chunked
bodies, every content coding it was built with), keeps the keep-alive connections and
decides when one may be used again, tunnels through a proxy, checks TLS and keeps the
deadline. This module drives libcurl's "multi socket" interface as libcurl documents it
(``CURLMOPT_SOCKETFUNCTION``, ``CURLMOPT_TIMERFUNCTION``, ``curl_multi_socket_action``):
a socket is the loop's reader or writer from the moment libcurl asks for it
(``POLL_IN``/``POLL_OUT``) until libcurl says ``POLL_REMOVE``, and libcurl's one timer is
one ``call_later``. Nothing runs in a thread of its own and nothing here touches a socket.

One libcurl "multi" per event loop, made on first use: at most ``max_connections``
connections to the origin (libcurl queues the other transfers), a connection idle for
``keepalive_seconds`` (whole seconds) not used again, no cookies, no redirects, no proxy
but the one chosen when the client is made (``pools.py``), answers decompressed.
``timeout`` is libcurl's ``CURLOPT_TIMEOUT_MS``: the deadline of the whole exchange, from
waiting in libcurl's queue to the body's last byte. Failures are raised in searchport's
vocabulary (``exchange.py``); a message never carries an address.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import Iterator, Mapping
from functools import cache
from urllib.parse import quote

import pycurl

from searchport import __version__
from searchport.adapters.network.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
    Tls,
)
from searchport.domain.running_loop import running_loop

SYSTEM_TLS = Tls()  # verified against the system's roots
USER_AGENT = f"searchport/{__version__}"
# methods whose requests carry no body unless given one (RFC 9110 defines none for them)
BODILESS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "CONNECT"})
READ_SIZE = 65536  # libcurl's receive buffer: a search answer in one read
URL_SAFE = ":/?#[]@!$&'()*+,;=%~"  # RFC 3986's delimiters and "%": left as they are
MAX_FIELDS = 100  # header fields of an answer's head, as most servers and clients allow
IN, OUT, REMOVE = pycurl.POLL_IN, pycurl.POLL_OUT, pycurl.POLL_REMOVE
# libcurl's codes that not every pycurl release names
E_PROXY = getattr(pycurl, "E_PROXY", 97)
E_WEIRD_SERVER_REPLY = getattr(pycurl, "E_WEIRD_SERVER_REPLY", 8)
# libcurl's codes for a failure before any connection was made (name, TCP, proxy, TLS)
NOT_CONNECTED = frozenset({
    pycurl.E_COULDNT_RESOLVE_PROXY, pycurl.E_COULDNT_RESOLVE_HOST, pycurl.E_COULDNT_CONNECT,
    pycurl.E_SSL_CONNECT_ERROR, pycurl.E_PEER_FAILED_VERIFICATION, pycurl.E_SSL_CERTPROBLEM,
    pycurl.E_SSL_CIPHER, pycurl.E_SSL_CACERT_BADFILE, pycurl.E_SSL_ISSUER_ERROR,
    pycurl.E_SSL_PINNEDPUBKEYNOTMATCH, pycurl.E_SSL_INVALIDCERTSTATUS,
    pycurl.E_SSL_ENGINE_NOTFOUND, pycurl.E_SSL_ENGINE_SETFAILED, pycurl.E_SSL_CRL_BADFILE,
    E_PROXY})
# libcurl's words for its most common codes, for the logs (its own messages name the host)
CAUSES = {
    pycurl.E_COULDNT_RESOLVE_PROXY: "proxy name not resolved",
    pycurl.E_COULDNT_RESOLVE_HOST: "host name not resolved",
    pycurl.E_COULDNT_CONNECT: "connection refused or unreachable",
    pycurl.E_PARTIAL_FILE: "body cut short",
    pycurl.E_OPERATION_TIMEDOUT: "timed out",
    pycurl.E_SSL_CONNECT_ERROR: "TLS handshake failed",
    pycurl.E_GOT_NOTHING: "closed without an answer",
    pycurl.E_SEND_ERROR: "send failed",
    pycurl.E_RECV_ERROR: "receive failed",
    pycurl.E_BAD_CONTENT_ENCODING: "bad content encoding",
    pycurl.E_PEER_FAILED_VERIFICATION: "certificate not trusted",
    E_WEIRD_SERVER_REPLY: "not an HTTP answer",
    pycurl.E_UNSUPPORTED_PROTOCOL: "not an HTTP answer",
    E_PROXY: "proxy refused the tunnel",
}


class Headers(Mapping[str, str]):
    """An answer's header fields, looked up case-insensitively (a repeated field: its
    first value), read from the lines libcurl handed over when first looked at."""

    __slots__ = ("_lines", "_values")

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self._values: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        values = self._values
        if values is None:
            values = self._values = {}
            for line in self._lines:
                name, _, value = line.decode("latin-1").partition(":")
                values.setdefault(name.strip().lower(), value.strip())
        return values

    def __getitem__(self, name: str) -> str:
        return self._read()[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._read()

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


class _Transfer:
    """A libcurl handle set up for one kind of request (its method, with or without a
    body), kept for the next request of that kind: only the URL, the headers, the body and
    the deadline change. libcurl hands it the answer's header lines and body pieces."""

    __slots__ = ("curl", "fields", "future", "pieces", "too_many", "whole")

    def __init__(self, curl: pycurl.Curl) -> None:
        self.curl = curl
        self.fields: list[bytes] = []  # of the last head so far
        self.whole = False  # the last head was read to its empty line
        self.too_many = False  # refused: more than MAX_FIELDS fields
        self.pieces: list[bytes] = []
        self.future: asyncio.Future[None] | None = None
        curl.setopt(pycurl.HEADERFUNCTION, self._header)
        curl.setopt(pycurl.WRITEFUNCTION, self.pieces.append)

    def _header(self, line: bytes) -> int | None:
        """libcurl's ``HEADERFUNCTION``: one line of a head. libcurl hands over the heads
        of every answer it reads (interim 1xx ones, a proxy's to CONNECT, then trailers):
        as its documentation says, a status line begins each head."""
        if line.startswith(b"HTTP/"):
            self.fields.clear()
            self.whole = False
        elif line in (b"\r\n", b"\n"):
            self.whole = True
        elif not self.whole:
            if len(self.fields) == MAX_FIELDS:
                self.too_many = True
                return 0  # fewer bytes taken than given: libcurl ends the transfer
            self.fields.append(line)
        return None

    def answer(self) -> Answer:
        """The answer read, the handle emptied for its next request."""
        pieces = self.pieces
        content = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        pieces.clear()
        fields, self.fields, self.whole = self.fields, [], False
        return Answer(self.curl.getinfo(pycurl.RESPONSE_CODE), Headers(fields), content)

    def failure(self, code: int | None) -> ExchangeError | None:
        """What went wrong, ``code`` being libcurl's (None: the transfer succeeded)."""
        if self.too_many:
            return Dropped(f"more than {MAX_FIELDS} header fields")
        if code is None:
            # an answer whose head the connection's close ended is not an answer
            return None if self.whole else Dropped("the connection closed inside the head")
        if self.curl.getinfo(pycurl.HTTP_CONNECTCODE) not in (0, 200):
            # a proxy refused the tunnel: the head read was its own, never the engine's
            return Refused(f"curl error {code} (proxy refused the tunnel)")
        name = f"curl error {code}" + (f" ({CAUSES[code]})" if code in CAUSES else "")
        if code == pycurl.E_OPERATION_TIMEDOUT:
            return TimedOut(name)
        if code in NOT_CONNECTED:
            return Refused(name)
        if self.whole:  # the head was read: the engine may have done the work
            return BadAnswer(name)
        return Dropped(name)  # closed, reset, too large or not HTTP before the head


class _Multi:
    """libcurl's multi interface on one event loop: the sockets libcurl waits on watched
    by the loop, its timer kept as one ``call_later``, finished transfers handed to their
    futures."""

    def __init__(self, loop: asyncio.AbstractEventLoop, max_connections: int) -> None:
        self.loop = loop
        multi = self.multi = pycurl.CurlMulti()
        multi.setopt(pycurl.M_SOCKETFUNCTION, self._socket)
        multi.setopt(pycurl.M_TIMERFUNCTION, self._timer)
        multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, max_connections)
        multi.setopt(pycurl.M_MAX_TOTAL_CONNECTIONS, max_connections)
        multi.setopt(pycurl.M_MAXCONNECTS, max_connections)
        self.transfers: dict[pycurl.Curl, _Transfer] = {}
        self._watched: dict[int, int] = {}  # the sockets libcurl waits on: what for
        self._wake: asyncio.TimerHandle | None = None
        self._closed = False

    def _socket(self, what: int, fd: int, multi: object, data: object) -> None:
        """libcurl's ``SOCKETFUNCTION``: what it now waits for on ``fd``."""
        loop = self.loop
        before = self._watched.pop(fd, 0)
        now = 0 if what == REMOVE else what
        if now:
            self._watched[fd] = now
        if before & IN and not now & IN:
            loop.remove_reader(fd)
        if before & OUT and not now & OUT:
            loop.remove_writer(fd)
        if now & IN and not before & IN:
            loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        if now & OUT and not before & OUT:
            loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)

    def _timer(self, ms: int) -> None:
        """libcurl's ``TIMERFUNCTION``: when it next wants ``socket_action`` without a
        socket (-1: never)."""
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        if ms >= 0 and not self._closed:
            self._wake = self.loop.call_later(ms / 1000, self._woken)

    def _woken(self) -> None:
        self._wake = None
        self._act(pycurl.SOCKET_TIMEOUT, 0)

    def _act(self, fd: int, events: int) -> None:
        multi = self.multi
        # a socket libcurl let go of while its event waited in this turn of the loop is
        # refused (CURLM_BAD_SOCKET): nothing to do for it
        with contextlib.suppress(pycurl.error):
            multi.socket_action(fd, events)
        while True:
            queued, finished, failed = multi.info_read()
            for curl in finished:
                self._finish(curl, None)
            for curl, code, _message in failed:
                self._finish(curl, code)
            if not queued:
                return

    def _finish(self, curl: pycurl.Curl, code: int | None) -> None:
        self.multi.remove_handle(curl)
        transfer = self.transfers.pop(curl, None)
        future = transfer.future if transfer is not None else None
        if transfer is None or future is None or future.done():
            return
        failure = transfer.failure(code)
        if failure is None:
            future.set_result(None)
        else:
            future.set_exception(failure)

    def start(self, transfer: _Transfer) -> asyncio.Future[None]:
        """The transfer added: libcurl sets its timer to begin it (with every other one
        added in this turn of the loop)."""
        future = transfer.future = self.loop.create_future()
        self.transfers[transfer.curl] = transfer
        self.multi.add_handle(transfer.curl)
        return future

    def abandon(self, transfer: _Transfer) -> None:
        """A transfer its caller stopped waiting for: taken out of libcurl, which closes
        its connection if it was in the middle of it."""
        if self.transfers.pop(transfer.curl, None) is not None:
            with contextlib.suppress(pycurl.error):
                self.multi.remove_handle(transfer.curl)

    def close(self) -> None:
        """Every transfer failed and taken out, the loop's watches ended, libcurl's
        connections closed."""
        self._closed = True
        for transfer in list(self.transfers.values()):
            self.abandon(transfer)
            if transfer.future is not None and not transfer.future.done():
                transfer.future.set_exception(Dropped("the client was closed"))
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        watched, self._watched = self._watched, {}
        with contextlib.suppress(Exception):  # the loop may be closed already
            for fd in watched:
                self.loop.remove_reader(fd)
                self.loop.remove_writer(fd)
        self.multi.close()


class EngineClient:
    """Exchanges with one origin (``http://host:port``), through ``proxy`` when given."""

    def __init__(self, origin: str, *, max_connections: int, keepalive_seconds: float,
                 tls: Tls = SYSTEM_TLS, proxy: str | None = None) -> None:
        """``tls``: verification and a CA to trust besides the system's; ``proxy``: an
        http:// proxy URL, its credentials (``http://user:pass@host:port``) sent as
        ``Proxy-Authorization``."""
        self.origin = origin.rstrip("/")
        self._tls = tls
        self._max_connections = max_connections
        self._keepalive = max(1, round(keepalive_seconds))  # libcurl counts whole seconds
        self._proxy = proxy
        self._multi: _Multi | None = None
        self._spare: dict[tuple[str, bool], list[_Transfer]] = {}  # by (method, body)

    def _multi_here(self) -> _Multi:
        multi, loop = self._multi, running_loop()
        if multi is None or multi.loop is not loop:
            if multi is not None:
                self._close_multi(multi)
            multi = self._multi = _Multi(loop, self._max_connections)
        return multi

    def _close_multi(self, multi: _Multi) -> None:
        spare, self._spare = self._spare, {}
        multi.close()
        for transfers in spare.values():
            for transfer in transfers:
                transfer.curl.close()

    def _transfer(self, method: str, with_body: bool) -> _Transfer:
        """An idle handle for ``method`` with or without a body, else a new one."""
        spare = self._spare.get((method, with_body))
        if spare:
            return spare.pop()
        curl = pycurl.Curl()
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        curl.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        curl.setopt(pycurl.FOLLOWLOCATION, 0)
        curl.setopt(pycurl.USERAGENT, USER_AGENT)
        curl.setopt(pycurl.ACCEPT_ENCODING, "")  # every coding this libcurl decodes
        curl.setopt(pycurl.MAXAGE_CONN, self._keepalive)
        curl.setopt(pycurl.BUFFERSIZE, READ_SIZE)
        curl.setopt(pycurl.PROXY, self._proxy or "")  # "": none, not the environment's
        if not self._tls.verify:
            curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        else:
            # the system's roots by content: the bundled libcurl's own path may not exist
            roots = _system_roots() + b"\n" + (self._tls.ca_pem or b"")
            if roots.strip():
                curl.setopt(pycurl.CAINFO_BLOB, roots)
        if method == "GET" and not with_body:
            curl.setopt(pycurl.HTTPGET, 1)
        elif method == "HEAD" and not with_body:
            curl.setopt(pycurl.NOBODY, 1)
        elif with_body:
            curl.setopt(pycurl.POST, 1)
            if method != "POST":
                curl.setopt(pycurl.CUSTOMREQUEST, method)
        else:
            curl.setopt(pycurl.CUSTOMREQUEST, method)
        return _Transfer(curl)

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """The whole answer, decompressed. ``ValueError`` (nothing sent) for a URL on
        another origin or a line break in a header."""
        if not url.startswith(self.origin) or url[len(self.origin):][:1] not in ("", "/", "?"):
            raise ValueError("the URL is not on this client's origin")
        with_body = body is not None or method not in BODILESS
        lines = _header_lines(headers, with_body)
        multi = self._multi_here()
        transfer = self._transfer(method, with_body)
        curl = transfer.curl
        try:
            curl.setopt(pycurl.URL, _sendable(url))
            curl.setopt(pycurl.HTTPHEADER, lines)
            if with_body:
                curl.setopt(pycurl.POSTFIELDS, body or b"")
            curl.setopt(pycurl.TIMEOUT_MS, max(1, round(timeout * 1000)))
        except (pycurl.error, UnicodeEncodeError):
            curl.close()
            raise ValueError("a request that cannot be sent") from None
        queued = len(multi.transfers) >= self._max_connections
        try:
            if not queued:
                await multi.start(transfer)
            else:
                # every connection busy: libcurl queues the transfer, and its releases
                # before 8.23 do not count that wait against CURLOPT_TIMEOUT_MS, as its
                # documentation says they should
                async with asyncio.timeout(timeout):
                    await multi.start(transfer)
        except BaseException as exc:
            multi.abandon(transfer)
            curl.close()
            if isinstance(exc, TimeoutError):
                raise TimedOut("no complete answer in time") from None
            raise
        answer = transfer.answer()
        self._spare.setdefault((method, with_body), []).append(transfer)
        return answer

    async def aclose(self) -> None:
        multi, self._multi = self._multi, None
        if multi is not None:
            self._close_multi(multi)


def _header_lines(headers: Mapping[str, str], with_body: bool) -> list[str]:
    """The request's header lines for libcurl, with the ones libcurl would add on its own
    and an engine must not see blanked; ``ValueError`` for one that cannot be sent."""
    lines = []
    for name, value in headers.items():
        if (not name or any(c in name for c in ":\r\n\0 \t")
                or any(c in value for c in "\r\n\0")):
            raise ValueError("a header that cannot be sent")
        lines.append(f"{name}: {value}")
    names = {name.lower() for name in headers}
    lines.append("Expect:")
    if with_body and "content-type" not in names:
        lines.append("Content-Type:")
    if "accept" not in names:
        lines.append("Accept:")
    return lines


@cache
def _system_roots() -> bytes:
    """The system's trusted certificates (the PEM file the standard library's OpenSSL
    reads), empty when there is none."""
    paths = ssl.get_default_verify_paths()
    for path in (paths.cafile, paths.openssl_cafile):
        if path and os.path.isfile(path):
            with open(path, "rb") as file:
                return file.read()
    return b""


def _sendable(url: str) -> str:
    """The URL with what cannot travel in a request line percent-encoded (non-ASCII as
    UTF-8, spaces), as browsers and other HTTP clients send such a path; what is already
    percent-encoded and every delimiter kept."""
    if url.isascii() and " " not in url:
        return url
    return quote(url, safe=URL_SAFE)
